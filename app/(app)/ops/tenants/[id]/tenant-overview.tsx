"use client";

import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import type { AppRouter } from "../../../../../server/api/root.ts";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { lagLabel } from "../../fairness/fairness-data";
import { PlacementForm } from "./placement-form";

export type OpsTenant = inferRouterOutputs<AppRouter>["ops"]["tenant"];

/** The tenant as the server rendered it, then followed: every second while it is quiesced for a move. */
function useTenant(initial: OpsTenant) {
  const trpc = useTRPC();
  return useQuery({
    ...trpc.ops.tenant.queryOptions({ tenantId: initial.id }),
    initialData: initial,
    refetchInterval: (query) => (query.state.data?.quiesced ? 1_000 : 10_000),
  });
}

/** Where the tenant's data lives, and the move (or, for experts, the placement) that changes it. */
export function TenantPlacement({ initial }: { initial: OpsTenant }) {
  const tenant = useTenant(initial);
  const t = tenant.data;
  return (
    <section className="card" aria-labelledby="placement-heading">
      <h2 id="placement-heading">Placement</h2>
      {tenant.error && <QueryError error={tenant.error} />}
      <p role="status" aria-label="Current placement">
        Backend {t.backendId ? <span className="badge badge-accent">{t.backendId}</span> : <span className="badge">unplaced</span>} · epoch{" "}
        {t.epoch ?? "–"} ·{" "}
        {t.quiesced ? (
          <span className="badge badge-warn" title="API writes pause and schedulers skip the tenant while a move runs">quiesced · moving</span>
        ) : (
          <span className="muted">serving</span>
        )}
      </p>
      <PlacementForm tenant={t} />
    </section>
  );
}

const LIMIT_NAMES: Record<keyof OpsTenant["limits"], string> = {
  claimCap: "Claim cap", maxConcurrency: "In-flight limit", maxSteps: "Step limit", outboundPerHost: "Outbound requests per host",
  apiRatePerSec: "API requests per second", cronSchedules: "Cron schedules", webhookRatePerSec: "Webhooks per second",
  lagObjectiveMs: "Lag p99 objective (ms)", retentionDays: "Retention (days)",
};

/** The tenant's hour (tenant_metrics), the ledger limits it reached, its open breakers and which limits are its own. */
export function TenantHour({ initial }: { initial: OpsTenant }) {
  const t = useTenant(initial).data;
  const unknown = !t.figures;
  const stat = (label: string, value: string) => (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value">{unknown ? "?" : value}</div>
    </div>
  );
  const own = (Object.keys(LIMIT_NAMES) as (keyof OpsTenant["limits"])[]).filter((key) => t.limits[key] !== null);
  return (
    <section className="card" aria-labelledby="hour-heading">
      <h2 id="hour-heading">The last hour</h2>
      {unknown && <p className="muted">Its backend is not served by this web process: its figures are unknown here.</p>}
      <div className="stat-grid" role="group" aria-label="The last hour">
        {stat("Claims", t.claims.toLocaleString("en-US"))}
        {stat("Completed", t.completed.toLocaleString("en-US"))}
        {stat("Failed", t.failed.toLocaleString("en-US"))}
        {stat("Lag p50", lagLabel(t.lagP50))}
        {stat("Lag p99", lagLabel(t.lagP99))}
        {stat("Open breakers", (t.openBreakers ?? 0).toLocaleString("en-US"))}
      </div>
      <h3>At a ledger limit</h3>
      {t.atLimit.length === 0 ? (
        <p className="muted">None in the last hour.</p>
      ) : (
        <ul aria-label="Ledger limits reached">
          {t.atLimit.map((l) => (
            <li key={l.resource}>
              <span className="badge badge-warn">{l.label}</span> {l.detail} <span className="muted">({l.title})</span>
            </li>
          ))}
        </ul>
      )}
      <p>
        {own.length === 0 ? "Every limit is the engine default." : (
          <>Its own limits: {own.map((key) => `${LIMIT_NAMES[key].toLowerCase()} ${t.limits[key]!.toLocaleString("en-US")}`).join(", ")}; the rest are the engine defaults.</>
        )}{" "}
        <a href="#limits-heading">Change them below</a> · <Link href={`/ops/fairness/${encodeURIComponent(t.id)}`} prefetch={false}>Its fairness: lag against its objective, deferrals, share</Link> · <Link href={`/ops/fairness`} prefetch={false}>Fairness of every tenant</Link>
      </p>
    </section>
  );
}
