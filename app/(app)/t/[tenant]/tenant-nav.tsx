import { myAccount } from "../../../../server/web/session.ts";
import { TenantNavLinks } from "./tenant-nav-links";

// The tenant's pages, under its header. A server component that reads the role itself (myAccount
// is cached per request, so no extra query), so every page gets the admin-only tabs without
// passing anything; the settings layout still refuses non-admins on its own.
export async function TenantNav({ tenantId }: { tenantId: string }) {
  const me = await myAccount();
  const isAdmin = me.tenants.some((t) => t.id === tenantId && t.role === "admin");
  const links = [
    { href: `/t/${tenantId}`, label: "Overview" },
    { href: `/t/${tenantId}/sequences`, label: "Sequences" },
    { href: `/t/${tenantId}/instances`, label: "Instances" },
    { href: `/t/${tenantId}/breakers`, label: "Breakers" },
    ...(isAdmin ? [{ href: `/t/${tenantId}/settings`, label: "Settings" }] : []),
  ];
  return <TenantNavLinks links={links} />;
}
