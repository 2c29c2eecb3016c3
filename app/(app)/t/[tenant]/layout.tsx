import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { myAccount } from "../../../../server/web/session.ts";

// Tenant pages exist only for the tenant's members; anyone else gets the ordinary not-found page.
export default async function TenantLayout({ children, params }: { children: ReactNode; params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  if (!me.tenants.some((t) => t.id === tenant)) notFound();
  return children;
}
