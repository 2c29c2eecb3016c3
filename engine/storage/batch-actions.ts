// POST /instances/batch-action (wire-format K): one action on at most `limit` of the tenant's
// instances, oldest update first. Applied a batch at a time, each its own transaction through the
// tenant's connection share (batches.ts): a retry as J's (rerun.ts), a signal as POST …/signals
// queues it (G), terminal, vanished and (for retry) non-failed instances skipped.
import pg from "pg";
import { isTerminal, type InstanceState } from "../model.ts";
import { BATCH_SIZE, withDeadlockRetry } from "./batches.ts";
import { filterConditions, type BulkFilter } from "./bulk-filter.ts";
import type { TenantConnections } from "./connection-shares.ts";
import { uuidv7, type TenantId } from "./ids.ts";
import { rejectUnstorableText } from "./instance-records.ts";
import { retryFailed } from "./rerun.ts";
import { signalTypeToText, wakes, type SignalType } from "./signals.ts";
import { inTransaction, type Queryable } from "./transaction.ts";

export const BATCH_ACTIONS = ["retry", "pause", "resume", "cancel", "signal"] as const;
export type BatchActionName = (typeof BATCH_ACTIONS)[number];

/** `limit` is clamped to this range; 1000 when absent. */
export const BATCH_ACTION_LIMIT = { min: 1, default: 1000, max: 10_000 } as const;

export interface BatchAction {
  filter: BulkFilter;
  action: BatchActionName;
  /** The custom signal's bare name, for `signal`. */
  signalName?: string;
  /** The custom signal's payload (any JSON, null when absent). */
  payload?: unknown;
  dryRun: boolean;
  /** Already clamped. */
  limit: number;
}

export interface BatchActionResult {
  matched: number;
  applied: number;
  skipped: number;
  failed: number;
  dryRun: boolean;
}

export const clampBatchLimit = (limit: number | undefined) =>
  Math.min(Math.max(Math.trunc(limit ?? BATCH_ACTION_LIMIT.default), BATCH_ACTION_LIMIT.min), BATCH_ACTION_LIMIT.max);

function signalOf(action: BatchAction): { type: SignalType; payload: unknown } {
  if (action.action === "signal") return { type: { custom: action.signalName ?? "" }, payload: action.payload ?? null };
  return { type: action.action as "pause" | "resume" | "cancel", payload: null };
}

// FIFO per instance as in signals.ts's INSERT_SIGNAL: each at least 1 ms after the instance's
// newest signal, which the row lock the caller holds keeps from moving.
const INSERT_SIGNALS = `
INSERT INTO signals (id, tenant_id, instance_id, signal_type, payload, created_at, delivered, delivered_at)
SELECT n.id, $1, n.instance_id, $4, $5::jsonb,
       GREATEST(clock_timestamp(), (SELECT max(s.created_at) FROM signals s WHERE s.tenant_id = $1 AND s.instance_id = n.instance_id)
                                   + interval '1 millisecond'),
       n.dropped, CASE WHEN n.dropped THEN clock_timestamp() END
  FROM unnest($2::uuid[], $3::uuid[], $6::boolean[]) AS n(id, instance_id, dropped)`;

// As signals.ts's WAKE_INSTANCE: due now, or earlier if it already was.
const WAKE = `
UPDATE task_instances
   SET state = 'scheduled', next_fire_at = LEAST(next_fire_at, now()), defer_reason = NULL, updated_at = now()
 WHERE tenant_id = $1 AND id = ANY($2::uuid[])`;

/**
 * Queues the signal for those of `ids` that are not terminal, as enqueueSignalIfActive does for
 * one (a pause to a waiting instance recorded as dropped, the wake rules of signals.ts), in the
 * caller's transaction; the number queued.
 */
export async function signalLive(client: Queryable, tenantId: TenantId, ids: readonly string[], signal: { type: SignalType; payload: unknown }): Promise<string[]> {
  const { rows } = await client.query<{ id: string; state: InstanceState }>({
    name: "batch_lock_instances",
    text: "SELECT id, state FROM task_instances WHERE tenant_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE",
    values: [tenantId, ids],
  });
  const live = rows.filter((row) => !isTerminal(row.state));
  if (live.length === 0) return [];
  const dropped = live.map((row) => row.state === "waiting" && signal.type === "pause");
  const payload = signal.payload === null || signal.payload === undefined ? null : JSON.stringify(signal.payload);
  try {
    await client.query({
      name: "batch_insert_signals",
      text: INSERT_SIGNALS,
      values: [tenantId, live.map(() => uuidv7()), live.map((row) => row.id), signalTypeToText(signal.type), payload, dropped],
    });
  } catch (error) {
    throw rejectUnstorableText(error);
  }
  const woken = live.filter((row, index) => !dropped[index] && wakes(row.state, signal.type)).map((row) => row.id);
  if (woken.length > 0) await client.query({ name: "batch_wake_instances", text: WAKE, values: [tenantId, woken] });
  return live.map((row) => row.id);
}

/** P: one `batch_action` entry for each instance the action applied to. */
async function auditBatchAction(client: Queryable, tenantId: TenantId, ids: readonly string[], action: BatchAction): Promise<void> {
  if (ids.length === 0) return;
  const details = { action: action.action, ...(action.action === "signal" ? { signal: action.signalName } : {}) };
  await client.query({
    name: "audit_batch_action",
    text: `INSERT INTO instance_audit_log (tenant_id, instance_id, event_type, details)
           SELECT $1, id, 'batch_action', $3::jsonb FROM unnest($2::uuid[]) AS id`,
    values: [tenantId, ids, JSON.stringify(details)],
  });
}

/** The selection: at most `limit` matching instances, oldest update first. */
async function select(db: Queryable, tenantId: TenantId, action: BatchAction): Promise<string[]> {
  const values: unknown[] = [tenantId, action.limit];
  const where = ["tenant_id = $1", ...filterConditions(action.filter, values)];
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM task_instances WHERE ${where.join(" AND ")} ORDER BY updated_at, id LIMIT $2`,
    values,
  );
  return rows.map((row) => row.id);
}

/**
 * Runs the batch action. A batch the database refuses (a statement timeout, say) counts its
 * instances as `failed` and the next batch goes on; a lost connection ends the action.
 */
export async function runBatchAction(db: TenantConnections, tenantId: TenantId, action: BatchAction): Promise<BatchActionResult> {
  const selected = await select(db, tenantId, action);
  const result: BatchActionResult = { matched: selected.length, applied: 0, skipped: 0, failed: 0, dryRun: action.dryRun };
  if (action.dryRun) return result;
  const signal = action.action === "retry" ? null : signalOf(action);
  const sorted = [...selected].sort();
  for (let start = 0; start < sorted.length; start += BATCH_SIZE) {
    const ids = sorted.slice(start, start + BATCH_SIZE);
    try {
      const applied = await withDeadlockRetry(() =>
        inTransaction(db, async (client) => {
          const appliedTo = signal ? await signalLive(client, tenantId, ids, signal) : await retryFailed(client, tenantId, ids);
          await auditBatchAction(client, tenantId, appliedTo, action);
          return appliedTo.length;
        }),
      );
      result.applied += applied;
      result.skipped += ids.length - applied;
    } catch (error) {
      if (!(error instanceof pg.DatabaseError)) throw error;
      result.failed += ids.length;
    }
  }
  return result;
}
