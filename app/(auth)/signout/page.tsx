import type { Metadata } from "next";
import Link from "next/link";
import { signOutAction } from "./actions";

export const metadata: Metadata = { title: "Sign out" };

// The header signs out in one click; this page is for an address typed or bookmarked (a GET must
// not sign anyone out).
export default function SignOutPage() {
  return (
    <main className="auth-page">
      <div className="card auth-card">
        <h1>Sign out</h1>
        <p className="muted">You will need your password to sign in again.</p>
        <form action={signOutAction}>
          <button className="btn btn-primary btn-block" type="submit">
            Sign out
          </button>
        </form>
        <p className="muted">
          <Link href="/">Back to Bulkhead</Link>
        </p>
      </div>
    </main>
  );
}
