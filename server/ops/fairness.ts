// What the operator's fairness page shows, computed from the engines' per-tenant minutes
// (tenant_metrics): each tenant's share of the claims against its share of the demand, schedule
// lag percentiles, backlog, Jain's fairness index per minute, and the noisiest tenants.
//
// Demand in a minute is what a tenant asked the engines for: what they claimed for it plus what
// was still waiting at the end of the minute (its last backlog sample; engines sample every 15 s,
// recording 0 for a tenant active that minute with nothing waiting). A tenant's service ratio is
// claimed / demand (1 when everything it asked for was claimed). Jain's index over the service ratios of the tenants
// with demand is 1 when every tenant got the same fraction of what it asked for, and falls
// towards 1/n as one tenant takes everything.
import { LAG_BUCKETS_MS, type MetricRow } from "../../engine/metrics/tenant-metrics.ts";

export interface TenantMinute {
  tenantId: string;
  claimed: number;
  demand: number;
  claimShare: number;
  demandShare: number;
  backlog: number;
}

export interface FairnessMinute {
  minute: string;
  /** null when no tenant had demand that minute. */
  jain: number | null;
  tenants: TenantMinute[];
}

export interface TenantSummary {
  tenantId: string;
  claimed: number;
  completed: number;
  failed: number;
  deferred: Record<string, number>;
  demand: number;
  claimShare: number;
  demandShare: number;
  /** The percentile's bucket: at most `ms` (or, with `over`, more than the last bound); null without claims. */
  lagP50: LagBound | null;
  lagP99: LagBound | null;
  /** The mean of its backlog samples over the range. */
  backlog: number;
}

export interface LagBound {
  ms: number;
  over: boolean;
}

export interface Fairness {
  minutes: FairnessMinute[];
  /** Noisiest first: by share of the demand, then of the claims. */
  tenants: TenantSummary[];
}

const mean = (values: readonly number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);
/** What was left waiting at the end of the minute: its last sample (0 without one). */
const leftWaiting = (samples: readonly number[]) => samples.at(-1) ?? 0;

/** Jain's index of `values`: (Σx)² / (n·Σx²); null for none. */
export function jainIndex(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sum = values.reduce((a, b) => a + b, 0);
  const squares = values.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (values.length * squares);
}

/** The bucket where the cumulative count reaches `p` of the total, as its upper bound. */
export function lagPercentile(buckets: readonly number[], p: number): LagBound | null {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const last = LAG_BUCKETS_MS[LAG_BUCKETS_MS.length - 1]!;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i]!;
    if (seen >= p * total) return i < LAG_BUCKETS_MS.length ? { ms: LAG_BUCKETS_MS[i]!, over: false } : { ms: last, over: true };
  }
  return { ms: last, over: true };
}

const share = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);

export function fairness(rows: readonly MetricRow[]): Fairness {
  const byMinute = new Map<number, MetricRow[]>();
  for (const row of rows) {
    const key = row.minute.getTime();
    byMinute.set(key, [...(byMinute.get(key) ?? []), row]);
  }
  const minutes: FairnessMinute[] = [...byMinute.entries()].sort(([a], [b]) => a - b).map(([minute, tenantRows]) => {
    const perTenant = tenantRows.map((r) => ({ tenantId: r.tenantId, claimed: r.claimed, backlog: leftWaiting(r.backlogSamples), demand: r.claimed + leftWaiting(r.backlogSamples) }));
    const claimed = perTenant.reduce((n, t) => n + t.claimed, 0);
    const demand = perTenant.reduce((n, t) => n + t.demand, 0);
    const served = perTenant.filter((t) => t.demand > 0).map((t) => t.claimed / t.demand);
    return {
      minute: new Date(minute).toISOString(),
      jain: jainIndex(served),
      tenants: perTenant.map((t) => ({ ...t, claimShare: share(t.claimed, claimed), demandShare: share(t.demand, demand) })),
    };
  });

  const totals = new Map<string, { claimed: number; completed: number; failed: number; deferred: Record<string, number>; lag: number[]; backlog: number[] }>();
  for (const row of rows) {
    const t = totals.get(row.tenantId) ?? { claimed: 0, completed: 0, failed: 0, deferred: {}, lag: [], backlog: [] };
    t.claimed += row.claimed;
    t.completed += row.completed;
    t.failed += row.failed;
    for (const [reason, n] of Object.entries(row.deferred)) t.deferred[reason] = (t.deferred[reason] ?? 0) + (n ?? 0);
    row.lagBuckets.forEach((n, i) => (t.lag[i] = (t.lag[i] ?? 0) + n));
    t.backlog.push(...row.backlogSamples);
    totals.set(row.tenantId, t);
  }
  // A tenant's demand over the range: its claims plus what was left waiting in each minute.
  const demandOf = new Map<string, number>();
  for (const m of minutes) for (const t of m.tenants) demandOf.set(t.tenantId, (demandOf.get(t.tenantId) ?? 0) + t.demand);
  const allClaimed = [...totals.values()].reduce((n, t) => n + t.claimed, 0);
  const allDemand = [...demandOf.values()].reduce((a, b) => a + b, 0);
  const tenants: TenantSummary[] = [...totals.entries()].map(([tenantId, t]) => ({
    tenantId, claimed: t.claimed, completed: t.completed, failed: t.failed, deferred: t.deferred,
    demand: demandOf.get(tenantId) ?? 0,
    claimShare: share(t.claimed, allClaimed),
    demandShare: share(demandOf.get(tenantId) ?? 0, allDemand),
    lagP50: lagPercentile(t.lag, 0.5),
    lagP99: lagPercentile(t.lag, 0.99),
    backlog: mean(t.backlog),
  }));
  tenants.sort((a, b) => b.demandShare - a.demandShare || b.claimShare - a.claimShare || (a.tenantId < b.tenantId ? -1 : 1));
  return { minutes, tenants };
}
