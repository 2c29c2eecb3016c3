import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { auth } from "../../../../server/auth/index.ts";
import { identityOf, readSessionUser } from "../../../../server/auth/sessions.ts";
import { INVALID_INVITATION, INVITE_PATH_PREFIX, viewInvitation, type InvitationView } from "../../../../server/control/invitations.ts";
import { services } from "../../../../server/services.ts";
import { acceptAction, declineAction, signOutAndReturnAction } from "./actions";
import { NewAccountForm } from "./new-account-form";

export const metadata: Metadata = { title: "Invitation" };

// The page an invitation link opens, signed in or not (it is outside the signed-in (app) group).
// A token that cannot be used, whatever the reason, gets one page: the same words, no hint of
// whether it was unknown, expired, revoked, replaced or used.
export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  // auth() first: it reads the cookies, which makes the page dynamic before services() is needed.
  const identity = identityOf(await auth());
  const [invitation, me] = await Promise.all([
    viewInvitation(services().prisma, token),
    readSessionUser(services().prisma, identity),
  ]);
  if (!invitation) {
    return (
      <Card title="Invitation not valid">
        <p>{INVALID_INVITATION}.</p>
        <p className="muted">Ask whoever invited you for a new link.</p>
        <Link className="btn" href="/">
          Go to Bulkhead
        </Link>
      </Card>
    );
  }
  const hidden = <input type="hidden" name="token" value={token} />;
  const facts = <InvitationFacts invitation={invitation} />;

  if (me && me.email === invitation.email) {
    return (
      <Card title={`Join ${invitation.tenantName}`}>
        {facts}
        <div className="instance-actions">
          <form action={acceptAction}>
            {hidden}
            <button className="btn btn-primary" type="submit">
              Accept
            </button>
          </form>
          <form action={declineAction}>
            {hidden}
            <button className="btn" type="submit">
              Decline
            </button>
          </form>
        </div>
      </Card>
    );
  }

  if (me) {
    return (
      <Card title={`Join ${invitation.tenantName}`}>
        {facts}
        <div className="alert alert-error" role="alert">
          This invitation is for {invitation.email}. You are signed in as {me.email}: sign out, then sign in as {invitation.email} to accept.
        </div>
        <form action={signOutAndReturnAction}>
          {hidden}
          <button className="btn btn-primary btn-block" type="submit">
            Sign out
          </button>
        </form>
      </Card>
    );
  }

  // Signed out: both ways are offered to everyone, so the page says nothing about whether the
  // address has an account (creating one for an address that has answers that it does).
  const back = encodeURIComponent(`${INVITE_PATH_PREFIX}${token}`);
  return (
    <Card title={`Join ${invitation.tenantName}`}>
      {facts}
      <Link className="btn btn-primary btn-block" href={`/signin?callbackUrl=${back}`}>
        Sign in to accept
      </Link>
      <h2 className="invite-new-heading">New to Bulkhead? Choose a password and accept</h2>
      <NewAccountForm token={token} email={invitation.email} />
    </Card>
  );
}

function Card({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth-page">
      <div className="card auth-card">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" /> Bulkhead
        </div>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

function InvitationFacts({ invitation }: { invitation: InvitationView }) {
  return (
    <>
      <p>
        You are invited to join <strong>{invitation.tenantName}</strong> as {invitation.role === "admin" ? "an admin" : "a member"}.
      </p>
      <dl className="facts invite-facts">
        <dt>Tenant</dt>
        <dd>{invitation.tenantName}</dd>
        <dt>Role</dt>
        <dd>{invitation.role}</dd>
        <dt>For</dt>
        <dd>{invitation.email}</dd>
        <dt>Expires</dt>
        <dd>
          <time dateTime={invitation.expiresAt.toISOString()}>{invitation.expiresAt.toUTCString()}</time>
        </dd>
      </dl>
    </>
  );
}
