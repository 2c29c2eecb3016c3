"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { ChangeError, ConfirmButton } from "../../../../_components/confirm-button";
import { useTRPC } from "../../../../_components/trpc";

/** What shows a tenant's placement: the tenant's page, the tenants table and the full list. */
const placementQueries = (trpc: ReturnType<typeof useTRPC>) => [trpc.ops.tenant.pathFilter(), trpc.ops.tenantPage.pathFilter(), trpc.ops.tenants.pathFilter()];

export interface PlacedTenant {
  id: string;
  backendId: string | null;
  epoch: number | null;
  quiesced: boolean;
}

/**
 * Where a tenant's data lives, changed from the tenant's page: a move (copies the rows, then
 * repoints), or, for experts, advancing the placement (repoints only).
 */
export function PlacementForm({ tenant }: { tenant: PlacedTenant }) {
  const trpc = useTRPC();
  const backends = useQuery(trpc.ops.backends.queryOptions());
  const ids = backends.data?.map((b) => b.id) ?? [];
  const unreachable = new Set(backends.data?.filter((b) => !b.reachable).map((b) => b.id));
  const label = (id: string) => (unreachable.has(id) ? `${id} (unreachable)` : id);
  return (
    <div className="placement-panel">
      {tenant.backendId ? (
        <MoveForm tenant={{ ...tenant, backendId: tenant.backendId }} backendIds={ids} loading={!backends.data} label={label} />
      ) : (
        <p className="muted">This tenant has no placement yet: place it with “Advance placement” below.</p>
      )}
      <details className="placement-advanced" open={!tenant.backendId}>
        <summary>Advance placement (experts)</summary>
        <AdvanceForm tenant={tenant} backendIds={ids} loading={!backends.data} label={label} />
      </details>
    </div>
  );
}

function MoveForm({
  tenant, backendIds, loading, label,
}: {
  tenant: PlacedTenant & { backendId: string };
  backendIds: string[];
  loading: boolean;
  label: (id: string) => string;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const targets = backendIds.filter((id) => id !== tenant.backendId);
  const [chosen, setChosen] = useState("");
  // After a move the tenant's backend changes: a choice that is now its own backend is no choice.
  const target = targets.includes(chosen) ? chosen : "";
  const move = useMutation(
    trpc.ops.startMove.mutationOptions({
      onSettled: () => Promise.all([
        queryClient.invalidateQueries(trpc.ops.moves.pathFilter()),
        ...placementQueries(trpc).map((filter) => queryClient.invalidateQueries(filter)),
      ]),
    }),
  );

  let outcome = null;
  if (move.data && move.variables) {
    const to = move.variables.backendId;
    outcome =
      move.data.kind === "started" ? `Move to ${to} started: an engine runs it within seconds. Follow it under “Moves” below.`
      : move.data.kind === "resumable" ? `A move to ${to} is already under way; an engine resumes it.`
      : `${tenant.id} is already on ${to}: nothing to move.`;
  }

  return (
    <>
      <h3>Move {tenant.id}</h3>
      <p className="muted">
        Copies the tenant&apos;s rows from <code>{tenant.backendId}</code> to the target backend, checks the copy, then points the
        tenant there (epoch {(tenant.epoch ?? 0) + 1}). Its API writes answer 503 while the move runs, usually for seconds.
      </p>
      <ChangeError what="start the move" error={move.error} />
      <form className="form-row" aria-label={`Move ${tenant.id}`} onSubmit={(event) => event.preventDefault()}>
        <label>
          Target backend
          <select className="input" name="target" value={target} disabled={loading} onChange={(event) => setChosen(event.target.value)}>
            <option value="">{loading ? "Loading…" : targets.length ? "Choose…" : "No other backend"}</option>
            {targets.map((id) => <option key={id} value={id}>{label(id)}</option>)}
          </select>
        </label>
        <ConfirmButton
          label="Start move"
          accessibleLabel={target ? `Start move of ${tenant.id} to ${target}` : "Start move"}
          question={`Move ${tenant.id} to ${target}? Its API writes pause while its rows are copied.`}
          pending={move.isPending}
          pendingLabel="Starting…"
          disabled={!target}
          onConfirm={() => move.mutate({ tenantId: tenant.id, backendId: target })}
        />
      </form>
      {outcome && <p className="status-line" role="status">{outcome}</p>}
    </>
  );
}

function AdvanceForm({
  tenant, backendIds, loading, label,
}: {
  tenant: PlacedTenant;
  backendIds: string[];
  loading: boolean;
  label: (id: string) => string;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const epochInput = useRef<HTMLInputElement>(null);
  const [chosen, setChosen] = useState(tenant.backendId ?? "");
  const backend = chosen || backendIds[0] || "";
  const [epoch, setEpoch] = useState(String((tenant.epoch ?? 0) + 1));
  const advance = useMutation(
    trpc.ops.advancePlacement.mutationOptions({
      // A conflict means the page is stale: refetching shows the placement that won.
      onSettled: () => Promise.all(placementQueries(trpc).map((filter) => queryClient.invalidateQueries(filter))),
      onSuccess: (placement) => setEpoch(String(placement.epoch + 1)),
    }),
  );
  const conflict = advance.error?.data?.code === "CONFLICT";

  return (
    <>
      <p className="muted">
        Points the tenant at a backend <strong>without copying any rows</strong>: rows already written stay where they are and the
        tenant no longer sees them. For a tenant with data, start a move instead. The epoch must be newer than the current one
        ({tenant.epoch ?? "none"}), so a change made meanwhile is refused.
      </p>
      {conflict ? (
        <div className="alert alert-error" role="alert">
          Conflict: {advance.error!.message}. Nothing changed; the page now shows the current placement.
        </div>
      ) : (
        <ChangeError what="advance the placement" error={advance.error} />
      )}
      <form className="form-row" aria-label={`Advance placement of ${tenant.id}`} onSubmit={(event) => event.preventDefault()}>
        <label>
          Backend
          <select className="input" name="backend" value={backend} disabled={loading} onChange={(event) => setChosen(event.target.value)}>
            {loading && <option value="">Loading…</option>}
            {backendIds.map((id) => <option key={id} value={id}>{label(id)}</option>)}
          </select>
        </label>
        <label>
          Epoch
          <input
            ref={epochInput}
            className="input"
            name="epoch"
            type="number"
            min={1}
            step={1}
            required
            value={epoch}
            onChange={(event) => setEpoch(event.target.value)}
          />
        </label>
        <ConfirmButton
          label="Advance placement"
          accessibleLabel={`Advance placement of ${tenant.id}`}
          question={`Point ${tenant.id} at ${backend} (epoch ${epoch}) without copying its rows?`}
          pending={advance.isPending}
          pendingLabel="Advancing…"
          disabled={!backend}
          onConfirm={() => {
            if (epochInput.current?.reportValidity()) advance.mutate({ tenantId: tenant.id, backendId: backend, epoch: Number(epoch) });
          }}
        />
      </form>
      {advance.data && (
        <p className="status-line" role="status">
          {advance.data.tenantId} now points at {advance.data.backendId}, epoch {advance.data.epoch}.
        </p>
      )}
    </>
  );
}
