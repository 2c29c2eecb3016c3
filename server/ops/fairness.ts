// What the operator's fairness page shows: who takes the engines' claims and who waits for them.
// Read from the rollups of the engines' per-tenant minutes (tenant_metric_spans per tenant,
// backend_metric_minutes per minute; engine/storage/metric-rollups.ts), never from instances and
// never from every tenant's minutes.
//
// Demand in a minute is what a tenant asked the engines for: what they claimed for it plus what
// was still waiting at the end of the minute (its last backlog sample). A tenant's service ratio
// is claimed / demand. Jain's index over the service ratios of the tenants with demand is 1 when
// every tenant got the same fraction of what it asked for, and falls towards 1/n as one tenant
// takes everything while the others wait. It is demand-relative: one tenant holding 80% of the
// claims because it has 80% of the demand still reads 1. Beside it stand two figures that do not
// depend on demand: the largest tenant's share of all claims, and each tenant's schedule-lag p99
// against its objective (tenant_limits.lag_objective_ms, default BULKHEAD_LAG_OBJECTIVE_MS).
import { LAG_BUCKETS_MS } from "../../engine/metrics/tenant-metrics.ts";
import { LEDGER } from "../../engine/resources/ledger.ts";
import {
  activityWindowFrom, spanStartOf, type BackendMinute, type PlacedTenant, type SpanMinutes, type TenantMinuteLine, type TenantSpans,
} from "../../engine/storage/index.ts";
import type { Services } from "../services.ts";

/** The page's time ranges, in minutes. */
export const FAIRNESS_RANGES = { "15m": 15, "1h": 60, "6h": 360, "24h": 1_440 } as const;
export type FairnessRange = keyof typeof FAIRNESS_RANGES;

/** Tenants drawn on their own in the charts; the rest are summed as "others". */
export const TOP_TENANTS = 8;
/** Tenants over their objective listed (worst first) before the top ones. */
export const BREACHES_SHOWN = 20;

const MINUTE_MS = 60_000;
/** Minutes are read this far past now: an engine whose clock runs a little ahead may have started the next. */
const CLOCK_SLACK_MS = 2 * MINUTE_MS;

export interface LagBound {
  ms: number;
  over: boolean;
}

/** Jain's index of `values`: (Σx)² / (n·Σx²); null for none. */
export function jainIndex(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sum = values.reduce((a, b) => a + b, 0);
  const squares = values.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (values.length * squares);
}

/** Jain's index of a minute from its sums (n, Σx, Σx²); null without demand. */
export function jainOfSums(n: number, sum: number, squares: number): number | null {
  if (n <= 0) return null;
  if (squares <= 0) return 1;
  // The sums are kept by deltas: rounding may leave them a hair past 1.
  return Math.min(1, Math.max(0, (sum * sum) / (n * squares)));
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

/** How many lag buckets lie at or under an objective: the p99 must fall in one of them. */
export function objectiveBucket(objectiveMs: number): number {
  return LAG_BUCKETS_MS.filter((bound) => bound <= objectiveMs).length;
}

/**
 * Over the objective: the p99's bucket lies past it (its upper bound, the figure the page shows,
 * is above the objective). The storage ranking applies the same rule in SQL.
 */
export function inBreach(buckets: readonly number[], objectiveMs: number): boolean {
  const total = buckets.reduce((a, b) => a + b, 0);
  const within = buckets.slice(0, objectiveBucket(objectiveMs)).reduce((a, b) => a + b, 0);
  return total > 0 && within < 0.99 * total;
}

/** The fraction of claims slower than the objective's bucket: how far over it a tenant is. */
export function overObjective(buckets: readonly number[], objectiveMs: number): number {
  const total = buckets.reduce((a, b) => a + b, 0);
  return total === 0 ? 0 : (total - buckets.slice(0, objectiveBucket(objectiveMs)).reduce((a, b) => a + b, 0)) / total;
}

const share = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);
const bySlug = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// ------------------------------------------------------------------ the ledger's reasons

