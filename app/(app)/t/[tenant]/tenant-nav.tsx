import { TenantNavLinks } from "./tenant-nav-links";

// The tenant's tabs, drawn once by the tenant layout. Settings is offered to admins only; the
// settings layout still refuses non-admins on its own.
export function TenantNav({ tenantId, isAdmin }: { tenantId: string; isAdmin: boolean }) {
  const links = [
    { href: `/t/${tenantId}`, label: "Overview" },
    { href: `/t/${tenantId}/sequences`, label: "Sequences" },
    { href: `/t/${tenantId}/instances`, label: "Instances" },
    { href: `/t/${tenantId}/schedules`, label: "Schedules" },
    { href: `/t/${tenantId}/approvals`, label: "Approvals" },
    { href: `/t/${tenantId}/workers`, label: "Workers" },
    { href: `/t/${tenantId}/failed`, label: "Failed" },
    { href: `/t/${tenantId}/breakers`, label: "Breakers" },
    ...(isAdmin ? [{ href: `/t/${tenantId}/settings`, label: "Settings" }] : []),
  ];
  return <TenantNavLinks links={links} />;
}
