import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { myAccount } from "../../server/web/session.ts";

export const metadata: Metadata = { title: "Dashboard" };

// Home: the first tenant of a member, the console for an operator with no tenant.
export default async function HomePage() {
  const me = await myAccount();
  if (me.tenants[0]) redirect(`/t/${me.tenants[0].id}`);
  if (me.isOperator) redirect("/ops");
  return (
    <main className="page">
      <div className="card empty">
        <h1>No tenants yet</h1>
        <p>Your account is not a member of any tenant. Ask a tenant admin to invite you.</p>
      </div>
    </main>
  );
}
