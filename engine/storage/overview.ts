// SQL for the web app's tenant overview: finished instances per minute over the last hour, and the
// latest failures. Every statement is scoped by tenant_id. The throughput is read from the
// engines' per-minute tenant_metrics (its primary key, 60 rows at most), never from the
// instances; the failures from the index on (tenant_id, state, completed_at DESC, id DESC).
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

export const THROUGHPUT_MINUTES = 60;
const MINUTE_MS = 60_000;

export interface ThroughputBucket {
  /** The bucket's first instant (inclusive); it ends a minute later (exclusive). */
  start: Date;
  completed: number;
  failed: number;
}

/**
 * `THROUGHPUT_MINUTES` one-minute buckets, oldest first, the last one holding the minute `now` is in
 * (so the chart ends at the present): the instances the engines ended completed or failed in each
 * minute, as they counted them in tenant_metrics (a cancellation is not throughput).
 */
export async function instanceThroughput(db: Queryable, tenantId: TenantId, now: Date): Promise<ThroughputBucket[]> {
  const end = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  const start = end - THROUGHPUT_MINUTES * MINUTE_MS;
  const { rows } = await db.query<{ minute: Date; completed: number; failed: number }>({
    name: "overview_instance_throughput",
    text: `SELECT minute, completed, failed FROM tenant_metrics
            WHERE tenant_id = $1 AND minute >= $2::timestamptz AND minute < $3::timestamptz`,
    values: [tenantId, new Date(start), new Date(end)],
  });
  const buckets = Array.from({ length: THROUGHPUT_MINUTES }, (_, i) => ({
    start: new Date(start + i * MINUTE_MS), completed: 0, failed: 0,
  }));
  for (const row of rows) {
    const bucket = buckets[Math.floor((row.minute.getTime() - start) / MINUTE_MS)];
    if (bucket) {
      bucket.completed += row.completed;
      bucket.failed += row.failed;
    }
  }
  return buckets;
}

export interface RecentFailure {
  id: string;
  sequenceId: string;
  /** null when the sequence is gone (or never was the tenant's). */
  sequenceName: string | null;
  sequenceVersion: number | null;
  completedAt: Date | null;
}

/** The tenant's latest `limit` failed instances, newest failure first. */
export async function listRecentFailures(db: Queryable, tenantId: TenantId, limit: number): Promise<RecentFailure[]> {
  const { rows } = await db.query<{
    id: string; sequence_id: string; sequence_name: string | null; sequence_version: number | null; completed_at: Date | null;
  }>({
    name: "overview_recent_failures",
    text: `SELECT f.id, f.sequence_id, s.name AS sequence_name, s.version AS sequence_version, f.completed_at
             FROM (SELECT id, tenant_id, sequence_id, completed_at
                     FROM task_instances
                    WHERE tenant_id = $1 AND state = 'failed'
                    ORDER BY completed_at DESC, id DESC
                    LIMIT $2) f
             LEFT JOIN sequences s ON s.tenant_id = f.tenant_id AND s.id = f.sequence_id
            ORDER BY f.completed_at DESC, f.id DESC`,
    values: [tenantId, limit],
  });
  return rows.map((row) => ({
    id: row.id, sequenceId: row.sequence_id, sequenceName: row.sequence_name, sequenceVersion: row.sequence_version,
    completedAt: row.completed_at,
  }));
}
