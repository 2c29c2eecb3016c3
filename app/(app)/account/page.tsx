import type { Metadata } from "next";
import Link from "next/link";
import { myAccount } from "../../../server/web/session.ts";
import { ChangePasswordForm } from "./change-password-form";
import { SessionsPanel } from "./sessions-panel";
import { Prefetched, query } from "../../../server/web/prefetch.tsx";

export const metadata: Metadata = { title: "Account" };

// The signed-in user's own account: who they are here, their password, and where they are signed in.
export default async function AccountPage() {
  const me = await myAccount();
  return (
    <main className="page">
      <div className="page-header">
        <h1>Account</h1>
        <p>{me.email} · your password and the browsers and devices you are signed in on.</p>
      </div>
      <section className="card" aria-labelledby="profile-heading">
        <h2 id="profile-heading">Your account</h2>
        <dl className="facts">
          <dt>Email</dt>
          <dd>{me.email}</dd>
          {me.isOperator && (
            <>
              <dt>Platform</dt>
              <dd>
                <span className="badge badge-accent">operator</span>
              </dd>
            </>
          )}
          <dt>Tenants</dt>
          <dd>
            {me.tenants.length === 0 ? (
              <span className="muted">None yet: a tenant admin can invite you.</span>
            ) : (
              <ul className="account-tenants">
                {me.tenants.map((t) => (
                  <li key={t.id}>
                    <Link prefetch={false} href={`/t/${t.id}`}>{t.name}</Link> <span className="badge">{t.role}</span>
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </dl>
      </section>
      <section className="card" aria-labelledby="password-heading">
        <h2 id="password-heading">Change password</h2>
        <p className="muted">Changing it signs you out everywhere, this browser included: you then sign in with the new password.</p>
        <ChangePasswordForm email={me.email} />
      </section>
      <section className="card" aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Sessions</h2>
        <Prefetched queries={(trpc) => [query(trpc.account.sessions.queryOptions())]}>
          <SessionsPanel />
        </Prefetched>
      </section>
    </main>
  );
}
