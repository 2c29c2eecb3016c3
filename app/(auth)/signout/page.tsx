import type { Metadata } from "next";
import Link from "next/link";
import { auth, signOut } from "../../../server/auth/index.ts";
import { endSession, identityOf } from "../../../server/auth/sessions.ts";
import { services } from "../../../server/services.ts";

export const metadata: Metadata = { title: "Sign out" };

async function signOutAction() {
  "use server";
  // The session's row goes first: a copy of the token is worthless from here on.
  const identity = identityOf(await auth());
  if (identity) await endSession(services().prisma, identity.sessionId);
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
