import type { Metadata } from "next";
import { Prefetched, query } from "../../../../../server/web/prefetch.tsx";
import { myAccount } from "../../../../../server/web/session.ts";
import { FailureGroups } from "./failure-groups";

export const metadata: Metadata = { title: "Failed runs" };

export default async function TenantFailedPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <h1>Failed runs</h1>
        <p>
          {current?.name ?? tenant} · failed instances grouped by why they failed (the handler and the error, with ids
          and numbers set aside), the largest group first.
        </p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.instances.failureGroups.queryOptions({ tenantId: tenant })),
        ]}
      >
        {/* The retry procedure checks the role again; this only decides whether to offer it. */}
        <FailureGroups tenantId={tenant} canRetry={current?.role === "admin"} />
      </Prefetched>
    </main>
  );
}
