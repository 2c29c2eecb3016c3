"use client";

import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useDeferredValue, useState } from "react";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";
import { BreakerStateBadge, MutationError, ResetButton, TimeLeft } from "../../../_components/breakers";

export function AllBreakers() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [filter, setFilter] = useState("");
  // Typing stays responsive; the query follows a moment later.
  const tenant = useDeferredValue(filter.trim());
  const breakers = useQuery({
    ...trpc.breakers.ops.list.queryOptions(tenant ? { tenant } : undefined),
    refetchInterval: 5_000,
    // Keep the last answer on screen while a new filter loads.
    placeholderData: keepPreviousData,
  });
  const reset = useMutation(
    trpc.breakers.ops.reset.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.breakers.pathFilter()),
    }),
  );
  const resetting = (tenantId: string, handler: string) =>
    reset.isPending && reset.variables?.tenantId === tenantId && reset.variables.handler === handler;

  return (
    <>
      <div className="field field-inline">
        <label htmlFor="breaker-tenant-filter">Tenant</label>
        <input
          id="breaker-tenant-filter"
          className="input"
          type="search"
          placeholder="Filter by tenant id"
          value={filter}
          onChange={(event) => setFilter(event.target.value)}
          maxLength={64}
        />
      </div>
      <section className="card" aria-labelledby="all-breakers-heading">
        <h2 id="all-breakers-heading">Open breakers</h2>
        <MutationError error={reset.error} />
        {breakers.error ? (
          <QueryError error={breakers.error} />
        ) : !breakers.data ? (
          <div className="skeleton" aria-busy="true" aria-label="Loading breakers" />
        ) : breakers.data.breakers.length === 0 ? (
          <p className="empty">
            {tenant ? <>No open breakers for tenants matching <code>{tenant}</code>.</> : "No open breakers: every handler is healthy."}
          </p>
        ) : (
          <div className="table-wrap">
            <table className="table" aria-label="Open breakers" aria-busy={breakers.isPlaceholderData}>
              <thead>
                <tr>
                  <th scope="col">Tenant</th>
                  <th scope="col">Handler</th>
                  <th scope="col">State</th>
                  <th scope="col">Failures</th>
                  <th scope="col">Time left</th>
                  <th scope="col">Opened at</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {breakers.data.breakers.map((b) => (
                  <tr key={`${b.tenantId}/${b.handler}`}>
                    <td><code>{b.tenantId}</code></td>
                    <td><code>{b.handler}</code></td>
                    <td><BreakerStateBadge state={b.state} /></td>
                    <td>{b.failureCount} / {b.failureThreshold}</td>
                    <td><TimeLeft state={b.state} secondsLeft={b.secondsLeft} fetchedAt={breakers.dataUpdatedAt} /></td>
                    <td>{new Date(b.openedAt).toLocaleString()}</td>
                    <td className="cell-actions">
                      <ResetButton
                        handler={`${b.handler} of ${b.tenantId}`}
                        pending={resetting(b.tenantId, b.handler)}
                        onConfirm={() => reset.mutate({ tenantId: b.tenantId, handler: b.handler })}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section className="card" aria-labelledby="all-resets-heading">
        <h2 id="all-resets-heading">Recent resets</h2>
        {breakers.data && breakers.data.resets.length > 0 ? (
          <div className="table-wrap">
            <table className="table" aria-label="Recent resets">
              <thead>
                <tr>
                  <th scope="col">Tenant</th>
                  <th scope="col">Handler</th>
                  <th scope="col">Reset by</th>
                  <th scope="col">When</th>
                </tr>
              </thead>
              <tbody>
                {breakers.data.resets.map((r) => (
                  <tr key={`${r.tenantId}/${r.id}`}>
                    <td><code>{r.tenantId}</code></td>
                    <td><code>{r.handler}</code></td>
                    <td>{r.resetBy}</td>
                    <td>{new Date(r.resetAt).toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : breakers.data ? (
          <p className="empty">No breaker has been reset yet.</p>
        ) : breakers.error ? null : (
          <div className="skeleton" aria-busy="true" aria-label="Loading resets" />
        )}
      </section>
    </>
  );
}
