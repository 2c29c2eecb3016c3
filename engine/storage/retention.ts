// SQL for the retention pruner (engine/retention): a tenant's terminal instances older than its
// retention are deleted with every row that belongs to them, a bounded batch per statement.
// Claims never wait on it: it locks only terminal rows, which no claim touches, and skips any
// row another transaction holds (a rerun, an operator's read for update).
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

/** The expired instances of a tenant: terminal, finished more than `days` ago (the index on (tenant_id, state, completed_at)). */
const EXPIRED = `tenant_id = $1 AND state IN ('completed', 'failed', 'cancelled') AND completed_at < now() - make_interval(days => $2)`;

/** The tables whose rows belong to an instance, and which of the tenant's rows belong to the doomed ones. */
export const INSTANCE_ROWS: Readonly<Record<string, string>> = {
  worker_task_attempts: "task_id IN (SELECT id FROM tasks)",
  worker_tasks: "id IN (SELECT id FROM tasks)",
  block_outputs: "instance_id IN (SELECT id FROM doomed)",
  signals: "instance_id IN (SELECT id FROM doomed)",
  instance_checkpoints: "instance_id IN (SELECT id FROM doomed)",
  instance_logs: "instance_id IN (SELECT id FROM doomed)",
  instance_audit_log: "instance_id IN (SELECT id FROM doomed)",
  // As the child, and as the parent of a dedupe scope.
  event_dedupe: "(child_instance_id IN (SELECT id FROM doomed) OR scope IN (SELECT 'parent:' || id FROM doomed))",
};

export interface PruneResult {
  /** Instances deleted. */
  instances: number;
  /** Their rows in the other tables, all together. */
  related: number;
}

/**
 * Which of the tenants have an expired instance: one statement for a whole backend, an index
 * probe per tenant. `retention` is in days per tenant.
 */
export async function tenantsWithExpired(db: Queryable, retention: readonly { tenantId: string; days: number }[]): Promise<string[]> {
  if (retention.length === 0) return [];
  const { rows } = await db.query<{ tenant_id: string }>({
    name: "retention_tenants_with_expired",
    text: `SELECT r.tenant_id FROM unnest($1::text[], $2::int[]) AS r(tenant_id, days)
            WHERE EXISTS (SELECT 1 FROM task_instances i
                           WHERE i.tenant_id = r.tenant_id AND i.state IN ('completed', 'failed', 'cancelled')
                             AND i.completed_at < now() - make_interval(days => r.days))`,
    values: [retention.map((r) => r.tenantId), retention.map((r) => r.days)],
  });
  return rows.map((r) => r.tenant_id);
}

/**
 * Deletes up to `limit` expired instances of the tenant and, in the same statement, their
 * outputs, signals, worker tasks and attempts, checkpoints, log lines, audit entries and event
 * dedupe rows (as a child, and as the parent of a dedupe scope).
 */
export function pruneExpired(db: Queryable, tenantId: TenantId, days: number, limit: number): Promise<PruneResult> {
  return deleteInstancesWithRows(db, tenantId, limit, days);
}

/**
 * Deletes up to `limit` of the tenant's instances (with `days`, only those expired) with every
 * row that belongs to them, in one statement; the rows it finds locked are left for the next.
 * Tenant deletion uses it too, for all of a drained tenant's instances.
 */
