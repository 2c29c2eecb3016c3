import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { myAccount } from "../../../../server/web/session.ts";
import { TenantNav } from "./tenant-nav";

// Tenant pages exist only for the tenant's members; anyone else gets the ordinary not-found page.
// For members, the tenant's header (who you are here, and the tabs) is drawn here, once; each page
// draws only its own heading and content. The header stays outside <main>, which is the page's.
export default async function TenantLayout({ children, params }: { children: ReactNode; params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  if (!current) notFound();
  const isAdmin = current.role === "admin";
  return (
    <>
      <div className="tenant-header">
        <TenantNav tenantId={tenant} isAdmin={isAdmin} />
        <p className="tenant-header-who">
          Tenant <code>{tenant}</code> · you are {isAdmin ? "an admin" : "a member"}
        </p>
      </div>
      {children}
    </>
  );
}
