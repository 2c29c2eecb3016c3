// SQL of tenant_metrics: the engine's batched writes, its backlog samples, and the reads behind
// the operator's fairness page and the Prometheus endpoint. One row per (tenant, minute).
import { LAG_BUCKETS_MS, type MetricRow } from "../metrics/tenant-metrics.ts";
import { addBuckets, addKeyed, pruneMetricRollups, ROLLUP_WRITE } from "./metric-rollups.ts";
import type { Queryable } from "./transaction.ts";

/**
 * Adds a batch of per-minute counts to the stored minutes and their rollups (metric-rollups.ts),
 * in one statement. The minutes are written in key order, so two engines' batches lock shared
 * rows in the same order.
 */
export async function writeTenantMetrics(db: Queryable, rows: readonly MetricRow[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) => (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : a.minute.getTime() - b.minute.getTime()));
  await db.query({
    name: "write_tenant_metrics",
    text: `WITH input AS (
             SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::int[], $5::int[], $6::jsonb[], $7::jsonb[], $8::jsonb[], $9::int[], $10::int[], $11::jsonb[])
                    AS r(tenant_id, minute, claimed, completed, failed, deferred, lag, backlog, steps_peak, steps_waited, resource_waits)
           ),
           written AS (
             INSERT INTO tenant_metrics AS m (tenant_id, minute, claimed, completed, failed, deferred, lag_buckets, backlog_samples, steps_peak, steps_waited, resource_waits)
             SELECT r.tenant_id, r.minute, r.claimed, r.completed, r.failed, r.deferred,
                    ARRAY(SELECT jsonb_array_elements_text(r.lag)::int), ARRAY(SELECT jsonb_array_elements_text(r.backlog)::int),
                    r.steps_peak, r.steps_waited, r.resource_waits
               FROM input r ORDER BY r.tenant_id, r.minute
             ON CONFLICT (tenant_id, minute) DO UPDATE SET
               claimed = m.claimed + EXCLUDED.claimed,
               completed = m.completed + EXCLUDED.completed,
               failed = m.failed + EXCLUDED.failed,
               deferred = ${addKeyed("m.deferred", "EXCLUDED.deferred")},
               lag_buckets = ${addBuckets("m.lag_buckets", "EXCLUDED.lag_buckets")},
               backlog_samples = m.backlog_samples || EXCLUDED.backlog_samples,
               -- the peak of one engine process (several processes' peaks are not summed: each has its own slots)
               steps_peak = GREATEST(m.steps_peak, EXCLUDED.steps_peak),
               steps_waited = m.steps_waited + EXCLUDED.steps_waited,
               resource_waits = ${addKeyed("m.resource_waits", "EXCLUDED.resource_waits")}
             RETURNING m.tenant_id, m.minute, m.claimed, m.backlog_samples
           ),${ROLLUP_WRITE}`,
    values: [
      sorted.map((r) => r.tenantId), sorted.map((r) => r.minute), sorted.map((r) => r.claimed), sorted.map((r) => r.completed),
      sorted.map((r) => r.failed), sorted.map((r) => JSON.stringify(r.deferred)), sorted.map((r) => JSON.stringify(r.lagBuckets)),
      sorted.map((r) => JSON.stringify(r.backlogSamples)), sorted.map((r) => r.stepsPeak), sorted.map((r) => r.stepsWaited),
      sorted.map((r) => JSON.stringify(r.resourceWaits)),
    ],
  });
}

/** Due but unclaimed instances per tenant, now: the backlog sample. `onlyTenants` null: all. */
export async function dueBacklog(db: Queryable, now: Date, onlyTenants: string[] | null): Promise<Map<string, number>> {
  const { rows } = await db.query<{ tenant_id: string; n: number }>({
    name: "due_backlog",
    text: `SELECT tenant_id, count(*)::int AS n FROM task_instances
            WHERE state = 'scheduled' AND next_fire_at <= $1 AND ($2::text[] IS NULL OR tenant_id = ANY($2::text[]))
            GROUP BY tenant_id`,
    values: [now, onlyTenants],
  });
  return new Map(rows.map((r) => [r.tenant_id, r.n]));
}

