-- Rollups of tenant_metrics, kept by the same statement that writes the minutes
-- (engine/storage/metric-rollups.ts), so the fairness page and the console's tenants table read
-- a few rows per tenant instead of every minute of the range.

-- Per tenant, its minutes summed over 5-minute and 60-minute spans (span_minutes), starting on
-- whole spans of UTC time. demand sums each minute's claimed plus what was left waiting at its
-- end, backlog_sum and backlog_samples the backlog samples, for their mean. A tenant table
-- (moved with the tenant, like tenant_metrics).
CREATE TABLE "tenant_metric_spans" (
  "tenant_id" TEXT NOT NULL,
  "span_minutes" SMALLINT NOT NULL CHECK ("span_minutes" IN (5, 60)),
  "start" TIMESTAMPTZ(3) NOT NULL,
  "claimed" INTEGER NOT NULL DEFAULT 0,
  "completed" INTEGER NOT NULL DEFAULT 0,
  "failed" INTEGER NOT NULL DEFAULT 0,
  "deferred" JSONB NOT NULL DEFAULT '{}',
  "lag_buckets" INTEGER[] NOT NULL DEFAULT ARRAY[]::INTEGER[],
  "demand" BIGINT NOT NULL DEFAULT 0,
  "backlog_sum" BIGINT NOT NULL DEFAULT 0,
  "backlog_samples" INTEGER NOT NULL DEFAULT 0,
  "steps_peak" INTEGER NOT NULL DEFAULT 0,
  "steps_waited" INTEGER NOT NULL DEFAULT 0,
  "resource_waits" JSONB NOT NULL DEFAULT '{}',
  CONSTRAINT "tenant_metric_spans_pkey" PRIMARY KEY ("tenant_id", "span_minutes", "start")
);
CREATE INDEX "tenant_metric_spans_start_idx" ON "tenant_metric_spans" ("span_minutes", "start");

-- Per minute, every tenant of this backend together: claims, demand, what was left waiting, and
-- the tenants with demand with the sum and the sum of squares of their service ratios
-- (claimed / demand), from which Jain's index is (sum)^2 / (n * squares). Kept by deltas: each
-- write adds its change, so a minute counts every tenant once across backends even while a
-- moved tenant's old copy waits for cleanup. Not a tenant table (no tenant_id).
CREATE TABLE "backend_metric_minutes" (
  "minute" TIMESTAMPTZ(3) NOT NULL,
  "claimed" BIGINT NOT NULL DEFAULT 0,
  "demand" BIGINT NOT NULL DEFAULT 0,
  "backlog" BIGINT NOT NULL DEFAULT 0,
  "served_tenants" INTEGER NOT NULL DEFAULT 0,
  "served_sum" DOUBLE PRECISION NOT NULL DEFAULT 0,
  "served_squares" DOUBLE PRECISION NOT NULL DEFAULT 0,
  CONSTRAINT "backend_metric_minutes_pkey" PRIMARY KEY ("minute")
);

-- Histograms and keyed counts summed over rows.
CREATE AGGREGATE "bulkhead_sum_counts"(INTEGER[]) (SFUNC = "bulkhead_add_counts", STYPE = INTEGER[], INITCOND = '{}');
CREATE AGGREGATE "bulkhead_sum_keyed_counts"(JSONB) (SFUNC = "bulkhead_add_keyed_counts", STYPE = JSONB, INITCOND = '{}');

-- The minutes of the last day already stored, rolled up once (what the pages read, at most a day back).
CREATE TEMPORARY TABLE "rollup_minutes" AS
SELECT t.*, w.span, date_bin(make_interval(mins => w.span), t."minute", TIMESTAMPTZ '2000-01-01 00:00:00+00') AS start
  FROM "tenant_metrics" t CROSS JOIN (VALUES (5::smallint), (60::smallint)) AS w(span)
 WHERE t."minute" >= date_trunc('hour', now() - interval '25 hours');

