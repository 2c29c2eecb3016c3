// The rollups of tenant_metrics (migration 20261207113000): per tenant, its minutes summed over
// 5- and 60-minute spans (tenant_metric_spans, a tenant table), and per minute every tenant of
// the backend together (backend_metric_minutes). Both are kept by the statement that writes the
// minutes (writeTenantMetrics): it returns each written row as it now stands, and since every
// column of a minute only adds up (backlog samples are appended), the row as it stood before is
// known too, so each span and minute gets exactly the change. Rows written any other way (a
// benchmark's seed) are rolled up with rebuildMetricRollups.
import { LAG_BUCKETS_MS } from "../metrics/tenant-metrics.ts";
import type { Queryable } from "./transaction.ts";

/** The span widths kept, in minutes: short ranges read the 5-minute spans, long ones the hourly. */
export const SPAN_MINUTES = [5, 60] as const;
export type SpanMinutes = (typeof SPAN_MINUTES)[number];

/** Spans start on whole spans of UTC time (date_bin's origin). */
const ORIGIN = "TIMESTAMPTZ '2000-01-01 00:00:00+00'";
const spanStart = (span: string, minute: string) => `date_bin(make_interval(mins => ${span}), ${minute}, ${ORIGIN})`;

/** The start of the `span`-minute span holding `at`. */
export function spanStartOf(at: Date | number, span: SpanMinutes): Date {
  const ms = span * 60_000;
  const t = typeof at === "number" ? at : at.getTime();
  return new Date(Math.floor(t / ms) * ms);
}

/** The number of lag buckets a histogram has (the bounds and one past the last). */
export const LAG_BUCKET_COUNT = LAG_BUCKETS_MS.length + 1;

/** `sum(<column>[1]), …` for every lag bucket: summing a histogram in place (no unnest). */
export const sumOfBuckets = (column: string) =>
  Array.from({ length: LAG_BUCKET_COUNT }, (_, i) => `sum(coalesce(${column}[${i + 1}], 0))`).join(", ");

/** `a + b` of two histograms, bucket by bucket, inline (no function call per row). */
export const addBuckets = (a: string, b: string) =>
  `ARRAY[${Array.from({ length: LAG_BUCKET_COUNT }, (_, i) => `coalesce(${a}[${i + 1}], 0) + coalesce(${b}[${i + 1}], 0)`).join(", ")}]::int[]`;

/** `a + b` of two keyed counts; the common empty `b` costs nothing. */
export const addKeyed = (a: string, b: string) => `CASE WHEN ${b} = '{}'::jsonb THEN ${a} ELSE bulkhead_add_keyed_counts(${a}, ${b}) END`;

/** The sum of a JSON array histogram column over rows, bucket by bucket. */
const sumOfJsonBuckets = (column: string) =>
  `ARRAY[${Array.from({ length: LAG_BUCKET_COUNT }, (_, i) => `sum(coalesce((${column}->>${i})::int, 0))`).join(", ")}]::int[]`;

/** The sum of keyed counts over rows, calling the function only for rows that have any. */
const sumOfKeyed = (column: string) => `coalesce(bulkhead_sum_keyed_counts(${column}) FILTER (WHERE ${column} <> '{}'::jsonb), '{}'::jsonb)`;

/**
 * The CTEs and final INSERT that follow the minutes' upsert in writeTenantMetrics: `input` is
 * the batch (its `backlog` and `lag` still JSON arrays), `written` the upsert's RETURNING
 * (tenant_id, minute, claimed, backlog_samples as they now stand). Before the write the row had
 * claimed − the batch's claims and the samples but the batch's last ones, so what it had left
 * waiting (its last sample) and its demand (claimed + left waiting) are known before and after.
 */