export interface Reason {
  /** What was counted: a deferral reason, step slots, or a waited resource's ledger id. */
  key: string;
  /** The ledger row (engine/resources/ledger.ts); null for a workflow's own send window. */
  ledgerId: string | null;
  /** The ledger's words for the resource, short, and in full. */
  label: string;
  resource: string;
  count: number;
  /** What the count counts. */
  what: string;
}

/** The ledger's short names (its rows' resource, up to the detail). */
const SHORT: Record<string, string> = {
  handler_failures: "handler failures", rate_limits_budgets: "rate limits and budgets", instances_in_flight: "instances in flight",
  step_slots: "step slots", worker_queue: "external worker queue", db_connections: "database connections",
  outbound_per_host: "outbound requests per host", event_fan_out: "event fan-out",
};

function reason(key: string, ledgerId: string | null, count: number, what: string): Reason {
  const entry = ledgerId ? LEDGER.find((e) => e.id === ledgerId) : undefined;
  const resource = entry?.resource ?? (ledgerId ?? "the workflow's send window");
  return { key, ledgerId, label: (ledgerId && SHORT[ledgerId]) ?? (ledgerId ? resource : "send window"), resource, count, what };
}

/**
 * Why a tenant waited, as the ledger words it, largest count first: its deferrals (an open
 * breaker, a rate limit, its budget, its in-flight limit, a send window), its steps that waited
 * for a step slot, its waits for another bounded resource, and its Open breakers now.
 */
export function reasonsOf(figures: Pick<TenantSpans, "deferred" | "stepsWaited" | "resourceWaits">, openBreakers = 0): Reason[] {
  const deferred = figures.deferred as Record<string, number | undefined>;
  const reasons = [
    reason("breaker", "handler_failures", deferred.breaker ?? 0, "steps deferred by an open breaker"),
    reason("rate_limit", "rate_limits_budgets", deferred.rate_limit ?? 0, "steps deferred by a rate limit"),
    reason("budget", "rate_limits_budgets", deferred.budget ?? 0, "steps deferred by its budget"),
    reason("cap", "instances_in_flight", deferred.cap ?? 0, "claims handed back at its in-flight limit"),
    reason("send_window", null, deferred.send_window ?? 0, "steps deferred to a send window"),
    reason("step_slots", "step_slots", figures.stepsWaited, "steps waited for a step slot"),
    ...Object.entries(figures.resourceWaits).map(([id, n]) => reason(id, id, typeof n === "number" ? n : 0, "waits")),
  ].filter((r) => r.count > 0);
  reasons.sort((a, b) => b.count - a.count || bySlug(a.key, b.key));
  if (openBreakers > 0) reasons.unshift(reason("open_breakers", "handler_failures", openBreakers, openBreakers === 1 ? "breaker open now" : "breakers open now"));
  return reasons;
}

// ------------------------------------------------------------------ the window

export interface FairnessWindow {
  /** Minutes per span read; 1: the hour's one row per tenant and its minutes (engine/storage/fairness-store.ts). */
  span: SpanMinutes | 1;
  from: Date;
  /** The end shown: now. Minutes are read a little past it. */
  to: Date;
}

/**
 * The range's window. "1 h" is the current minute and the 59 before it, as the tenants table
 * counts it (tenant_activity_hour). The others are whole spans: 5-minute ones for 15 minutes,
 * hourly ones beyond, from the start of the span holding now − range (so "24 h" covers 24 to 25
 * hours).
 */
export function fairnessWindow(range: FairnessRange, now = Date.now()): FairnessWindow {
  if (range === "1h") return { span: 1, from: activityWindowFrom(now), to: new Date(now) };
  const minutes = FAIRNESS_RANGES[range];
  const span: SpanMinutes = minutes <= 60 ? 5 : 60;
  return { span, from: spanStartOf(now - minutes * MINUTE_MS, span), to: new Date(now) };
}

// ------------------------------------------------------------------ the page

