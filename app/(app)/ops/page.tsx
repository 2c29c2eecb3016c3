import type { Metadata } from "next";
import { BackendsCard } from "./backends-card";
import { CreateTenantCard } from "./create-tenant-card";
import { MovesCard } from "./moves-card";
import { SignOutUserCard } from "./sign-out-user-card";
import { TenantTable } from "./tenant-table";

export const metadata: Metadata = { title: "Operator console" };

export default function OpsPage() {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Operator console</h1>
        <p>Every tenant on this platform and where its data lives. Open a tenant for its limits and recent activity. Every change made here is in the audit log.</p>
      </div>
      <BackendsCard />
      <section className="card" aria-labelledby="tenants-heading">
        <h2 id="tenants-heading">Tenants</h2>
        <TenantTable />
      </section>
      <CreateTenantCard />
      <MovesCard />
      <SignOutUserCard />
    </main>
  );
}