export async function deleteInstancesWithRows(db: Queryable, tenantId: TenantId, limit: number, days: number | null): Promise<PruneResult> {
  const related = Object.entries(INSTANCE_ROWS);
  const { rows } = await db.query<{ instances: number; related: number }>({
    name: days === null ? "delete_instances_with_rows" : "retention_prune",
    text: `WITH doomed AS (
             SELECT id FROM task_instances WHERE ${days === null ? "tenant_id = $1" : EXPIRED} LIMIT $${days === null ? 2 : 3} FOR UPDATE SKIP LOCKED
           ), tasks AS (
             SELECT id FROM worker_tasks WHERE tenant_id = $1 AND instance_id IN (SELECT id FROM doomed)
           ),
           ${related.map(([table, rowsOfDoomed]) => `gone_${table} AS (DELETE FROM ${table} WHERE tenant_id = $1 AND ${rowsOfDoomed} RETURNING 1)`).join(",\n           ")},
           instances AS (DELETE FROM task_instances WHERE tenant_id = $1 AND id IN (SELECT id FROM doomed) RETURNING 1)
           SELECT (SELECT count(*) FROM instances)::int AS instances,
                  (${related.map(([table]) => `(SELECT count(*) FROM gone_${table})`).join(" + ")})::int AS related`,
    values: days === null ? [tenantId, limit] : [tenantId, days, limit],
  });
  return rows[0]!;
}

/** The tenant's expired instances, counted up to `cap` (an index range, never the whole table). */
export async function countExpired(db: Queryable, tenantId: TenantId, days: number, cap: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>({
    name: "retention_count",
    text: `SELECT count(*)::int AS n FROM (SELECT 1 FROM task_instances WHERE ${EXPIRED} LIMIT $3) s`,
    values: [tenantId, days, cap],
  });
  return rows[0]!.n;
}

export interface RetentionStatus {
  tenantId: string;
  pending: number;
  /** `pending` is the count cap: there are at least that many. */
  pendingCapped: boolean;
  prunedTotal: number;
  countedAt: Date;
  lastPrunedAt: Date | null;
}

/** What a pass found and did for the tenant: `pending` counted now (null: not counted this time), `pruned` deleted. */
export async function recordRetention(
  db: Queryable, tenantId: TenantId, change: { pending: number | null; capped: boolean; pruned: number },
): Promise<void> {
  await db.query({
    name: "retention_record",
    text: `INSERT INTO retention_status AS s (tenant_id, pending, pending_capped, pruned_total, counted_at, last_pruned_at)
           VALUES ($1, greatest(coalesce($2, 0) - $4, 0), $3, $4, now(), CASE WHEN $4 > 0 THEN now() END)
           ON CONFLICT (tenant_id) DO UPDATE SET
             pending = greatest(coalesce($2, s.pending) - $4, 0),
             pending_capped = CASE WHEN $2 IS NULL THEN s.pending_capped ELSE $3 END,
             pruned_total = s.pruned_total + $4,
             counted_at = CASE WHEN $2 IS NULL THEN s.counted_at ELSE now() END,
             last_pruned_at = CASE WHEN $4 > 0 THEN now() ELSE s.last_pruned_at END`,
    values: [tenantId, change.pending, change.capped, change.pruned],
  });
}

/** Clears the pending count of tenants that have nothing expired any more (the pass found none). */
export async function clearRetentionPending(db: Queryable, exceptTenants: readonly string[]): Promise<void> {
  await db.query({
    name: "retention_clear_pending",
    text: `UPDATE retention_status SET pending = 0, pending_capped = false, counted_at = now()
            WHERE pending > 0 AND NOT (tenant_id = ANY($1::text[]))`,
    values: [exceptTenants],
  });
}

/** This backend's tenants with the most pending, then the most recently pruned: at most `limit`. */
export async function listRetentionStatus(db: Queryable, limit: number): Promise<RetentionStatus[]> {
  const { rows } = await db.query<{
    tenant_id: string; pending: number; pending_capped: boolean; pruned_total: string; counted_at: Date; last_pruned_at: Date | null;
  }>({
    name: "retention_list",
    text: `SELECT tenant_id, pending, pending_capped, pruned_total, counted_at, last_pruned_at FROM retention_status
            ORDER BY pending DESC, last_pruned_at DESC NULLS LAST, tenant_id LIMIT $1`,
    values: [limit],
  });
  return rows.map((r) => ({
    tenantId: r.tenant_id, pending: r.pending, pendingCapped: r.pending_capped, prunedTotal: Number(r.pruned_total),
    countedAt: r.counted_at, lastPrunedAt: r.last_pruned_at,
  }));
}
