import Link from "next/link";
import type { ReactNode } from "react";
import { myAccount } from "../../server/web/session.ts";
import { TenantSwitcher } from "../_components/tenant-switcher";
import { signOutAction } from "../(auth)/signout/actions";

// The shell of every signed-in page: brand, tenant switcher, console links, the account page and sign-out.
// Its links do not prefetch: on every page load they would each render their page on the server
// (the console benchmark counted 20 prefetches a load with the tenant tabs), competing with the
// page's own data requests; a click renders the one page asked for.
export default async function AppLayout({ children }: { children: ReactNode }) {
  const me = await myAccount();
  return (
    <>
      <header className="topbar">
        <Link prefetch={false} className="brand" href="/">
          <span className="brand-mark" aria-hidden="true" /> Bulkhead
        </Link>
        <TenantSwitcher tenants={me.tenants} />
        <nav className="nav" aria-label="Main">
          {me.isOperator && <Link prefetch={false} href="/ops">Operator console</Link>}
          {me.isOperator && <Link prefetch={false} href="/ops/breakers">Breakers</Link>}
          {me.isOperator && <Link prefetch={false} href="/ops/fairness">Fairness</Link>}
          {me.isOperator && <Link prefetch={false} href="/ops/resources">Resources</Link>}
          {me.isOperator && <Link prefetch={false} href="/ops/workers">Workers</Link>}
          {me.isOperator && <Link prefetch={false} href="/ops/audit">Audit log</Link>}
        </nav>
        <span className="topbar-spacer" />
        <span className="topbar-user">{me.email}</span>
        <Link prefetch={false} className="btn" href="/account">
          Account
        </Link>
        <form action={signOutAction}>
          <button className="btn" type="submit">
            Sign out
          </button>
        </form>
      </header>
      {children}
    </>
  );
}
