import type { Metadata } from "next";
import { infinite, Prefetched, query } from "../../../../../server/web/prefetch.tsx";
import { PAGE_SIZE } from "./page-size";
import { myAccount } from "../../../../../server/web/session.ts";
import { ApprovalsInbox } from "./approvals-inbox";

export const metadata: Metadata = { title: "Approvals" };

export default async function TenantApprovalsPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <h1>Approvals</h1>
        <p>
          {current?.name ?? tenant} · every human review a running instance is waiting for, most recently updated first.
          Answer one here or on its instance page: it leaves the list and the run goes on.
        </p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.overview.sequences.queryOptions({ tenantId: tenant })),
          infinite(trpc.approvals.list.infiniteQueryOptions({ tenantId: tenant, limit: PAGE_SIZE }, { getNextPageParam: (last) => last.next })),
        ]}
      >
        <ApprovalsInbox tenantId={tenant} />
      </Prefetched>
    </main>
  );
}
