import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { myAccount } from "../../../../../server/web/session.ts";

// Settings are for the tenant's admins. A member gets the ordinary not-found page, the same as
// for a missing URL; the procedures behind the page check the role again on every call.
export default async function SettingsLayout({ children, params }: { children: ReactNode; params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  if (me.tenants.find((t) => t.id === tenant)?.role !== "admin") notFound();
  return children;
}
