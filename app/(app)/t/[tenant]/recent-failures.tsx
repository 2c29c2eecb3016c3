"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useLiveRefresh } from "../../../_components/live";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";
import { ShortId } from "./instances/instance-ui";
import { LocalTime } from "../../../_components/local-time";

/** The tenant's last 10 failed instances, newest first, each linking to its detail page. */
export function RecentFailures({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const failures = useQuery({
    ...trpc.overview.recentFailures.queryOptions({ tenantId }),
    refetchInterval: useLiveRefresh(tenantId, trpc.overview.recentFailures.queryKey({ tenantId }), 15_000),
  });
  if (failures.error) return <QueryError error={failures.error} />;
  if (!failures.data) return <div className="skeleton" aria-busy="true" aria-label="Loading recent failures" />;
  if (failures.data.length === 0) return <p className="empty">No failed instances.</p>;
  return (
    <div className="table-wrap">
      <table className="table" aria-label="Recent failures">
        <thead>
          <tr>
            <th scope="col">Instance</th>
            <th scope="col">Sequence</th>
            <th scope="col">Failed at</th>
          </tr>
        </thead>
        <tbody>
          {failures.data.map((f) => (
            <tr key={f.id}>
              <td>
                <Link prefetch={false} href={`/t/${tenantId}/instances/${f.id}`} title={f.id}>
                  <ShortId id={f.id} />
                  <span className="visually-hidden"> (open instance)</span>
                </Link>
              </td>
              <td>
                {f.sequenceName === null ? (
                  <span className="muted">missing <ShortId id={f.sequenceId} /></span>
                ) : (
                  <>
                    {f.sequenceName} <span className="muted">v{f.sequenceVersion}</span>
                  </>
                )}
              </td>
              <td>{f.completedAt === null ? <span className="muted">unknown</span> : <LocalTime iso={f.completedAt} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
