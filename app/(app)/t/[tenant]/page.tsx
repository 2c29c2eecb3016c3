import type { Metadata } from "next";
import { Prefetched, query } from "../../../../server/web/prefetch.tsx";
import { myAccount } from "../../../../server/web/session.ts";
import { InstanceCounts } from "./instance-counts";
import { OpenBreakers } from "./open-breakers";
import { RecentFailures } from "./recent-failures";
import { SequenceList } from "./sequence-list";
import { ThroughputChart } from "./throughput-chart";

export const metadata: Metadata = { title: "Overview" };

export default async function TenantOverviewPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <h1>{current?.name ?? tenant}</h1>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.overview.instanceCounts.queryOptions({ tenantId: tenant })),
          query(trpc.overview.throughput.queryOptions({ tenantId: tenant })),
          query(trpc.breakers.list.queryOptions({ tenantId: tenant })),
          query(trpc.overview.recentFailures.queryOptions({ tenantId: tenant })),
          query(trpc.overview.sequences.queryOptions({ tenantId: tenant })),
        ]}
      >
        <section className="card" aria-labelledby="instances-heading">
          <h2 id="instances-heading">Instances by state</h2>
          <InstanceCounts tenantId={tenant} />
        </section>
        <section className="card" aria-labelledby="throughput-heading">
          <h2 id="throughput-heading">Throughput, last hour</h2>
          <ThroughputChart tenantId={tenant} />
        </section>
        <div className="overview-grid">
          <section className="card" aria-labelledby="breakers-heading">
            <h2 id="breakers-heading">Open breakers</h2>
            <OpenBreakers tenantId={tenant} />
          </section>
          <section className="card" aria-labelledby="failures-heading">
            <h2 id="failures-heading">Recent failures</h2>
            <RecentFailures tenantId={tenant} />
          </section>
        </div>
        <section className="card" aria-labelledby="sequences-heading">
          <h2 id="sequences-heading">Sequences</h2>
          <SequenceList tenantId={tenant} />
        </section>
      </Prefetched>
    </main>
  );
}
