import type { Metadata } from "next";
import { Suspense } from "react";
import { addressParams, infinite, Prefetched, query, type SearchParams } from "../../../../../server/web/prefetch.tsx";
import { myAccount } from "../../../../../server/web/session.ts";
import { InstanceList } from "./instance-list";
import { serverListInput } from "./list-input";

export const metadata: Metadata = { title: "Instances" };

export default async function TenantInstancesPage({ params, searchParams }: { params: Promise<{ tenant: string }>; searchParams: SearchParams }) {
  const { tenant } = await params;
  const input = serverListInput(tenant, await addressParams(searchParams));
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <h1>Instances</h1>
        <p>{current?.name ?? tenant} · every run of the tenant&apos;s sequences, newest first; the first page refreshes itself.</p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.overview.sequences.queryOptions({ tenantId: tenant })),
          ...(input ? [infinite(trpc.instances.list.infiniteQueryOptions(input, { getNextPageParam: (last) => last.next }))] : []),
        ]}
      >
        {/* The list reads its filters from the address (useSearchParams), which needs a boundary. */}
        <Suspense fallback={<div className="skeleton" aria-busy="true" aria-label="Loading instances" />}>
          <InstanceList tenantId={tenant} canManage={current?.role === "admin"} />
        </Suspense>
      </Prefetched>
    </main>
  );
}
