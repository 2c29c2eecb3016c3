// SQL reads of the tenant_metrics rollups (metric-rollups.ts) on one backend: every tenant ranked
// over a window of spans (the largest by claims and those over their lag objective, chosen here,
// not in the caller), the spans of a few tenants summed, the backend's minutes, and a few
// tenants' own minutes. None reads tenant_metrics over every tenant. The last hour is ranked from
// one row per tenant instead (tenant_activity_hour, rankHourActivity), and its listed tenants are
// summed from their minutes (spansOfMinutes).
import type { MetricRow } from "../metrics/tenant-metrics.ts";
import { LAG_BUCKET_COUNT, sumOfBuckets, type SpanMinutes } from "./metric-rollups.ts";
import { READ_TENANT_ACTIVITY } from "./tenant-activity.ts";
import type { Queryable } from "./transaction.ts";

/** Spans of `span` minutes starting at or after `from`. */
export interface SpanWindow {
  span: SpanMinutes;
  from: Date;
}

export interface RankedTenant {
  tenantId: string;
  claimed: number;
  demand: number;
  lagBuckets: number[];
}

export interface BackendRanking {
  /** Tenants with any span in the window. */
  tenants: number;
  /** Of those, over their lag objective. */
  breaches: number;
  claimed: number;
  demand: number;
  /** The most claims first. */
  top: RankedTenant[];
  /** Over their objective, the largest fraction of claims over it first. */
  breached: RankedTenant[];
}

export interface RankOptions {
  /** Tenants whose rows here are a stale copy (placed on another backend): left out. */
  elsewhere: readonly string[];
  /**
   * The objective as a lag bucket: a tenant is over it when fewer than 99% of its claims fall in
   * the buckets up to `k` (its p99 bucket is past k). `own` for tenants with their own objective.
   */
  defaultBucket: number;
  own: ReadonlyMap<string, number>;
  top: number;
  breached: number;
}

/** The claims of the summed histogram `lag`, in all, and in its first `k` buckets: plain expressions (no unnest per row). */
const TOTAL = Array.from({ length: LAG_BUCKET_COUNT }, (_, i) => `lag[${i + 1}]`).join(" + ");
const WITHIN = `CASE k ${Array.from({ length: LAG_BUCKET_COUNT }, (_, i) => `WHEN ${i + 1} THEN ${Array.from({ length: i + 1 }, (_, j) => `lag[${j + 1}]`).join(" + ")}`).join(" ")} ELSE 0 END`;

/**
 * Tenants ranked from `source`, a statement of (tenant_id, claimed, demand, lag) per tenant over
 * $1 (tenants whose rows here are a stale copy) and its own parameters from $7 on: counts, the top
 * by claims, the worst breaches.
 */
async function rank(db: Queryable, name: string, source: string, sourceValues: unknown[], options: RankOptions): Promise<BackendRanking> {
  const { rows } = await db.query<{
    tenants: number; breaches: number; claimed: number; demand: number;
    top: { tenant_id: string; claimed: number; demand: number; lag: number[] }[];
    breached: { tenant_id: string; claimed: number; demand: number; lag: number[] }[];
  }>({
    name,
    text: `WITH t AS (${source}),
           k AS (
             SELECT t.*, coalesce(own.k, $4) AS k FROM t LEFT JOIN unnest($2::text[], $3::int[]) AS own(tenant_id, k) ON own.tenant_id = t.tenant_id
           ),
           c AS (
             SELECT k.tenant_id, k.claimed, k.demand, k.lag, (${TOTAL})::float8 AS total, (${WITHIN})::float8 AS within FROM k
           ),
           r AS (
             SELECT c.*, c.total > 0 AND c.within < 0.99::float8 * c.total AS breach FROM c
           )
           SELECT n.tenants, n.breaches, n.claimed, n.demand,
                  (SELECT coalesce(json_agg(x), '[]') FROM (
                     SELECT tenant_id, claimed, demand, lag FROM r ORDER BY claimed DESC, demand DESC, tenant_id COLLATE "C" LIMIT $5) x) AS top,
                  (SELECT coalesce(json_agg(x), '[]') FROM (
                     SELECT tenant_id, claimed, demand, lag FROM r WHERE breach
                      ORDER BY (total - within) / total DESC, claimed DESC, tenant_id COLLATE "C" LIMIT $6) x) AS breached
             FROM (SELECT count(*)::int AS tenants, count(*) FILTER (WHERE breach)::int AS breaches,
                          coalesce(sum(claimed), 0)::float8 AS claimed, coalesce(sum(demand), 0)::float8 AS demand FROM r) n`,
    values: [options.elsewhere, [...options.own.keys()], [...options.own.values()], options.defaultBucket, options.top, options.breached, ...sourceValues],
  });
  const row = rows[0]!;
  const ranked = (r: { tenant_id: string; claimed: number; demand: number; lag: number[] }): RankedTenant =>
    ({ tenantId: r.tenant_id, claimed: r.claimed, demand: r.demand, lagBuckets: r.lag });
  return { tenants: row.tenants, breaches: row.breaches, claimed: row.claimed, demand: row.demand, top: row.top.map(ranked), breached: row.breached.map(ranked) };
}

