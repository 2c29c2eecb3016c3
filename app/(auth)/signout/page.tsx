import type { Metadata } from "next";
import Link from "next/link";
import { signOut } from "../../../server/auth/index.ts";

export const metadata: Metadata = { title: "Sign out" };

async function signOutAction() {
  "use server";
  await signOut({ redirectTo: "/signin" });
}

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
