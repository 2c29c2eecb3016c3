"use client";

import { useQuery } from "@tanstack/react-query";
import { useLiveRefresh } from "../../../_components/live";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";
import { INSTANCE_STATES } from "../../../../engine/model.ts";


export function InstanceCounts({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const counts = useQuery({
    ...trpc.overview.instanceCounts.queryOptions({ tenantId }),
    refetchInterval: useLiveRefresh(tenantId, trpc.overview.instanceCounts.queryKey({ tenantId }), 5_000),
  });
  if (counts.error) return <QueryError error={counts.error} />;
  return (
    <div className="stat-grid" aria-busy={counts.isPending}>
      {INSTANCE_STATES.map((state) => (
        <div className="stat" key={state} data-testid={`count-${state}`}>
          <div className="stat-label">{state}</div>
          {counts.data ? <div className="stat-value">{counts.data[state].toLocaleString("en-US")}</div> : <div className="skeleton" />}
        </div>
      ))}
    </div>
  );
}