export interface TenantFigures {
  tenantId: string;
  claimed: number;
  completed: number;
  failed: number;
  demand: number;
  claimShare: number;
  demandShare: number;
  lagP50: LagBound | null;
  lagP99: LagBound | null;
  objectiveMs: number;
  /** Its own objective (tenant_limits), not the default. */
  ownObjective: boolean;
  breach: boolean;
  /** The fraction of its claims slower than its objective's bucket. */
  overObjective: number;
  /** The mean of its backlog samples. */
  backlog: number;
  openBreakers: number;
  reasons: Reason[];
}

export interface Series {
  key: string;
  /** null: every tenant past the top ones, summed. */
  tenantId: string | null;
  name: string;
}

export interface SeriesPoint {
  claimShare: number;
  demandShare: number;
  backlog: number;
}

export interface FairnessMinute {
  minute: string;
  /** null when no tenant had demand that minute. */
  jain: number | null;
  claimed: number;
  demand: number;
  /** By series key. */
  series: Record<string, SeriesPoint>;
}

export interface Objectives {
  defaultMs: number;
  own: ReadonlyMap<string, number>;
}

const objectiveOf = (objectives: Objectives, tenantId: string) => objectives.own.get(tenantId) ?? objectives.defaultMs;

/** A tenant's figures over the window from its summed spans. */
export function figuresOf(spans: TenantSpans, totals: { claimed: number; demand: number }, objectives: Objectives, openBreakers: number): TenantFigures {
  const objectiveMs = objectiveOf(objectives, spans.tenantId);
  return {
    tenantId: spans.tenantId, claimed: spans.claimed, completed: spans.completed, failed: spans.failed, demand: spans.demand,
    claimShare: share(spans.claimed, totals.claimed), demandShare: share(spans.demand, totals.demand),
    lagP50: lagPercentile(spans.lagBuckets, 0.5), lagP99: lagPercentile(spans.lagBuckets, 0.99),
    objectiveMs, ownObjective: objectives.own.has(spans.tenantId),
    breach: inBreach(spans.lagBuckets, objectiveMs), overObjective: overObjective(spans.lagBuckets, objectiveMs),
    backlog: spans.backlog, openBreakers, reasons: reasonsOf(spans, openBreakers),
  };
}

/**
 * The tenants the page lists, from every backend's candidates: those over their objective
 * first (the largest fraction of claims over it first, at most `breaches`), then the most claims
 * (at most `top`, not listed already). Each appears once.
 */
export function chooseTenants(candidates: { top: readonly PlacedTenant[]; breached: readonly PlacedTenant[] }, objectives: Objectives, limits = { top: TOP_TENANTS, breaches: BREACHES_SHOWN }) {
  const worst = (t: PlacedTenant) => overObjective(t.lagBuckets, objectiveOf(objectives, t.tenantId));
  const breached = [...candidates.breached].sort((a, b) => worst(b) - worst(a) || b.claimed - a.claimed || bySlug(a.tenantId, b.tenantId)).slice(0, limits.breaches);
  const top = [...candidates.top].sort((a, b) => b.claimed - a.claimed || b.demand - a.demand || bySlug(a.tenantId, b.tenantId)).slice(0, limits.top);
  const listed = new Set(breached.map((t) => t.tenantId));
  return { breached, top, listed: [...breached, ...top.filter((t) => !listed.has(t.tenantId))] };
}

/** The largest tenant's share of all claims in the window; null without claims. */
export function largestShare(top: readonly { tenantId: string; claimed: number }[], totalClaimed: number): { tenantId: string; claimShare: number } | null {
  const largest = [...top].sort((a, b) => b.claimed - a.claimed || bySlug(a.tenantId, b.tenantId))[0];
  return largest && totalClaimed > 0 && largest.claimed > 0 ? { tenantId: largest.tenantId, claimShare: largest.claimed / totalClaimed } : null;
}

/**
 * The charts' minutes: each top tenant's share of the claims and of the demand, and what it
 * left waiting, with every other tenant summed as "others" (the backend totals less the top
 * ones); Jain's index from the backend totals.
 */