export const ROLLUP_WRITE = `
change AS (
  SELECT w.tenant_id, w.minute, r.claimed, r.completed, r.failed, r.deferred, r.lag, r.steps_peak, r.steps_waited, r.resource_waits,
         jsonb_array_length(r.backlog) AS samples,
         (SELECT coalesce(sum(x::int), 0) FROM jsonb_array_elements_text(r.backlog) AS x) AS sample_sum,
         w.claimed AS claimed_now, w.claimed - r.claimed AS claimed_before,
         coalesce(w.backlog_samples[n.len], 0) AS left_now,
         coalesce(w.backlog_samples[n.len - jsonb_array_length(r.backlog)], 0) AS left_before
    FROM written w JOIN input r ON r.tenant_id = w.tenant_id AND r.minute = w.minute
         CROSS JOIN LATERAL (SELECT coalesce(array_length(w.backlog_samples, 1), 0) AS len) n
),
delta AS (
  SELECT c.*, c.claimed_now + c.left_now AS demand_now, c.claimed_before + c.left_before AS demand_before FROM change c
),
spans AS (
  INSERT INTO tenant_metric_spans AS s (tenant_id, span_minutes, start, claimed, completed, failed, deferred, lag_buckets, demand, backlog_sum, backlog_samples, steps_peak, steps_waited, resource_waits)
  SELECT d.tenant_id, w.span, ${spanStart("w.span", "d.minute")},
         sum(d.claimed), sum(d.completed), sum(d.failed), ${sumOfKeyed("d.deferred")}, ${sumOfJsonBuckets("d.lag")},
         sum(d.demand_now - d.demand_before), sum(d.sample_sum), sum(d.samples), max(d.steps_peak), sum(d.steps_waited),
         ${sumOfKeyed("d.resource_waits")}
    FROM delta d CROSS JOIN (VALUES ${SPAN_MINUTES.map((m) => `(${m}::smallint)`).join(", ")}) AS w(span)
   GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, span_minutes, start) DO UPDATE SET
    claimed = s.claimed + EXCLUDED.claimed,
    completed = s.completed + EXCLUDED.completed,
    failed = s.failed + EXCLUDED.failed,
    deferred = ${addKeyed("s.deferred", "EXCLUDED.deferred")},
    lag_buckets = ${addBuckets("s.lag_buckets", "EXCLUDED.lag_buckets")},
    demand = s.demand + EXCLUDED.demand,
    backlog_sum = s.backlog_sum + EXCLUDED.backlog_sum,
    backlog_samples = s.backlog_samples + EXCLUDED.backlog_samples,
    steps_peak = GREATEST(s.steps_peak, EXCLUDED.steps_peak),
    steps_waited = s.steps_waited + EXCLUDED.steps_waited,
    resource_waits = ${addKeyed("s.resource_waits", "EXCLUDED.resource_waits")}
)
INSERT INTO backend_metric_minutes AS f (minute, claimed, demand, backlog, served_tenants, served_sum, served_squares)
SELECT d.minute, sum(d.claimed), sum(d.demand_now - d.demand_before), sum(d.left_now - d.left_before),
       sum((d.demand_now > 0)::int - (d.demand_before > 0)::int),
       sum(coalesce(d.claimed_now::float8 / nullif(d.demand_now, 0), 0) - coalesce(d.claimed_before::float8 / nullif(d.demand_before, 0), 0)),
       sum(coalesce((d.claimed_now::float8 / nullif(d.demand_now, 0)) ^ 2, 0) - coalesce((d.claimed_before::float8 / nullif(d.demand_before, 0)) ^ 2, 0))
  FROM delta d
 GROUP BY d.minute ORDER BY d.minute
ON CONFLICT (minute) DO UPDATE SET
  claimed = f.claimed + EXCLUDED.claimed,
  demand = f.demand + EXCLUDED.demand,
  backlog = f.backlog + EXCLUDED.backlog,
  served_tenants = f.served_tenants + EXCLUDED.served_tenants,
  served_sum = f.served_sum + EXCLUDED.served_sum,
  served_squares = f.served_squares + EXCLUDED.served_squares`;

/** A minute's last backlog sample (what it left waiting), 0 without one. */
const LEFT_WAITING = "coalesce(backlog_samples[array_length(backlog_samples, 1)], 0)";

/**
 * Rolls up the stored minutes in [from, to) again from tenant_metrics, replacing the spans and
 * minutes they touch (whole spans: `from` is taken back to the start of its hour). For rows
 * written without writeTenantMetrics: a benchmark's or a test's seed.
 */
