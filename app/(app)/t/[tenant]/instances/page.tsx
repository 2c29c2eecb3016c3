import type { Metadata } from "next";
import { Suspense } from "react";
import { myAccount } from "../../../../../server/web/session.ts";
import { InstanceList } from "./instance-list";

export const metadata: Metadata = { title: "Instances" };

export default async function TenantInstancesPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <h1>Instances</h1>
        <p>{current?.name ?? tenant} · every run of the tenant&apos;s sequences, newest first; the first page refreshes itself.</p>
      </div>
      {/* The list reads its filters from the address (useSearchParams), which needs a boundary. */}
      <Suspense fallback={<div className="skeleton" aria-busy="true" aria-label="Loading instances" />}>
        <InstanceList tenantId={tenant} canManage={current?.role === "admin"} />
      </Suspense>
    </main>
  );
}
