import type { Metadata } from "next";
import Link from "next/link";

// Its own title: without one the tab keeps the title of the page that called notFound() (or the
// page navigated from), e.g. "Overview".
export const metadata: Metadata = { title: "Not found" };

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
