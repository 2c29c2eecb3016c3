import type { Metadata } from "next";
import { Prefetched, query } from "../../../../../server/web/prefetch.tsx";
import { myAccount } from "../../../../../server/web/session.ts";
import { BreakerPanel } from "./breaker-panel";

export const metadata: Metadata = { title: "Circuit breakers" };

export default async function TenantBreakersPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <h1>Circuit breakers</h1>
        <p>
          {current?.name ?? tenant} · a handler that keeps failing is paused for a while, so its failures stop costing
          work; its steps wait (or use their fallback handler) until it recovers.
        </p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.breakers.list.queryOptions({ tenantId: tenant })),
          query(trpc.breakers.resets.queryOptions({ tenantId: tenant })),
        ]}
      >
        {/* The reset procedure checks the role again; this only decides whether to offer it. */}
        <BreakerPanel tenantId={tenant} canReset={current?.role === "admin"} />
      </Prefetched>
    </main>
  );
}
