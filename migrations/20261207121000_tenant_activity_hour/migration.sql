-- Per tenant, its claims and schedule-lag histogram over the last hour of tenant_metrics: the
-- operator console's tenants table orders every tenant by these (engine/storage/tenant-activity.ts),
-- reading one row per tenant instead of summing 60 minutes of each.
-- window_from is the oldest minute a row counts. Statement triggers on tenant_metrics add every
-- write's change to its minutes from the current minute less 59 on, and the engines move each
-- row's window_from on once a minute by summing its minutes again (which also corrects a minute
-- written late). A row not moved on yet is read less the minutes that have left the hour since.
-- One row per tenant, so there is nothing to prune.
-- A tenant table that a move does not copy: the copy's inserts of tenant_metrics write it again.
-- The histogram has the engine's 12 lag buckets (LAG_BUCKETS_MS and one past the last).
-- The bodies are E-strings with each semicolon written as \073 (see 20261203100000).
CREATE TABLE "tenant_activity_hour" (
  "tenant_id" TEXT NOT NULL,
  "window_from" TIMESTAMPTZ(3) NOT NULL,
  "claimed" INTEGER NOT NULL DEFAULT 0,
  "lag_buckets" INTEGER[] NOT NULL DEFAULT ARRAY[]::INTEGER[],
  CONSTRAINT "tenant_activity_hour_pkey" PRIMARY KEY ("tenant_id")
);

CREATE FUNCTION "tenant_activity_hour_on_insert"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "tenant_activity_hour" AS a ("tenant_id", "window_from", "claimed", "lag_buckets")
  SELECT n."tenant_id", date_bin(interval ''1 minute'', now(), TIMESTAMPTZ ''2000-01-01 00:00:00+00'') - interval ''59 minutes'', sum(n."claimed"), ARRAY[sum(coalesce(n."lag_buckets"[1], 0)), sum(coalesce(n."lag_buckets"[2], 0)), sum(coalesce(n."lag_buckets"[3], 0)), sum(coalesce(n."lag_buckets"[4], 0)), sum(coalesce(n."lag_buckets"[5], 0)), sum(coalesce(n."lag_buckets"[6], 0)), sum(coalesce(n."lag_buckets"[7], 0)), sum(coalesce(n."lag_buckets"[8], 0)), sum(coalesce(n."lag_buckets"[9], 0)), sum(coalesce(n."lag_buckets"[10], 0)), sum(coalesce(n."lag_buckets"[11], 0)), sum(coalesce(n."lag_buckets"[12], 0))]::INTEGER[]
    FROM new_rows n WHERE n."minute" >= date_bin(interval ''1 minute'', now(), TIMESTAMPTZ ''2000-01-01 00:00:00+00'') - interval ''59 minutes''
   GROUP BY n."tenant_id" ORDER BY n."tenant_id"
  ON CONFLICT ("tenant_id") DO UPDATE SET "claimed" = a."claimed" + EXCLUDED."claimed", "lag_buckets" = ARRAY[coalesce(a."lag_buckets"[1], 0) + coalesce(EXCLUDED."lag_buckets"[1], 0), coalesce(a."lag_buckets"[2], 0) + coalesce(EXCLUDED."lag_buckets"[2], 0), coalesce(a."lag_buckets"[3], 0) + coalesce(EXCLUDED."lag_buckets"[3], 0), coalesce(a."lag_buckets"[4], 0) + coalesce(EXCLUDED."lag_buckets"[4], 0), coalesce(a."lag_buckets"[5], 0) + coalesce(EXCLUDED."lag_buckets"[5], 0), coalesce(a."lag_buckets"[6], 0) + coalesce(EXCLUDED."lag_buckets"[6], 0), coalesce(a."lag_buckets"[7], 0) + coalesce(EXCLUDED."lag_buckets"[7], 0), coalesce(a."lag_buckets"[8], 0) + coalesce(EXCLUDED."lag_buckets"[8], 0), coalesce(a."lag_buckets"[9], 0) + coalesce(EXCLUDED."lag_buckets"[9], 0), coalesce(a."lag_buckets"[10], 0) + coalesce(EXCLUDED."lag_buckets"[10], 0), coalesce(a."lag_buckets"[11], 0) + coalesce(EXCLUDED."lag_buckets"[11], 0), coalesce(a."lag_buckets"[12], 0) + coalesce(EXCLUDED."lag_buckets"[12], 0)]::INTEGER[]\073
  RETURN NULL\073
END
';

