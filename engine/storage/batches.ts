// Work over many of one tenant's instances, a batch at a time: each batch is its own short
// statement or transaction on a connection taken through the tenant's share, so a bulk action
// over 100,000 instances never holds more than one batch of row locks, one connection of the
// tenant's share, or one statement's worth of time, and other tenants' claims and commits go on
// between (and beside) its batches.
import pg from "pg";
import type { TenantConnections } from "./connection-shares.ts";
import type { TenantId } from "./ids.ts";

/** Rows per batch: one statement locks at most this many instances. */
export const BATCH_SIZE = 1000;

interface Key {
  createdAt: Date | string;
  id: string;
}

const BEFORE_EVERYTHING: Key = { createdAt: "-infinity", id: "00000000-0000-0000-0000-000000000000" };

/**
 * Hands `apply` the ids of the tenant's instances matching `conditions`, BATCH_SIZE at a time, and
 * sums what it returns. The walk is a keyset over (created_at, id), an order the tenant's
 * (tenant_id, created_at, id) index serves, and it reads no row locks: `apply` locks its batch
 * itself (in id order, rechecking what it relies on). Only instances created before the walk
 * started are visited, so a tenant creating instances as fast as the walk goes cannot make it
 * endless.
 */
export async function forEachBatch(
  db: TenantConnections,
  tenantId: TenantId,
  conditions: (values: unknown[]) => string[],
  apply: (ids: string[]) => Promise<number>,
  batchSize = BATCH_SIZE,
): Promise<number> {
  // Rounded as created_at (timestamptz(3)) is, or a row created in the walk's last half
  // millisecond would be stored later than a start cut to the millisecond by a JS Date.
  const { rows: [start] } = await db.query<{ now: Date }>("SELECT now()::timestamptz(3) AS now");
  let after = BEFORE_EVERYTHING;
  let total = 0;
  for (;;) {
    const values: unknown[] = [tenantId, start!.now, after.createdAt, after.id, batchSize];
    const where = ["tenant_id = $1", "created_at <= $2", "(created_at, id) > ($3::timestamptz, $4::uuid)", ...conditions(values)];
    const { rows } = await db.query<{ id: string; created_at: Date }>(
      `SELECT id, created_at FROM task_instances WHERE ${where.join(" AND ")} ORDER BY created_at, id LIMIT $5`,
      values,
    );
    if (rows.length > 0) total += await withDeadlockRetry(() => apply(rows.map((row) => row.id)));
    if (rows.length < batchSize) return total;
    const last = rows[rows.length - 1]!;
    after = { createdAt: last.created_at, id: last.id };
  }
}

/** Deadlock and serialization failures: PostgreSQL rolled the batch back whole, so it may simply run again. */
const RETRYABLE = new Set(["40P01", "40001"]);

/**
 * Runs one batch's work again after PostgreSQL broke a deadlock by aborting it. A batch locks
 * its rows in id order, but a waiting parent and its child may both be in one batch, and a
 * single state change takes a child before its parent: the two can meet in a cycle, rarely.
 */
export async function withDeadlockRetry<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !(error instanceof pg.DatabaseError) || !RETRYABLE.has(error.code ?? "")) throw error;
    }
  }
}

