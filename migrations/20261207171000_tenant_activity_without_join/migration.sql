-- tenant_activity_hour on update (20261207121000): each side of the statement summed on its own
-- instead of joining the old rows to the new on (tenant, minute), which PostgreSQL plans as a
-- nested loop over the transition tables (no statistics): an engine's flush of 10,000 tenants'
-- minutes would compare every row with every other. An update keeps a row's tenant and minute,
-- so new less old, each side filtered on the minute alike, is the change.
-- The body is an E-string with each semicolon written as \073 (see 20261203100000).
CREATE OR REPLACE FUNCTION "tenant_activity_hour_on_update"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "tenant_activity_hour" AS a ("tenant_id", "window_from", "claimed", "lag_buckets")
  SELECT x."tenant_id", date_bin(interval ''1 minute'', now(), TIMESTAMPTZ ''2000-01-01 00:00:00+00'') - interval ''59 minutes'', sum(x."s" * x."claimed"), ARRAY[sum(x."s" * coalesce(x."lag_buckets"[1], 0)), sum(x."s" * coalesce(x."lag_buckets"[2], 0)), sum(x."s" * coalesce(x."lag_buckets"[3], 0)), sum(x."s" * coalesce(x."lag_buckets"[4], 0)), sum(x."s" * coalesce(x."lag_buckets"[5], 0)), sum(x."s" * coalesce(x."lag_buckets"[6], 0)), sum(x."s" * coalesce(x."lag_buckets"[7], 0)), sum(x."s" * coalesce(x."lag_buckets"[8], 0)), sum(x."s" * coalesce(x."lag_buckets"[9], 0)), sum(x."s" * coalesce(x."lag_buckets"[10], 0)), sum(x."s" * coalesce(x."lag_buckets"[11], 0)), sum(x."s" * coalesce(x."lag_buckets"[12], 0))]::INTEGER[]
    FROM (SELECT "tenant_id", "claimed", "lag_buckets", 1 AS "s" FROM new_rows WHERE "minute" >= date_bin(interval ''1 minute'', now(), TIMESTAMPTZ ''2000-01-01 00:00:00+00'') - interval ''59 minutes''
          UNION ALL
          SELECT "tenant_id", "claimed", "lag_buckets", -1 FROM old_rows WHERE "minute" >= date_bin(interval ''1 minute'', now(), TIMESTAMPTZ ''2000-01-01 00:00:00+00'') - interval ''59 minutes'') AS x
   GROUP BY x."tenant_id" ORDER BY x."tenant_id"
  ON CONFLICT ("tenant_id") DO UPDATE SET "claimed" = a."claimed" + EXCLUDED."claimed", "lag_buckets" = ARRAY[coalesce(a."lag_buckets"[1], 0) + coalesce(EXCLUDED."lag_buckets"[1], 0), coalesce(a."lag_buckets"[2], 0) + coalesce(EXCLUDED."lag_buckets"[2], 0), coalesce(a."lag_buckets"[3], 0) + coalesce(EXCLUDED."lag_buckets"[3], 0), coalesce(a."lag_buckets"[4], 0) + coalesce(EXCLUDED."lag_buckets"[4], 0), coalesce(a."lag_buckets"[5], 0) + coalesce(EXCLUDED."lag_buckets"[5], 0), coalesce(a."lag_buckets"[6], 0) + coalesce(EXCLUDED."lag_buckets"[6], 0), coalesce(a."lag_buckets"[7], 0) + coalesce(EXCLUDED."lag_buckets"[7], 0), coalesce(a."lag_buckets"[8], 0) + coalesce(EXCLUDED."lag_buckets"[8], 0), coalesce(a."lag_buckets"[9], 0) + coalesce(EXCLUDED."lag_buckets"[9], 0), coalesce(a."lag_buckets"[10], 0) + coalesce(EXCLUDED."lag_buckets"[10], 0), coalesce(a."lag_buckets"[11], 0) + coalesce(EXCLUDED."lag_buckets"[11], 0), coalesce(a."lag_buckets"[12], 0) + coalesce(EXCLUDED."lag_buckets"[12], 0)]::INTEGER[]\073
  RETURN NULL\073
END
';
