import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { auth } from "../../../server/auth/index.ts";
import { identityOf, readSessionUser } from "../../../server/auth/sessions.ts";
import { services } from "../../../server/services.ts";
import { safeReturnPath } from "../../../server/web/return-path.ts";
import { SignInForm } from "./sign-in-form";

export const metadata: Metadata = { title: "Sign in" };

/** Why the user is here, when a page sent them on purpose (`?notice=`): the account page's changes end every session. */
const NOTICES: Record<string, string> = {
  "password-changed": "Password changed: sign in with your new password.",
  "signed-out-everywhere": "Signed out everywhere: every session of your account has ended.",
};

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string; notice?: string }> }) {
  const query = await searchParams;
  const callbackUrl = safeReturnPath(query.callbackUrl);
  const notice = typeof query.notice === "string" && Object.hasOwn(NOTICES, query.notice) ? NOTICES[query.notice] : null;
  // Only a live session skips the form: an ended one would be sent back here by every page.
  const identity = identityOf(await auth());
  if (await readSessionUser(services().prisma, identity)) redirect(callbackUrl);
  return (
    <main className="auth-page">
      <div className="card auth-card">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" /> Bulkhead
        </div>
        <h1>Sign in</h1>
        {notice && (
          <p className="alert alert-ok" role="status">
            {notice}
          </p>
        )}
        <p className="muted">Use your Bulkhead account.</p>
        <SignInForm callbackUrl={callbackUrl} />
      </div>
    </main>
  );
}
