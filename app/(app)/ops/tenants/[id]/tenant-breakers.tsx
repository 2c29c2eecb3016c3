"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { BreakerStateBadge, MutationError, ResetButton, TimeLeft } from "../../../../_components/breakers";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { LocalTime } from "../../../../_components/local-time";

/** The tenant's open breakers, each reset here after a confirmation; its resets are on the Breakers page. */
export function TenantBreakers({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const breakers = useQuery({ ...trpc.breakers.ops.list.queryOptions({ tenantId }), refetchInterval: 5_000 });
  const reset = useMutation(
    trpc.breakers.ops.reset.mutationOptions({
      onSettled: () => Promise.all([
        queryClient.invalidateQueries(trpc.breakers.pathFilter()),
        queryClient.invalidateQueries(trpc.ops.tenant.pathFilter()),
      ]),
    }),
  );
  const open = breakers.data?.breakers;
  const all = `/ops/breakers?tenant=${encodeURIComponent(tenantId)}`;

  let body;
  if (breakers.error) body = <QueryError error={breakers.error} />;
  else if (!open) body = <div className="skeleton" aria-busy="true" aria-label="Loading breakers" />;
  else if (open.length === 0) body = <p className="muted">No open breakers: every handler of this tenant is healthy.</p>;
  else {
    body = (
      <div className="table-wrap">
        <table className="table" aria-label="Open breakers">
          <thead>
            <tr>
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
              <tr key={b.handler}>
                <td><code>{b.handler}</code></td>
                <td><BreakerStateBadge state={b.state} /></td>
                <td>{b.failureCount} / {b.failureThreshold}</td>
                <td><TimeLeft state={b.state} secondsLeft={b.secondsLeft} fetchedAt={breakers.dataUpdatedAt} /></td>
                <td><LocalTime iso={b.openedAt} /></td>
                <td className="cell-actions">
                  <ResetButton
                    handler={`${b.handler} of ${tenantId}`}
                    pending={reset.isPending && reset.variables?.handler === b.handler}
                    onConfirm={() => reset.mutate({ tenantId, handler: b.handler })}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <section className="card" aria-labelledby="breakers-heading">
      <h2 id="breakers-heading">Breakers</h2>
      <MutationError error={reset.error} />
      {body}
      <p className="toolbar">
        <Link href={all} prefetch={false}>Its breakers and recent resets on the Breakers page</Link>
      </p>
    </section>
  );
}