/** Every tenant's minutes in [from, to), oldest first: what the fairness page draws. */
export async function readTenantMetrics(db: Queryable, from: Date, to: Date): Promise<MetricRow[]> {
  const { rows } = await db.query<{
    tenant_id: string; minute: Date; claimed: number; completed: number; failed: number;
    deferred: MetricRow["deferred"]; lag_buckets: number[] | null; backlog_samples: number[] | null; steps_peak: number; steps_waited: number;
    resource_waits: Record<string, number>;
  }>({
    name: "read_tenant_metrics",
    text: `SELECT tenant_id, minute, claimed, completed, failed, deferred, lag_buckets, backlog_samples, steps_peak, steps_waited, resource_waits
             FROM tenant_metrics WHERE minute >= $1 AND minute < $2 ORDER BY minute, tenant_id`,
    values: [from, to],
  });
  return rows.map((r) => ({
    tenantId: r.tenant_id, minute: r.minute, claimed: r.claimed, completed: r.completed, failed: r.failed,
    deferred: r.deferred, lagBuckets: r.lag_buckets ?? [], backlogSamples: r.backlog_samples ?? [],
    stepsPeak: r.steps_peak, stepsWaited: r.steps_waited, resourceWaits: r.resource_waits,
  }));
}

/**
 * Deletes minutes older than `before`, at most `limit` rows a call so one sweep never holds many
 * locks; returns how many went. Any engine may run it: deletes of the same rows do not conflict.
 */
export async function pruneTenantMetrics(db: Queryable, before: Date, limit = 10_000): Promise<number> {
  const { rowCount } = await db.query({
    name: "prune_tenant_metrics",
    text: `DELETE FROM tenant_metrics WHERE ctid IN (SELECT ctid FROM tenant_metrics WHERE minute < $1 LIMIT $2)`,
    values: [before, limit],
  });
  // Their rollups go with them.
  return (rowCount ?? 0) + (await pruneMetricRollups(db, before, limit));
}

/**
 * Per tenant with minutes in [from, to): its claims and its schedule-lag histogram summed over
 * them, for ordering every tenant by either. One pass over the window's rows (the minute index),
 * the histogram summed bucket by bucket (no unnest: a row's array is read in place).
 */
export async function sumTenantActivity(db: Queryable, from: Date, to: Date): Promise<{ tenantId: string; claimed: number; lagBuckets: number[] }[]> {
  const buckets = Array.from({ length: LAG_BUCKETS_MS.length + 1 }, (_, i) => `sum(coalesce(lag_buckets[${i + 1}], 0))`).join(", ");
  const { rows } = await db.query<{ tenant_id: string; claimed: number; lag_buckets: number[] }>({
    name: "sum_tenant_activity",
    text: `SELECT tenant_id, sum(claimed)::int AS claimed, ARRAY[${buckets}]::int[] AS lag_buckets
             FROM tenant_metrics WHERE minute >= $1 AND minute < $2 GROUP BY tenant_id`,
    values: [from, to],
  });
  return rows.map((r) => ({ tenantId: r.tenant_id, claimed: r.claimed, lagBuckets: r.lag_buckets }));
}

/** These tenants' minutes in [from, to), oldest first (the primary key: tenant, then minute). */
export async function readTenantMetricsOf(db: Queryable, tenantIds: readonly string[], from: Date, to: Date): Promise<MetricRow[]> {
  if (tenantIds.length === 0) return [];
  const { rows } = await db.query<{
    tenant_id: string; minute: Date; claimed: number; completed: number; failed: number;
    deferred: MetricRow["deferred"]; lag_buckets: number[] | null; backlog_samples: number[] | null; steps_peak: number; steps_waited: number;
    resource_waits: Record<string, number>;
  }>({
    name: "read_tenant_metrics_of",
    text: `SELECT tenant_id, minute, claimed, completed, failed, deferred, lag_buckets, backlog_samples, steps_peak, steps_waited, resource_waits
             FROM tenant_metrics WHERE tenant_id = ANY($1::text[]) AND minute >= $2 AND minute < $3 ORDER BY minute, tenant_id`,
    values: [tenantIds, from, to],
  });
  return rows.map((r) => ({
    tenantId: r.tenant_id, minute: r.minute, claimed: r.claimed, completed: r.completed, failed: r.failed,
    deferred: r.deferred, lagBuckets: r.lag_buckets ?? [], backlogSamples: r.backlog_samples ?? [],
    stepsPeak: r.steps_peak, stepsWaited: r.steps_waited, resourceWaits: r.resource_waits,
  }));
}
