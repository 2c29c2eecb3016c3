// Lease upkeep for claimed instances. Every write of a claimer names the lease epoch it claimed
// with; a row whose epoch has moved on belongs to a newer claim, and the write changes nothing.
import type { Queryable } from "./transaction.ts";

/** Extends a live lease; false when the lease was lost (reaped and claimed again, or finished). */
export async function renewLease(db: Queryable, id: string, leaseEpoch: number, until: Date): Promise<boolean> {
  const { rowCount } = await db.query({
    name: "renew_lease",
    text: `UPDATE task_instances SET lease_expires_at = $3
            WHERE id = $1 AND lease_epoch = $2 AND state = 'running'`,
    values: [id, leaseEpoch, until],
  });
  return rowCount === 1;
}

/**
 * Hands instances back as due at `dueAt` (more of a tenant claimed than it may start); the ids
 * still leased under their epoch are returned. It commits without waiting for the WAL flush, as
 * the claim does (engine/storage/claim.ts): a release lost to a crash leaves a lease that expires
 * and is reaped.
 */
export function releaseLeases(
  db: Queryable,
  leases: { id: string; leaseEpoch: number }[],
  dueAt: Date,
  deferReason: string | null = null,
): Promise<Set<string>> {
  return updateLeased(db, "release_leases", leases, {
    set: "state = 'scheduled', next_fire_at = $3, defer_reason = $4, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()",
    values: [dueAt, deferReason],
    asynchronous: true,
  });
}

/**
 * Returns running instances whose lease expired (their engine died or stalled) to `scheduled`,
 * due at once. The epoch is left as is: the next claim bumps it, which fences the old holder.
 * Bounded per call so one sweep never holds many row locks. Needs no lock order: SKIP LOCKED
 * never waits for a row, so this statement can never be part of a deadlock.
 */
export async function reapExpiredLeases(db: Queryable, now: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query({
    name: "reap_expired_leases",
    text: `WITH expired AS (
             SELECT id FROM task_instances
              WHERE state = 'running' AND lease_expires_at < $1
              ORDER BY lease_expires_at
              LIMIT $2
              FOR UPDATE SKIP LOCKED
           )
           UPDATE task_instances t
              SET state = 'scheduled', next_fire_at = $1, lease_owner = NULL, lease_expires_at = NULL, updated_at = $1
             FROM expired WHERE t.id = expired.id`,
    values: [now, limit],
  });
  return rowCount ?? 0;
}

/**
 * Extends many live leases in one statement (the scheduler renews everything it holds on one
 * timer). Returns the ids still held; any other was lost and its run must stop.
 */
export function renewLeases(db: Queryable, leases: { id: string; leaseEpoch: number }[], until: Date): Promise<Set<string>> {
  return updateLeased(db, "renew_leases", leases, { set: "lease_expires_at = $3", values: [until] });
}

/**
 * One UPDATE (`set`, its values from $3 on) of the rows still leased under the given epochs,
 * returning their ids. The rows are locked in id order first, the order commit_progress takes
 * them in too (execution.ts): locked as the join meets them, two overlapping statements could
 * deadlock. `asynchronous`: the transaction does not wait for the WAL flush.
 */
async function updateLeased(
  db: Queryable,
  name: string,
  leases: { id: string; leaseEpoch: number }[],
  update: { set: string; values: unknown[]; asynchronous?: boolean },
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const held = [...leases].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const asynchronous = update.asynchronous === true;
  const { rows } = await db.query<{ id: string }>({
    name,
    text: `WITH locked AS (
             SELECT id FROM task_instances WHERE id = ANY($1::uuid[]) AND state = 'running' ORDER BY id FOR UPDATE
           )${asynchronous ? ", asynchronous AS (SELECT set_config('synchronous_commit', 'off', true) AS setting)" : ""}
           UPDATE task_instances t SET ${update.set}
             FROM unnest($1::uuid[], $2::bigint[]) AS held(id, lease_epoch) JOIN locked l ON l.id = held.id${asynchronous ? " CROSS JOIN asynchronous" : ""}
            WHERE t.id = held.id AND t.lease_epoch = held.lease_epoch AND t.state = 'running'
            RETURNING t.id`,
    values: [held.map((l) => l.id), held.map((l) => l.leaseEpoch), ...update.values],
  });
  return new Set(rows.map((r) => r.id));
}

/**
 * Wakes waiting instances whose wake-up time has come (a human-input gate's timeout): they go
 * back to `scheduled` so the engine can escalate. Bounded per call, like the reaper (and, like
 * it, never waits for a row lock: SKIP LOCKED). The engine passes `onlyTenants` (placed on this
 * backend, not being moved); null: every tenant.
 */
export async function wakeDueWaiting(db: Queryable, now: Date, limit: number, onlyTenants: string[] | null = null): Promise<number> {
  const { rowCount } = await db.query({
    name: "wake_due_waiting",
    text: `WITH due AS (
             SELECT id FROM task_instances
              WHERE state = 'waiting' AND next_fire_at <= $1 AND ($3::text[] IS NULL OR tenant_id = ANY($3::text[]))
              ORDER BY next_fire_at LIMIT $2
              FOR UPDATE SKIP LOCKED
           )
           UPDATE task_instances t SET state = 'scheduled', updated_at = $1 FROM due WHERE t.id = due.id`,
    values: [now, limit, onlyTenants],
  });
  return rowCount ?? 0;
}
