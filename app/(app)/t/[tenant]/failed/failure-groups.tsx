"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { ConfirmButton } from "../../../../_components/confirm-button";
import { useLiveRefresh } from "../../../../_components/live";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { ShortId, Time } from "../instances/instance-ui";

const REFRESH_MS = 5_000;
/** One retry call acts on at most this many (batchAction's limit); a larger group takes several. */
const RETRY_PER_CALL = 10_000;

export function FailureGroups({ tenantId, canRetry }: { tenantId: string; canRetry: boolean }) {
  const trpc = useTRPC();
  const refetchInterval = useLiveRefresh(tenantId, trpc.instances.failureGroups.queryKey({ tenantId }), REFRESH_MS);
  const groups = useQuery({ ...trpc.instances.failureGroups.queryOptions({ tenantId }), refetchInterval });
  const queryClient = useQueryClient();
  // Here, not in the group's row: a retried group leaves the list until its runs fail again.
  const retry = useMutation(trpc.instances.batchAction.mutationOptions({
    onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.instances.pathKey() }),
  }));
  const retryGroup = (fingerprint: string) =>
    retry.mutate({ tenantId, action: "retry", filter: { states: ["failed"], errorFingerprint: fingerprint }, limit: RETRY_PER_CALL });
  const outcome = retry.data && (
    <p className="muted" role="status">
      {retry.data.applied.toLocaleString("en-US")} retried{retry.data.skipped ? `, ${retry.data.skipped} skipped` : ""}
      {retry.data.failed ? `, ${retry.data.failed} failed` : ""}.
    </p>
  );
  const retryError = retry.error && <p className="alert alert-error" role="alert">{retry.error.message}</p>;

  if (groups.isPending) return <p className="muted" role="status">Loading failed runs…</p>;
  if (groups.error) return <QueryError error={groups.error} />;
  if (groups.data.length === 0) {
    return (
      <>
        {outcome}
        <p className="empty">No failed runs. Instances that fail show here, grouped by their error.</p>
      </>
    );
  }
  return (
    <section className="card" aria-labelledby="groups-heading">
      <h2 id="groups-heading">Failure groups</h2>
      {outcome}
      {retryError}
      <div className="table-wrap">
        <table className="table" aria-label="Failure groups">
          <thead>
            <tr>
              <th scope="col">Failures</th>
              <th scope="col">Error</th>
              <th scope="col">Latest</th>
              {canRetry && <th scope="col"><span className="visually-hidden">Actions</span></th>}
            </tr>
          </thead>
          <tbody>
            {groups.data.map((group) => (
              <tr key={group.fingerprint ?? "(none)"} data-testid="failure-group">
                <td className="failure-count">{group.count.toLocaleString("en-US")}</td>
                <td className="failure-error">
                  <p className="failure-message">{group.sampleMessage ?? "failed (no error recorded)"}</p>
                  <p className="muted">
                    {group.sampleBlock && <>step <code>{group.sampleBlock}</code> · </>}
                    latest: <Link prefetch={false} href={`/t/${tenantId}/instances/${group.sampleInstanceId}`}><ShortId id={group.sampleInstanceId} /></Link>
                  </p>
                </td>
                <td><Time iso={group.latestAt} /></td>
                {canRetry && (
                  <td className="cell-actions">
                    {group.fingerprint === null ? (
                      <span className="muted">retry these one by one</span>
                    ) : (
                      <RetryGroup
                        count={group.count}
                        pending={retry.isPending && retry.variables?.filter.errorFingerprint === group.fingerprint}
                        onRetry={() => retryGroup(group.fingerprint!)}
                      />
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function RetryGroup({ count, pending, onRetry }: { count: number; pending: boolean; onRetry: () => void }) {
  const many = count > RETRY_PER_CALL;
  return (
    <ConfirmButton
      label={`Retry all (${count.toLocaleString("en-US")})`}
      accessibleLabel={`Retry all ${count} in this group`}
      question={`Retry ${many ? `the oldest ${RETRY_PER_CALL.toLocaleString("en-US")} of these ${count.toLocaleString("en-US")}` : `these ${count.toLocaleString("en-US")}`} failed runs?`}
      pending={pending}
      pendingLabel="Retrying…"
      onConfirm={onRetry}
    />
  );
}
