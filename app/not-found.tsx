import Link from "next/link";

// One not-found page for a missing page, a tenant you do not belong to and an operator page you
// may not open: none of them may tell which it was.
export default function NotFound() {
  return (
    <main className="auth-page">
      <div className="card auth-card">
        <h1>Page not found</h1>
        <p className="muted">There is nothing at this address, or you do not have access to it.</p>
        <Link className="btn" href="/">
          Go to your dashboard
        </Link>
      </div>
    </main>
  );
}