/** Every tenant's spans in the window summed, ranked. */
export function rankTenants(db: Queryable, window: SpanWindow, options: RankOptions): Promise<BackendRanking> {
  return rank(db, "rank_tenant_spans", `
    SELECT s.tenant_id, sum(s.claimed)::float8 AS claimed, sum(s.demand)::float8 AS demand, ARRAY[${sumOfBuckets("s.lag_buckets")}]::int[] AS lag
      FROM tenant_metric_spans s
      LEFT JOIN unnest($1::text[]) AS elsewhere(id) ON elsewhere.id = s.tenant_id
     WHERE s.span_minutes = $7 AND s.start >= $8 AND elsewhere.id IS NULL
     GROUP BY s.tenant_id`, [window.span, window.from], options);
}

/**
 * Every tenant with claims or lag in the hour from `from` (its first minute) ranked, from its one
 * row (tenant_activity_hour): no demand per tenant there, so the top by claims are ordered by slug
 * after that, and `demand` is 0.
 */
export function rankHourActivity(db: Queryable, from: Date, options: RankOptions): Promise<BackendRanking> {
  return rank(db, "rank_tenant_activity", `
    SELECT a.tenant_id, a.claimed::float8 AS claimed, 0::float8 AS demand, a.lag_buckets AS lag
      FROM (${READ_TENANT_ACTIVITY.replaceAll("$1", "$7")}) a
      LEFT JOIN unnest($1::text[]) AS elsewhere(id) ON elsewhere.id = a.tenant_id
     WHERE elsewhere.id IS NULL AND (a.claimed > 0 OR 0 < ANY (a.lag_buckets))`, [from], options);
}

/** A tenant's spans in a window, summed. */
export interface TenantSpans {
  tenantId: string;
  claimed: number;
  completed: number;
  failed: number;
  deferred: Record<string, number>;
  lagBuckets: number[];
  demand: number;
  /** The mean of its backlog samples (0 without any). */
  backlog: number;
  stepsPeak: number;
  stepsWaited: number;
  resourceWaits: Record<string, number>;
}

/** These tenants' spans in the window, summed (the primary key: tenant, span, start). */
export async function sumSpansOf(db: Queryable, tenantIds: readonly string[], window: SpanWindow): Promise<TenantSpans[]> {
  if (tenantIds.length === 0) return [];
  const { rows } = await db.query<{
    tenant_id: string; claimed: number; completed: number; failed: number; deferred: Record<string, number>; lag: number[];
    demand: number; backlog_sum: number; backlog_samples: number; steps_peak: number; steps_waited: number; resource_waits: Record<string, number>;
  }>({
    name: "sum_spans_of",
    text: `SELECT tenant_id, sum(claimed)::int AS claimed, sum(completed)::int AS completed, sum(failed)::int AS failed,
                  bulkhead_sum_keyed_counts(deferred) AS deferred, ARRAY[${sumOfBuckets("lag_buckets")}]::int[] AS lag,
                  sum(demand)::float8 AS demand, sum(backlog_sum)::float8 AS backlog_sum, sum(backlog_samples)::int AS backlog_samples,
                  max(steps_peak) AS steps_peak, sum(steps_waited)::int AS steps_waited, bulkhead_sum_keyed_counts(resource_waits) AS resource_waits
             FROM tenant_metric_spans WHERE tenant_id = ANY($1::text[]) AND span_minutes = $2 AND start >= $3
            GROUP BY tenant_id`,
    values: [tenantIds, window.span, window.from],
  });
  return rows.map((r) => ({
    tenantId: r.tenant_id, claimed: r.claimed, completed: r.completed, failed: r.failed, deferred: r.deferred, lagBuckets: r.lag,
    demand: r.demand, backlog: r.backlog_samples === 0 ? 0 : r.backlog_sum / r.backlog_samples, stepsPeak: r.steps_peak,
    stepsWaited: r.steps_waited, resourceWaits: r.resource_waits,
  }));
}

