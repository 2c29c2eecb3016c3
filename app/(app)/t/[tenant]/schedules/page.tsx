import type { Metadata } from "next";
import { Prefetched, query } from "../../../../../server/web/prefetch.tsx";
import { myAccount } from "../../../../../server/web/session.ts";
import { SchedulesPanel } from "./schedules-panel";

export const metadata: Metadata = { title: "Schedules" };

export default async function TenantSchedulesPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <h1>Schedules</h1>
        <p>
          {current?.name ?? tenant} · sequences started on a cron expression in a time zone. Expressions have 5 fields
          (minute hour day month weekday), 6 (seconds first) or 7 (a year last); weekdays run 1–7 from Sunday, or use names
          (<code>MON-FRI</code>).
        </p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.schedules.list.queryOptions({ tenantId: tenant })),
          query(trpc.sequences.list.queryOptions({ tenantId: tenant })),
        ]}
      >
        <SchedulesPanel tenantId={tenant} />
      </Prefetched>
    </main>
  );
}