INSERT INTO "tenant_metric_spans" ("tenant_id", "span_minutes", "start", "claimed", "completed", "failed", "deferred", "lag_buckets", "demand", "backlog_sum", "backlog_samples", "steps_peak", "steps_waited", "resource_waits")
SELECT b.tenant_id, b.span, b.start, b.claimed, b.completed, b.failed, coalesce(d.counts, '{}'::jsonb), b.lag_buckets, b.demand,
       b.backlog_sum, b.backlog_samples, b.steps_peak, b.steps_waited, coalesce(r.counts, '{}'::jsonb)
  FROM (SELECT tenant_id, span, start, sum(claimed)::int AS claimed, sum(completed)::int AS completed, sum(failed)::int AS failed,
               ARRAY[sum(coalesce(lag_buckets[1], 0)), sum(coalesce(lag_buckets[2], 0)), sum(coalesce(lag_buckets[3], 0)), sum(coalesce(lag_buckets[4], 0)), sum(coalesce(lag_buckets[5], 0)), sum(coalesce(lag_buckets[6], 0)), sum(coalesce(lag_buckets[7], 0)), sum(coalesce(lag_buckets[8], 0)), sum(coalesce(lag_buckets[9], 0)), sum(coalesce(lag_buckets[10], 0)), sum(coalesce(lag_buckets[11], 0)), sum(coalesce(lag_buckets[12], 0))]::int[] AS lag_buckets,
               sum(claimed + coalesce(backlog_samples[array_length(backlog_samples, 1)], 0)) AS demand,
               sum(coalesce((SELECT sum(x) FROM unnest(backlog_samples) AS x), 0)) AS backlog_sum,
               sum(coalesce(array_length(backlog_samples, 1), 0))::int AS backlog_samples,
               max(steps_peak) AS steps_peak, sum(steps_waited)::int AS steps_waited
          FROM "rollup_minutes" GROUP BY 1, 2, 3) b
  LEFT JOIN (SELECT tenant_id, span, start, jsonb_object_agg(key, n) AS counts
               FROM (SELECT m.tenant_id, m.span, m.start, e.key, sum(e.value::int) AS n FROM "rollup_minutes" m CROSS JOIN LATERAL jsonb_each_text(m.deferred) e GROUP BY 1, 2, 3, 4) x
              GROUP BY 1, 2, 3) d ON d.tenant_id = b.tenant_id AND d.span = b.span AND d.start = b.start
  LEFT JOIN (SELECT tenant_id, span, start, jsonb_object_agg(key, n) AS counts
               FROM (SELECT m.tenant_id, m.span, m.start, e.key, sum(e.value::int) AS n FROM "rollup_minutes" m CROSS JOIN LATERAL jsonb_each_text(m.resource_waits) e GROUP BY 1, 2, 3, 4) x
              GROUP BY 1, 2, 3) r ON r.tenant_id = b.tenant_id AND r.span = b.span AND r.start = b.start;

INSERT INTO "backend_metric_minutes" ("minute", "claimed", "demand", "backlog", "served_tenants", "served_sum", "served_squares")
SELECT "minute", sum("claimed"), sum("claimed" + "left_waiting"), sum("left_waiting"), count(*) FILTER (WHERE "claimed" + "left_waiting" > 0),
       coalesce(sum("claimed"::float8 / nullif("claimed" + "left_waiting", 0)), 0),
       coalesce(sum(("claimed"::float8 / nullif("claimed" + "left_waiting", 0)) ^ 2), 0)
  FROM (SELECT "minute", "claimed", coalesce("backlog_samples"[array_length("backlog_samples", 1)], 0) AS "left_waiting"
          FROM "tenant_metrics" WHERE "minute" >= date_trunc('hour', now() - interval '25 hours')) AS m
 GROUP BY "minute";

DROP TABLE "rollup_minutes";