/** Every tenant of a backend in one minute, together. */
export interface BackendMinute {
  minute: Date;
  claimed: number;
  demand: number;
  /** Left waiting at the minute's end, summed. */
  backlog: number;
  servedTenants: number;
  servedSum: number;
  servedSquares: number;
}

export async function readBackendMinutes(db: Queryable, from: Date, to: Date): Promise<BackendMinute[]> {
  const { rows } = await db.query<{ minute: Date; claimed: number; demand: number; backlog: number; served_tenants: number; served_sum: number; served_squares: number }>({
    name: "read_backend_minutes",
    text: `SELECT minute, claimed::float8 AS claimed, demand::float8 AS demand, backlog::float8 AS backlog, served_tenants, served_sum, served_squares
             FROM backend_metric_minutes WHERE minute >= $1 AND minute < $2 ORDER BY minute`,
    values: [from, to],
  });
  return rows.map((r) => ({
    minute: r.minute, claimed: r.claimed, demand: r.demand, backlog: r.backlog, servedTenants: r.served_tenants, servedSum: r.served_sum, servedSquares: r.served_squares,
  }));
}

/** A tenant's minute as the charts draw it. */
export interface TenantMinuteLine {
  tenantId: string;
  minute: Date;
  claimed: number;
  /** Its last backlog sample: what it left waiting. */
  leftWaiting: number;
}

/** These tenants' minutes in [from, to), claims and what each left waiting (the primary key). */
export async function readTenantLines(db: Queryable, tenantIds: readonly string[], from: Date, to: Date): Promise<TenantMinuteLine[]> {
  if (tenantIds.length === 0) return [];
  const { rows } = await db.query<{ tenant_id: string; minute: Date; claimed: number; left_waiting: number }>({
    name: "read_tenant_lines",
    text: `SELECT tenant_id, minute, claimed, coalesce(backlog_samples[array_length(backlog_samples, 1)], 0) AS left_waiting
             FROM tenant_metrics WHERE tenant_id = ANY($1::text[]) AND minute >= $2 AND minute < $3 ORDER BY minute, tenant_id`,
    values: [tenantIds, from, to],
  });
  return rows.map((r) => ({ tenantId: r.tenant_id, minute: r.minute, claimed: r.claimed, leftWaiting: r.left_waiting }));
}

/** A tenant's minutes summed as its spans would be. */
export function spansOfMinutes(tenantId: string, rows: readonly MetricRow[]): TenantSpans {
  const sum: TenantSpans = {
    tenantId, claimed: 0, completed: 0, failed: 0, deferred: {}, lagBuckets: new Array<number>(LAG_BUCKET_COUNT).fill(0), demand: 0,
    backlog: 0, stepsPeak: 0, stepsWaited: 0, resourceWaits: {},
  };
  let backlogSum = 0, backlogSamples = 0;
  for (const row of rows) {
    sum.claimed += row.claimed;
    sum.completed += row.completed;
    sum.failed += row.failed;
    sum.demand += row.claimed + (row.backlogSamples.at(-1) ?? 0);
    sum.stepsPeak = Math.max(sum.stepsPeak, row.stepsPeak);
    sum.stepsWaited += row.stepsWaited;
    row.lagBuckets.forEach((n, i) => (sum.lagBuckets[i] = (sum.lagBuckets[i] ?? 0) + n));
    for (const sample of row.backlogSamples) backlogSum += sample;
    backlogSamples += row.backlogSamples.length;
    for (const [reason, n] of Object.entries(row.deferred)) sum.deferred[reason] = (sum.deferred[reason] ?? 0) + (n ?? 0);
    for (const [id, n] of Object.entries(row.resourceWaits)) if (typeof n === "number") sum.resourceWaits[id] = (sum.resourceWaits[id] ?? 0) + n;
  }
  sum.backlog = backlogSamples === 0 ? 0 : backlogSum / backlogSamples;
  return sum;
}