export function seriesMinutes(top: readonly string[], othersCount: number, lines: readonly TenantMinuteLine[], totals: readonly BackendMinute[]): { series: Series[]; minutes: FairnessMinute[] } {
  const series: Series[] = top.map((tenantId, i) => ({ key: `s${i}`, tenantId, name: tenantId }));
  if (othersCount > 0) series.push({ key: "others", tenantId: null, name: `others (${othersCount.toLocaleString("en-US")})` });
  const keyOf = new Map(top.map((tenantId, i) => [tenantId, `s${i}`]));
  const linesAt = new Map<number, TenantMinuteLine[]>();
  for (const line of lines) linesAt.set(line.minute.getTime(), [...(linesAt.get(line.minute.getTime()) ?? []), line]);
  const minutes = totals.map((total): FairnessMinute => {
    const points: Record<string, SeriesPoint> = {};
    let claimed = 0, demand = 0, backlog = 0;
    for (const line of linesAt.get(total.minute.getTime()) ?? []) {
      const key = keyOf.get(line.tenantId);
      if (!key) continue;
      const lineDemand = line.claimed + line.leftWaiting;
      points[key] = { claimShare: share(line.claimed, total.claimed), demandShare: share(lineDemand, total.demand), backlog: line.leftWaiting };
      claimed += line.claimed;
      demand += lineDemand;
      backlog += line.leftWaiting;
    }
    for (const s of series) points[s.key] ??= { claimShare: 0, demandShare: 0, backlog: 0 };
    if (othersCount > 0) {
      points.others = {
        claimShare: share(Math.max(0, total.claimed - claimed), total.claimed),
        demandShare: share(Math.max(0, total.demand - demand), total.demand),
        backlog: Math.max(0, total.backlog - backlog),
      };
    }
    return {
      minute: total.minute.toISOString(), jain: jainOfSums(total.servedTenants, total.servedSum, total.servedSquares),
      claimed: total.claimed, demand: total.demand, series: points,
    };
  });
  return { series, minutes };
}

/** Groups tenants by the backend they were read from. */
const byBackend = (tenants: readonly { tenantId: string; backendId: string }[]) => {
  const groups = new Map<string, string[]>();
  for (const t of tenants) groups.set(t.backendId, [...(groups.get(t.backendId) ?? []), t.tenantId]);
  return groups;
};

/** Everything the fairness page draws for a range: four statements per backend, none over every minute. */
export async function fairnessOf(services: Services, range: FairnessRange, now = Date.now()) {
  const { storage, config } = services;
  const window = fairnessWindow(range, now);
  const objectives: Objectives = { defaultMs: config.BULKHEAD_LAG_OBJECTIVE_MS, own: await storage.fairness.lagObjectives() };
  const own = new Map([...objectives.own].map(([tenantId, ms]) => [tenantId, objectiveBucket(ms)]));
  const readTo = new Date(now + CLOCK_SLACK_MS);
  const read = { span: window.span, from: window.from, to: readTo };
  const ranking = await storage.fairness.rank(read, { defaultBucket: objectiveBucket(objectives.defaultMs), own, top: TOP_TENANTS, breached: BREACHES_SHOWN });
  const { top, listed } = chooseTenants(ranking, objectives);
  const [details, lines, totals] = await Promise.all([
    storage.fairness.detailsOf(byBackend(listed), read),
    storage.fairness.linesOf(byBackend(top), window.from, readTo),
    storage.fairness.backendMinutes(window.from, readTo),
  ]);
  const spansOf = new Map(details.spans.map((s) => [s.tenantId, s]));
  const tenants = listed.flatMap((t) => {
    const spans = spansOf.get(t.tenantId);
    return spans ? [figuresOf(spans, ranking, objectives, details.openBreakers.get(t.tenantId) ?? 0)] : [];
  });
  const charts = seriesMinutes(top.map((t) => t.tenantId), Math.max(0, ranking.tenants - top.length), lines, totals);
  return {
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    spanMinutes: window.span,
    defaultObjectiveMs: objectives.defaultMs,
    totals: { tenants: ranking.tenants, breaches: ranking.breaches, claimed: ranking.claimed, demand: ranking.demand },
    largest: largestShare(top, ranking.claimed),
    /** Over their objective first, then the most claims. */
    tenants,
    series: charts.series,
    minutes: charts.minutes,
  };
}