export async function rebuildMetricRollups(db: Queryable, from: Date, to: Date): Promise<void> {
  const start = spanStartOf(from, 60);
  const end = new Date(spanStartOf(new Date(to.getTime() - 1), 60).getTime() + 3_600_000);
  await db.query({ text: "DELETE FROM tenant_metric_spans WHERE start >= $1 AND start < $2", values: [start, end] });
  await db.query({ text: "DELETE FROM backend_metric_minutes WHERE minute >= $1 AND minute < $2", values: [start, end] });
  const spans = `(VALUES ${SPAN_MINUTES.map((m) => `(${m}::smallint)`).join(", ")}) AS w(span)`;
  // Keyed counts summed key by key and histograms bucket by bucket: no function call per row.
  const keyed = (column: string) => `SELECT tenant_id, span, start, jsonb_object_agg(key, n) AS counts
      FROM (SELECT m.tenant_id, m.span, m.start, e.key, sum(e.value::int) AS n FROM m CROSS JOIN LATERAL jsonb_each_text(m.${column}) e GROUP BY 1, 2, 3, 4) x
     GROUP BY 1, 2, 3`;
  await db.query({
    text: `WITH m AS (
             SELECT t.*, w.span, ${spanStart("w.span", "t.minute")} AS start FROM tenant_metrics t CROSS JOIN ${spans}
              WHERE t.minute >= $1 AND t.minute < $2
           ),
           base AS (
             SELECT tenant_id, span, start, sum(claimed)::int AS claimed, sum(completed)::int AS completed, sum(failed)::int AS failed,
                    ARRAY[${sumOfBuckets("lag_buckets")}]::int[] AS lag_buckets,
                    sum(claimed + ${LEFT_WAITING}) AS demand,
                    sum(coalesce((SELECT sum(x) FROM unnest(backlog_samples) AS x), 0)) AS backlog_sum,
                    sum(coalesce(array_length(backlog_samples, 1), 0))::int AS backlog_samples,
                    max(steps_peak) AS steps_peak, sum(steps_waited)::int AS steps_waited
               FROM m GROUP BY 1, 2, 3
           ),
           deferred AS (${keyed("deferred")}),
           waits AS (${keyed("resource_waits")})
           INSERT INTO tenant_metric_spans (tenant_id, span_minutes, start, claimed, completed, failed, deferred, lag_buckets, demand, backlog_sum, backlog_samples, steps_peak, steps_waited, resource_waits)
           SELECT b.tenant_id, b.span, b.start, b.claimed, b.completed, b.failed, coalesce(d.counts, '{}'::jsonb), b.lag_buckets, b.demand,
                  b.backlog_sum, b.backlog_samples, b.steps_peak, b.steps_waited, coalesce(r.counts, '{}'::jsonb)
             FROM base b
             LEFT JOIN deferred d ON d.tenant_id = b.tenant_id AND d.span = b.span AND d.start = b.start
             LEFT JOIN waits r ON r.tenant_id = b.tenant_id AND r.span = b.span AND r.start = b.start`,
    values: [start, end],
  });
  await db.query({
    text: `INSERT INTO backend_metric_minutes (minute, claimed, demand, backlog, served_tenants, served_sum, served_squares)
           SELECT minute, sum(claimed), sum(claimed + left_waiting), sum(left_waiting), count(*) FILTER (WHERE claimed + left_waiting > 0),
                  coalesce(sum(claimed::float8 / nullif(claimed + left_waiting, 0)), 0),
                  coalesce(sum((claimed::float8 / nullif(claimed + left_waiting, 0)) ^ 2), 0)
             FROM (SELECT minute, claimed, ${LEFT_WAITING} AS left_waiting FROM tenant_metrics WHERE minute >= $1 AND minute < $2) m
            GROUP BY minute`,
    values: [start, end],
  });
}

/** Deletes spans and minutes older than `before`, at most `limit` rows of each a call; returns how many went. */
export async function pruneMetricRollups(db: Queryable, before: Date, limit = 10_000): Promise<number> {
  const spans = await db.query({
    name: "prune_tenant_metric_spans",
    text: `DELETE FROM tenant_metric_spans WHERE ctid IN (SELECT ctid FROM tenant_metric_spans WHERE start < $1 LIMIT $2)`,
    values: [before, limit],
  });
  const minutes = await db.query({
    name: "prune_backend_metric_minutes",
    text: `DELETE FROM backend_metric_minutes WHERE minute < $1 AND minute IN (SELECT minute FROM backend_metric_minutes WHERE minute < $1 ORDER BY minute LIMIT $2)`,
    values: [before, limit],
  });
  return (spans.rowCount ?? 0) + (minutes.rowCount ?? 0);
}
