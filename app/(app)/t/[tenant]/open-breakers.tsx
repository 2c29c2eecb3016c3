"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";
import { BreakerStateBadge, TimeLeft } from "../../../_components/breakers";

/** The tenant's open and half-open breakers, read-only; resets are on the breakers page. */
export function OpenBreakers({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const breakers = useQuery({ ...trpc.breakers.list.queryOptions({ tenantId }), refetchInterval: 5_000 });
  if (breakers.error) return <QueryError error={breakers.error} />;
  if (!breakers.data) return <div className="skeleton" aria-busy="true" aria-label="Loading breakers" />;
  const open = breakers.data.breakers;
  return (
    <>
      {open.length === 0 ? (
        <p className="empty">No open breakers: every handler is healthy.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Open breakers">
            <thead>
              <tr>
                <th scope="col">Handler</th>
                <th scope="col">State</th>
                <th scope="col">Failures</th>
                <th scope="col">Time left</th>
              </tr>
            </thead>
            <tbody>
              {open.map((b) => (
                <tr key={b.handler}>
                  <td><code>{b.handler}</code></td>
                  <td><BreakerStateBadge state={b.state} /></td>
                  <td>{b.failureCount} / {b.failureThreshold}</td>
                  <td><TimeLeft state={b.state} secondsLeft={b.secondsLeft} fetchedAt={breakers.dataUpdatedAt} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="section-link">
        <Link prefetch={false} href={`/t/${tenantId}/breakers`}>All breakers, settings and resets</Link>
      </p>
    </>
  );
}
