"use client";

import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import { useDeferredValue, useState } from "react";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";
import { BreakerStateBadge, MutationError, ResetButton, TimeLeft } from "../../../_components/breakers";
import { LocalTime } from "../../../_components/local-time";
import { opsBreakersInput } from "./breakers-input";

export function AllBreakers() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // A tenant's page links here with ?tenant=<id>.
  const params = useSearchParams();
  const [filter, setFilter] = useState(() => params.get("tenant") ?? "");
  // Typing stays responsive; the query follows a moment later.
  const tenant = useDeferredValue(filter.trim());
  const [handlerFilter, setHandlerFilter] = useState("");
  const handler = useDeferredValue(handlerFilter.trim());
  const breakers = useQuery({
    ...trpc.breakers.ops.list.queryOptions(opsBreakersInput(tenant, handler)),
    refetchInterval: 5_000,
    // Keep the last answer on screen while a new filter loads.
    placeholderData: keepPreviousData,
  });
  const reset = useMutation(
    trpc.breakers.ops.reset.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.breakers.pathFilter()),
    }),
  );
  const resetting = (tenantId: string, name: string) =>
    reset.isPending && reset.variables?.tenantId === tenantId && reset.variables.handler === name;
  const open = breakers.data?.breakers;
  const resets = breakers.data?.resets;
  const ofTenant = tenant && <>tenants matching <code>{tenant}</code></>;
  const ofHandler = handler && <>handlers matching <code>{handler}</code></>;
  const matching = ofTenant && ofHandler ? <>{ofTenant} and {ofHandler}</> : ofTenant || ofHandler || null;

  return (
    <>
      <form className="filters" role="search" aria-label="Filter breakers" onSubmit={(event) => event.preventDefault()}>
        <label htmlFor="breaker-tenant-filter">
          Tenant
          <input
            id="breaker-tenant-filter"
            className="input"
            type="search"
            placeholder="Filter by tenant id"
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
            maxLength={64}
          />
        </label>
        <label htmlFor="breaker-handler-filter">
          Handler
          <input
            id="breaker-handler-filter"
            className="input"
            type="search"
            placeholder="Filter by handler"
            value={handlerFilter}
            onChange={(event) => setHandlerFilter(event.target.value)}
            maxLength={256}
          />
        </label>
      </form>
      <section className="card" aria-labelledby="all-breakers-heading">
        <h2 id="all-breakers-heading">Open breakers</h2>
        <MutationError error={reset.error} />
        {breakers.error ? (
          <QueryError error={breakers.error} />
        ) : !breakers.data || !open ? (
          <div className="skeleton" aria-busy="true" aria-label="Loading breakers" />
        ) : open.length === 0 ? (
          <p className="empty">
            {matching ? <>No open breakers for {matching}.</> : "No open breakers: every handler is healthy."}
          </p>
        ) : (
          <>
            {breakers.data.matching > open.length && (
              <p className="muted" role="status">
                The first {open.length.toLocaleString("en-US")} of {breakers.data.matching.toLocaleString("en-US")} open breakers
                {matching ? <> for {matching}</> : null}, by tenant and handler. Filter by tenant or handler to find the others.
              </p>
            )}
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
                  {open.map((b) => (
                    <tr key={`${b.tenantId}/${b.handler}`}>
                      <td><code>{b.tenantId}</code></td>
                      <td><code>{b.handler}</code></td>
                      <td><BreakerStateBadge state={b.state} /></td>
                      <td>{b.failureCount} / {b.failureThreshold}</td>
                      <td><TimeLeft state={b.state} secondsLeft={b.secondsLeft} fetchedAt={breakers.dataUpdatedAt} /></td>
                      <td><LocalTime iso={b.openedAt} /></td>
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
          </>
        )}
      </section>
      <section className="card" aria-labelledby="all-resets-heading">
        <h2 id="all-resets-heading">Recent resets</h2>
        {resets && resets.length > 0 ? (
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
                {resets.map((r) => (
                  <tr key={`${r.tenantId}/${r.id}`}>
                    <td><code>{r.tenantId}</code></td>
                    <td><code>{r.handler}</code></td>
                    <td>{r.resetBy}</td>
                    <td><LocalTime iso={r.resetAt} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : resets ? (
          <p className="empty">{matching ? <>No recent resets for {matching}.</> : "No breaker has been reset yet."}</p>
        ) : breakers.error ? null : (
          <div className="skeleton" aria-busy="true" aria-label="Loading resets" />
        )}
      </section>
    </>
  );
}
