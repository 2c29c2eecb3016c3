import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { myAccount } from "../../../server/web/session.ts";

// The console exists only for platform operators; others get the ordinary not-found page.
export default async function OpsLayout({ children }: { children: ReactNode }) {
  const me = await myAccount();
  if (!me.isOperator) notFound();
  return children;
}
