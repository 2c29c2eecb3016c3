import type { Metadata } from "next";
import { Prefetched, query } from "../../../../../server/web/prefetch.tsx";
import { PAGE_SIZE } from "./page-size";
import { myAccount } from "../../../../../server/web/session.ts";
import { WorkersPanel } from "./workers-panel";

export const metadata: Metadata = { title: "Workers" };

export default async function TenantWorkersPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <h1>Workers</h1>
        <p>
          {current?.name ?? tenant} · the external workers that poll for this tenant&apos;s tasks through the REST API
          (<code>POST /api/v1/workers/tasks/poll</code>), what they hold, and the claims that have gone quiet.
        </p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.workers.stats.queryOptions({ tenantId: tenant })),
          query(trpc.workers.list.queryOptions({ tenantId: tenant, aliveOnly: false, offset: 0, limit: PAGE_SIZE })),
          query(trpc.workers.claimed.queryOptions({ tenantId: tenant, staleOnly: false, offset: 0, limit: PAGE_SIZE })),
        ]}
      >
        <WorkersPanel tenantId={tenant} />
      </Prefetched>
    </main>
  );
}
