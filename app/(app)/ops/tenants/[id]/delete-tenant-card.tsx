"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { ChangeError } from "../../../../_components/confirm-button";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";

const PHASE_WORDS: Record<string, string> = {
  quiesce: "stopping new work", drain: "waiting for running steps", delete_rows: "deleting its rows on every backend",
  control_plane: "deleting its members, keys and placement", done: "deleted",
};

/**
 * Deleting the tenant: every row on every backend, then its members, keys, invitations and
 * placement. The operator types the tenant's id to confirm; an engine runs the deletion and this
 * card follows its phases until the tenant is gone.
 */
export function DeleteTenantCard({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const [typed, setTyped] = useState("");
  const start = useMutation(trpc.ops.deletions.start.mutationOptions());
  const deletionId = start.data?.deletionId;
  return (
    <section className="card" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete tenant</h2>
      <p className="muted">
        Deletes all of the tenant&apos;s data on every backend (sequences, instances, outputs, signals, schedules, triggers,
        credentials, metrics) and then its members, API keys, invitations and placement. It cannot be undone: export the
        tenant first if its data is wanted. Afterwards <code>{tenantId}</code> answers as a tenant that never existed.
      </p>
      {deletionId ? (
        <DeletionProgress deletionId={deletionId} />
      ) : (
        <>
          <ChangeError what="delete the tenant" error={start.error} />
          <form
            className="form-row"
            aria-label="Delete tenant"
            onSubmit={(event) => {
              event.preventDefault();
              start.mutate({ tenantId, confirm: typed });
            }}
          >
            <label>
              Type <code>{tenantId}</code> to confirm
              <input className="input" name="confirm" autoComplete="off" spellCheck={false} value={typed} onChange={(e) => setTyped(e.target.value)} />
            </label>
            <button className="btn btn-danger" type="submit" disabled={typed !== tenantId || start.isPending}>
              {start.isPending ? "Starting…" : "Delete tenant"}
            </button>
          </form>
        </>
      )}
    </section>
  );
}

function DeletionProgress({ deletionId }: { deletionId: string }) {
  const trpc = useTRPC();
  const deletion = useQuery({
    ...trpc.ops.deletions.get.queryOptions({ deletionId }),
    refetchInterval: (query) => (query.state.data?.phase === "done" ? false : 1_000),
  });
  if (deletion.error) return <QueryError error={deletion.error} />;
  if (deletion.data === undefined) return <div className="skeleton" aria-busy="true" aria-label="Loading the deletion" />;
  if (deletion.data === null) return <p className="empty">This deletion is no longer recorded.</p>;
  const d = deletion.data;
  const done = d.phase === "done";
  return (
    <div role="status" aria-label="Deletion progress">
      <p>
        {done ? (
          <><strong>Deleted.</strong> {d.rows.toLocaleString("en-US")} rows on its backends, then its control-plane rows. <Link prefetch={false} href="/ops">All tenants</Link></>
        ) : (
          <>Step {d.step + 1} of {d.steps}: {PHASE_WORDS[d.phase]}…</>
        )}
      </p>
      <progress max={d.steps} value={done ? d.steps : d.step} aria-label="Phases done" />
      {d.error && <p className="muted">Paused on an error, retried by the engine: {d.error}</p>}
    </div>
  );
}
