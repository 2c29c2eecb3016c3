-- Merging a batch of per-minute tenant metrics into the stored minute (engine/storage/metrics.ts):
-- histograms add element by element, deferral counts add key by key.
CREATE FUNCTION "bulkhead_add_counts"(a INTEGER[], b INTEGER[]) RETURNS INTEGER[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg(coalesce(a[i], 0) + coalesce(b[i], 0) ORDER BY i), ARRAY[]::INTEGER[])
    FROM generate_series(1, greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0))) AS i
$$;

CREATE FUNCTION "bulkhead_add_keyed_counts"(a JSONB, b JSONB) RETURNS JSONB
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_object_agg(key, total), '{}'::jsonb)
    FROM (SELECT key, sum(value::int) AS total
            FROM (SELECT * FROM jsonb_each_text(a) UNION ALL SELECT * FROM jsonb_each_text(b)) AS both_sides
           GROUP BY key) AS sums
$$;

-- The fairness page reads every tenant's recent minutes.
CREATE INDEX "tenant_metrics_minute_idx" ON "tenant_metrics" ("minute");
