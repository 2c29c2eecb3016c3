"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useState } from "react";
import { ChangeError } from "../../../_components/confirm-button";
import { QueryError } from "../../../_components/query-error";
import { useTRPC } from "../../../_components/trpc";
import type { AppRouter } from "../../../../server/api/root.ts";

/** How often the Resources page's live cards read again. */
export const REFRESH_MS = 2_000;
const MAX_INT4 = 2_147_483_647;

/** One tenant's row, as resources.usage answers it. */
type TenantUse = inferRouterOutputs<AppRouter>["resources"]["usage"]["tenants"][number];

/**
 * The step slots now: the tenants running the most steps at once (from the engines' last two
 * minutes of metrics), each against its limit, refreshed every 2 s; an operator changes a
 * tenant's step limit in its row (audited, engines follow within a second).
 */
export function StepSlotsCard() {
  const trpc = useTRPC();
  const usage = useQuery({ ...trpc.resources.usage.queryOptions(), refetchInterval: REFRESH_MS });
  const save = useSaveStepLimit();
  const data = usage.data;

  return (
    <section className="card" aria-labelledby="step-slots-heading">
      <h2 id="step-slots-heading">Step slots</h2>
      <p className="muted">
        Steps a tenant runs at once in one engine process: handler calls and worker dispatches, every branch of a parallel
        counted, <code>sleep</code> holding none. A step over its tenant&apos;s limit waits for a slot. Peak and waited are
        over the last 2 minutes{data && <>; the default limit is {data.defaults.maxStepsPerTenant.toLocaleString("en-US")} per tenant of{" "}
        {data.defaults.maxSteps.toLocaleString("en-US")} per engine process</>}. Refreshed every 2 s.
      </p>
      <ChangeError what={`save the step limit of ${save.variables?.tenantId ?? "the tenant"}`} error={save.error} />
      {save.data && save.variables && (
        <p className="status-line" role="status">
          Saved: the step limit of <code>{save.variables.tenantId}</code> is{" "}
          {save.data.maxSteps === null ? "the default" : save.data.maxSteps.toLocaleString("en-US")}. Engines follow within a second.
        </p>
      )}
      {usage.error ? (
        <QueryError error={usage.error} />
      ) : !data ? (
        <div className="skeleton" aria-busy="true" aria-label="Loading step slots" />
      ) : data.tenants.length === 0 ? (
        <p className="empty">No tenant has run steps in the last 2 minutes.</p>
      ) : (
        <>
          {data.activeTenants > data.tenants.length && (
            <p className="muted">The {data.tenants.length} busiest of {data.activeTenants} tenants that ran steps.</p>
          )}
          <div className="table-wrap">
            <table className="table step-slots-table" aria-label="Step slots by tenant">
              <thead>
                <tr>
                  <th scope="col">Tenant</th>
                  <th scope="col">Step peak / limit</th>
                  <th scope="col">Waited</th>
                  <th scope="col">Step limit</th>
                </tr>
              </thead>
              <tbody>
                {data.tenants.map((t) => (
                  <TenantRow
                    key={t.tenantId}
                    use={t}
                    defaultLimit={data.defaults.maxStepsPerTenant}
                    saving={save.isPending && save.variables.tenantId === t.tenantId}
                    onSave={(maxSteps) => save.mutate({ tenantId: t.tenantId, maxSteps })}
                    onEdit={() => save.reset()}
                  />
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

function TenantRow({
  use, defaultLimit, saving, onSave, onEdit,
}: {
  use: TenantUse;
  defaultLimit: number;
  saving: boolean;
  onSave: (maxSteps: number | null) => void;
  onEdit: () => void;
}) {
  // Starts from the saved value; the table's refreshes leave what the operator types alone.
  const [value, setValue] = useState(use.ownLimit?.toString() ?? "");
  const label = `Step limit of ${use.tenantId}`;
  return (
    <tr data-at-limit={use.atLimit}>
      <td>
        <Link prefetch={false} href={`/ops/tenants/${use.tenantId}`} title={`Limits and activity of ${use.tenantId}`}><code>{use.tenantId}</code></Link>
      </td>
      <td>
        <span className="step-peak">
          <strong>{use.peak.toLocaleString("en-US")}</strong> / {use.limit.toLocaleString("en-US")}
        </span>
        {use.ownLimit === null && <span className="muted"> (default)</span>}
        {use.atLimit && <> <span className="badge badge-warn">at limit</span></>}
      </td>
      <td>{use.waited > 0 ? use.waited.toLocaleString("en-US") : <span className="muted">0</span>}</td>
      <td>
        <form
          className="step-limit-form"
          aria-label={label}
          onSubmit={(event) => {
            event.preventDefault();
            onSave(value.trim() === "" ? null : Number(value));
          }}
        >
          <input
            className="input"
            name="maxSteps"
            type="number"
            min={1}
            max={MAX_INT4}
            step={1}
            aria-label={label}
            placeholder={`default: ${defaultLimit.toLocaleString("en-US")}`}
            value={value}
            onChange={(event) => { setValue(event.target.value); onEdit(); }}
          />
          <button className="btn btn-small btn-primary" type="submit" disabled={saving} aria-label={`Save the step limit of ${use.tenantId}`}>
            {saving ? "Saving…" : "Save"}
          </button>
        </form>
      </td>
    </tr>
  );
}

/** Sets one tenant's step limit through ops.limits.set (audited); its other limits are kept. */
function useSaveStepLimit() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useMutation({
    ...trpc.ops.limits.set.mutationOptions(),
    onSettled: () => Promise.all([
      queryClient.invalidateQueries(trpc.resources.usage.pathFilter()),
      queryClient.invalidateQueries(trpc.ops.limits.pathFilter()),
      queryClient.invalidateQueries(trpc.ops.audit.pathFilter()),
    ]),
  });
}
