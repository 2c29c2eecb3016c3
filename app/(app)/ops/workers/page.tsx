import type { Metadata } from "next";
import { FleetWorkers } from "./fleet-workers";
import { Prefetched, query } from "../../../../server/web/prefetch.tsx";

export const metadata: Metadata = { title: "Workers · Operator console" };

const LIMITS = [100, 250, 500];

export default function OpsWorkersPage() {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Workers</h1>
        <p>
          Every external worker, most recently seen first: the fleet&apos;s (operator keys polling for no tenant, across every
          tenant) and each tenant&apos;s own, read from the backend the tenant is placed on.
        </p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.workers.ops.fleet.queryOptions({ limit: LIMITS[0] })),
        ]}
      >
        <FleetWorkers limits={LIMITS} />
      </Prefetched>
    </main>
  );
}
