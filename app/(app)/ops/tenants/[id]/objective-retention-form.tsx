"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeError } from "../../../../_components/confirm-button";
import { useTRPC } from "../../../../_components/trpc";

const MAX_INT4 = 2_147_483_647;
const MAX_RETENTION_DAYS = 36_500;
const override = (value: string) => (value.trim() === "" ? null : Number(value));

/**
 * The tenant's lag p99 objective (the fairness page marks it in breach above it) and its
 * retention (finished instances older than that are pruned with their rows). Empty: the default.
 */
export function ObjectiveRetentionForm({ tenantId, lagObjectiveMs, retentionDays, defaults }: {
  tenantId: string;
  lagObjectiveMs: number | null;
  retentionDays: number | null;
  defaults: { lagObjectiveMs: number; retentionDays: number };
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [objective, setObjective] = useState(lagObjectiveMs?.toString() ?? "");
  const [retention, setRetention] = useState(retentionDays?.toString() ?? "");
  const save = useMutation(trpc.ops.limits.set.mutationOptions({
    onSettled: () => Promise.all([
      queryClient.invalidateQueries(trpc.ops.limits.pathFilter()),
      queryClient.invalidateQueries(trpc.ops.audit.pathFilter()),
    ]),
  }));
  const said = (value: number | null, fallback: number, unit: string) =>
    value === null ? `the default (${fallback.toLocaleString("en-US")} ${unit})` : `${value.toLocaleString("en-US")} ${unit}`;
  return (
    <>
      <p className="muted">
        The lag objective is the schedule lag p99 the tenant is promised; above it the fairness page lists the tenant as in breach.
        The retention is how long its finished (completed, failed or cancelled) instances are kept: older ones are deleted with
        their outputs, signals, tasks and audit rows. Empty means the default.
      </p>
      <ChangeError what="save the objective and retention" error={save.error} />
      <form
        className="form-row"
        aria-label="Lag objective and retention"
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate({ tenantId, lagObjectiveMs: override(objective), retentionDays: override(retention) });
        }}
      >
        <label>
          Lag p99 objective, ms
          <input
            className="input" name="lagObjectiveMs" type="number" min={1} max={MAX_INT4} step={1}
            placeholder={`default: ${defaults.lagObjectiveMs.toLocaleString("en-US")}`}
            value={objective}
            onChange={(event) => { setObjective(event.target.value); save.reset(); }}
          />
        </label>
        <label>
          Retention, days
          <input
            className="input" name="retentionDays" type="number" min={1} max={MAX_RETENTION_DAYS} step={1}
            placeholder={`default: ${defaults.retentionDays.toLocaleString("en-US")}`}
            value={retention}
            onChange={(event) => { setRetention(event.target.value); save.reset(); }}
          />
        </label>
        <button className="btn btn-primary" type="submit" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save objective and retention"}
        </button>
      </form>
      {save.data && (
        <p className="status-line" role="status">
          Saved: lag objective {said(save.data.lagObjectiveMs, defaults.lagObjectiveMs, "ms")}, retention{" "}
          {said(save.data.retentionDays, defaults.retentionDays, "days")}.
        </p>
      )}
    </>
  );
}