CREATE FUNCTION "tenant_activity_hour_on_update"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "tenant_activity_hour" AS a ("tenant_id", "window_from", "claimed", "lag_buckets")
  SELECT n."tenant_id", date_bin(interval ''1 minute'', now(), TIMESTAMPTZ ''2000-01-01 00:00:00+00'') - interval ''59 minutes'', sum(n."claimed" - o."claimed"), ARRAY[sum(coalesce(n."lag_buckets"[1], 0) - coalesce(o."lag_buckets"[1], 0)), sum(coalesce(n."lag_buckets"[2], 0) - coalesce(o."lag_buckets"[2], 0)), sum(coalesce(n."lag_buckets"[3], 0) - coalesce(o."lag_buckets"[3], 0)), sum(coalesce(n."lag_buckets"[4], 0) - coalesce(o."lag_buckets"[4], 0)), sum(coalesce(n."lag_buckets"[5], 0) - coalesce(o."lag_buckets"[5], 0)), sum(coalesce(n."lag_buckets"[6], 0) - coalesce(o."lag_buckets"[6], 0)), sum(coalesce(n."lag_buckets"[7], 0) - coalesce(o."lag_buckets"[7], 0)), sum(coalesce(n."lag_buckets"[8], 0) - coalesce(o."lag_buckets"[8], 0)), sum(coalesce(n."lag_buckets"[9], 0) - coalesce(o."lag_buckets"[9], 0)), sum(coalesce(n."lag_buckets"[10], 0) - coalesce(o."lag_buckets"[10], 0)), sum(coalesce(n."lag_buckets"[11], 0) - coalesce(o."lag_buckets"[11], 0)), sum(coalesce(n."lag_buckets"[12], 0) - coalesce(o."lag_buckets"[12], 0))]::INTEGER[]
    FROM new_rows n JOIN old_rows o ON o."tenant_id" = n."tenant_id" AND o."minute" = n."minute"
   WHERE n."minute" >= date_bin(interval ''1 minute'', now(), TIMESTAMPTZ ''2000-01-01 00:00:00+00'') - interval ''59 minutes''
   GROUP BY n."tenant_id" ORDER BY n."tenant_id"
  ON CONFLICT ("tenant_id") DO UPDATE SET "claimed" = a."claimed" + EXCLUDED."claimed", "lag_buckets" = ARRAY[coalesce(a."lag_buckets"[1], 0) + coalesce(EXCLUDED."lag_buckets"[1], 0), coalesce(a."lag_buckets"[2], 0) + coalesce(EXCLUDED."lag_buckets"[2], 0), coalesce(a."lag_buckets"[3], 0) + coalesce(EXCLUDED."lag_buckets"[3], 0), coalesce(a."lag_buckets"[4], 0) + coalesce(EXCLUDED."lag_buckets"[4], 0), coalesce(a."lag_buckets"[5], 0) + coalesce(EXCLUDED."lag_buckets"[5], 0), coalesce(a."lag_buckets"[6], 0) + coalesce(EXCLUDED."lag_buckets"[6], 0), coalesce(a."lag_buckets"[7], 0) + coalesce(EXCLUDED."lag_buckets"[7], 0), coalesce(a."lag_buckets"[8], 0) + coalesce(EXCLUDED."lag_buckets"[8], 0), coalesce(a."lag_buckets"[9], 0) + coalesce(EXCLUDED."lag_buckets"[9], 0), coalesce(a."lag_buckets"[10], 0) + coalesce(EXCLUDED."lag_buckets"[10], 0), coalesce(a."lag_buckets"[11], 0) + coalesce(EXCLUDED."lag_buckets"[11], 0), coalesce(a."lag_buckets"[12], 0) + coalesce(EXCLUDED."lag_buckets"[12], 0)]::INTEGER[]\073
  RETURN NULL\073
END
';

CREATE TRIGGER "tenant_metrics_activity_on_insert" AFTER INSERT ON "tenant_metrics"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "tenant_activity_hour_on_insert"();
CREATE TRIGGER "tenant_metrics_activity_on_update" AFTER UPDATE ON "tenant_metrics"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "tenant_activity_hour_on_update"();

-- The minutes already stored, summed once (migrations run before the engines start).
INSERT INTO "tenant_activity_hour" ("tenant_id", "window_from", "claimed", "lag_buckets")
SELECT n."tenant_id", date_bin(interval '1 minute', now(), TIMESTAMPTZ '2000-01-01 00:00:00+00') - interval '59 minutes', sum(n."claimed"), ARRAY[sum(coalesce(n."lag_buckets"[1], 0)), sum(coalesce(n."lag_buckets"[2], 0)), sum(coalesce(n."lag_buckets"[3], 0)), sum(coalesce(n."lag_buckets"[4], 0)), sum(coalesce(n."lag_buckets"[5], 0)), sum(coalesce(n."lag_buckets"[6], 0)), sum(coalesce(n."lag_buckets"[7], 0)), sum(coalesce(n."lag_buckets"[8], 0)), sum(coalesce(n."lag_buckets"[9], 0)), sum(coalesce(n."lag_buckets"[10], 0)), sum(coalesce(n."lag_buckets"[11], 0)), sum(coalesce(n."lag_buckets"[12], 0))]::INTEGER[]
  FROM "tenant_metrics" n WHERE n."minute" >= date_bin(interval '1 minute', now(), TIMESTAMPTZ '2000-01-01 00:00:00+00') - interval '59 minutes' GROUP BY n."tenant_id";
