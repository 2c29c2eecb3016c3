// DLQ retry and resume-from (wire-format J): an instance back to `scheduled`, due now, with its
// execution tree rebuilt as rerun-plan.ts decides, the restarted blocks' output rows and worker
// tasks wiped, and a fresh run in context.runtime. Every statement names the tenant; a foreign
// instance is simply not found.
import { randomUUID } from "node:crypto";
import { AppError, notFound } from "../errors.ts";
import type { InstanceState } from "../model.ts";
import type { TreeCursor } from "../exec/tree/state.ts";
import type { Block } from "../sequence/schema.ts";
import type { TenantId } from "./ids.ts";
import { rejectUnstorableText } from "./instance-records.ts";
import { definitionBlocks, restartedBlock, resumeFromPlan, retryPlan, type RerunPlan } from "./rerun-plan.ts";
import { insertSignal, type NewSignal } from "./signals.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";

interface Locked {
  id: string;
  state: InstanceState;
  sequence_id: string;
  cursor: unknown;
}

/** The instances among `ids`, locked in id order (the order every multi-row statement takes them in). */
async function lockForRerun(client: Queryable, tenantId: TenantId, ids: readonly string[]): Promise<Locked[]> {
  const { rows } = await client.query<Locked>({
    name: "lock_for_rerun",
    text: `SELECT id, state, sequence_id, cursor FROM task_instances
            WHERE tenant_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE`,
    values: [tenantId, ids],
  });
  return rows;
}

/** The top-level blocks of each of these sequences of the tenant that can be read, by sequence id. */
async function blocksOfSequences(client: Queryable, tenantId: TenantId, sequenceIds: readonly string[]): Promise<Map<string, Block[]>> {
  const { rows } = await client.query<{ id: string; definition: unknown }>({
    name: "rerun_definitions",
    text: "SELECT id, definition FROM sequences WHERE tenant_id = $1 AND id = ANY($2::uuid[])",
    values: [tenantId, [...new Set(sequenceIds)]],
  });
  const blocks = new Map<string, Block[]>();
  for (const row of rows) {
    const parsed = definitionBlocks(row.definition);
    if (parsed) blocks.set(row.id, parsed);
  }
  return blocks;
}

/** The highest attempt among the output rows of each (instance, block), by instance id. */
async function lastAttempts(client: Queryable, tenantId: TenantId, pairs: { instanceId: string; blockId: string }[]): Promise<Map<string, number>> {
  if (pairs.length === 0) return new Map();
  const { rows } = await client.query<{ instance_id: string; attempt: number }>({
    name: "rerun_last_attempts",
    text: `SELECT c.instance_id, max(o.attempt)::int AS attempt
             FROM unnest($2::uuid[], $3::text[]) AS c(instance_id, block_id)
             JOIN block_outputs o ON o.tenant_id = $1 AND o.instance_id = c.instance_id AND o.block_id = c.block_id
            GROUP BY c.instance_id`,
    values: [tenantId, pairs.map((p) => p.instanceId), pairs.map((p) => p.blockId)],
  });
  return new Map(rows.map((row) => [row.instance_id, row.attempt]));
}

/** An instance's rerun: the cursor it resumes from (null: none, start over) and the blocks it wipes. */
interface Rerun {
  id: string;
  cursor: TreeCursor | null;
  wiped: readonly string[];
}

// The instances' worker tasks that would collide with the re-run, each recorded as `cancelled`:
// those of the wiped blocks, and on a retry every task not completed (Orch8 keeps them, and the
// re-run hangs on the old task).
const WIPE_TASKS = `
WITH plan AS (
  SELECT * FROM unnest($2::uuid[], $3::jsonb[]) AS p(instance_id, wiped)
), gone AS (
  DELETE FROM worker_tasks w USING plan p
   WHERE w.tenant_id = $1 AND w.instance_id = p.instance_id
     AND (($4::boolean AND w.state IN ('pending', 'claimed', 'failed'))
          OR w.block_id IN (SELECT jsonb_array_elements_text(p.wiped)))
  RETURNING w.tenant_id, w.id, w.worker_id, w.claim_epoch
), events AS (
  INSERT INTO worker_task_attempts (tenant_id, task_id, event, worker_id, claim_epoch, details)
  SELECT tenant_id, id, 'cancelled', worker_id, claim_epoch, jsonb_build_object('reason', $5::text) FROM gone
)
SELECT count(*)::int AS n FROM gone`;

// The wiped blocks' rows, and on a retry the failed run's markers (kept: successes, __retry__).
const WIPE_OUTPUTS = `
WITH plan AS (
  SELECT * FROM unnest($2::uuid[], $3::jsonb[]) AS p(instance_id, wiped)
)
DELETE FROM block_outputs o USING plan p
 WHERE o.tenant_id = $1 AND o.instance_id = p.instance_id
   AND (($4::boolean AND o.output_ref IN ('__in_progress__', '__error__'))
        OR o.block_id IN (SELECT jsonb_array_elements_text(p.wiped)))`;

const CONTEXT = "CASE WHEN jsonb_typeof(t.context) = 'object' THEN t.context ELSE '{}'::jsonb END";
const RUNTIME = `CASE WHEN jsonb_typeof(t.context -> 'runtime') = 'object' THEN t.context -> 'runtime' ELSE '{}'::jsonb END`;

// Scheduled, due now, with the rebuilt cursor and a fresh run: a new run_id, no steps executed,
// nothing started, in context.runtime and in the run-fact columns the engine keeps (reads lay
// those over context.runtime). context.data, config and metadata stay as they are.
const RESTART_RUN = `
UPDATE task_instances t
   SET state = 'scheduled', next_fire_at = now(), defer_reason = NULL, lease_owner = NULL, lease_expires_at = NULL,
       completed_at = NULL, updated_at = now(), cursor = p.cursor,
       started_at = NULL, current_step = NULL, current_step_started_at = NULL, current_attempt = 0, steps_executed = 0,
       failed_block = NULL, error_message = NULL, error_fingerprint = NULL,
       context = jsonb_set(${CONTEXT}, '{runtime}', ${RUNTIME} || jsonb_build_object(
         'run_id', p.run_id::text, 'total_steps_executed', 0, 'current_step', NULL, 'current_step_started_at', NULL, 'started_at', NULL))
  FROM unnest($2::uuid[], $3::jsonb[], $4::uuid[]) AS p(id, cursor, run_id)
 WHERE t.tenant_id = $1 AND t.id = p.id`;

/** Wipes what the reruns restart (the instances locked by the caller's transaction); the number of output rows deleted. */
async function wipe(client: Queryable, tenantId: TenantId, reruns: readonly Rerun[], kind: "retry" | "resume_from"): Promise<number> {
  const ids = reruns.map((r) => r.id);
  const wiped = reruns.map((r) => JSON.stringify(r.wiped));
  const retry = kind === "retry";
  const reason = retry ? "instance retried" : "instance resumed from a block";
  await client.query({ name: "rerun_wipe_tasks", text: WIPE_TASKS, values: [tenantId, ids, wiped, retry, reason] });
  const outputs = await client.query({ name: "rerun_wipe_outputs", text: WIPE_OUTPUTS, values: [tenantId, ids, wiped, retry] });
  return outputs.rowCount ?? 0;
}

/** Schedules the reruns now, each with its rebuilt cursor and a fresh run. */
async function restart(client: Queryable, tenantId: TenantId, reruns: readonly Rerun[]): Promise<void> {
  await client.query({
    name: "rerun_restart",
    text: RESTART_RUN,
    values: [tenantId, reruns.map((r) => r.id), reruns.map((r) => (r.cursor ? JSON.stringify(r.cursor) : null)), reruns.map(() => randomUUID())],
  });
}

/** Re-runs these locked `failed` instances (J): their plans from their sequences, then the writes. */
async function rerunFailed(client: Queryable, tenantId: TenantId, failed: readonly Locked[], now: Date): Promise<void> {
  const blocks = await blocksOfSequences(client, tenantId, failed.map((row) => row.sequence_id));
  const restarted = failed.flatMap((row) => {
    const top = blocks.get(row.sequence_id);
    const blockId = top ? restartedBlock(top, row.cursor) : null;
    return blockId ? [{ instanceId: row.id, blockId }] : [];
  });
  const attempts = await lastAttempts(client, tenantId, restarted);
  const reruns = failed.map((row): Rerun => {
    const top = blocks.get(row.sequence_id);
    // A sequence that cannot be read: the instance starts over.
    if (!top) return { id: row.id, cursor: null, wiped: [] };
    const plan: RerunPlan = retryPlan(top, row.cursor, () => attempts.get(row.id) ?? null, now);
    return { id: row.id, ...plan };
  });
  await wipe(client, tenantId, reruns, "retry");
  await restart(client, tenantId, reruns);
}

/**
 * Retries those of `ids` that are `failed` (J), in the caller's transaction; the others are left
 * alone. Returns the ids retried.
 */
export async function retryFailed(client: Queryable, tenantId: TenantId, ids: readonly string[], now = new Date()): Promise<string[]> {
  const failed = (await lockForRerun(client, tenantId, ids)).filter((row) => row.state === "failed");
  if (failed.length > 0) await rerunFailed(client, tenantId, failed, now);
  return failed.map((row) => row.id);
}

/** POST /instances/{id}/retry: a `failed` instance re-runs (400 from any other state). */
export async function retryInstance(db: Connectable, tenantId: TenantId, instanceId: string): Promise<{ id: string; state: "scheduled" }> {
  return inTransaction(db, async (client) => {
    const [row] = await lockForRerun(client, tenantId, [instanceId]);
    if (!row) throw notFound("instance");
    if (row.state !== "failed") throw new AppError("invalid_argument", `can only retry failed instances, current state: ${row.state}`);
    await rerunFailed(client, tenantId, [row], new Date());
    return { id: instanceId, state: "scheduled" as const };
  });
}

/** The states resume-from starts from: nothing may be running while the tree is rebuilt. */
const RESUMABLE: readonly InstanceState[] = ["failed", "paused", "completed", "cancelled"];

export interface ResumeFrom {
  blockId: string;
  /** Merged shallowly into context.data (top-level keys replace). */
  context?: Record<string, unknown>;
  /** Queued, in order, before the instance is woken. */
  signals?: readonly NewSignal[];
}

export interface ResumedFrom {
  id: string;
  state: "scheduled";
  resumedFrom: string;
  outputsDeleted: number;
  signalsEnqueued: number;
}

const MERGE_DATA = `
UPDATE task_instances t
   SET context = jsonb_set(${CONTEXT}, '{data}',
                           CASE WHEN jsonb_typeof(t.context -> 'data') = 'object' THEN t.context -> 'data' ELSE '{}'::jsonb END || $3::jsonb)
 WHERE t.tenant_id = $1 AND t.id = $2`;

/**
 * POST /instances/{id}/resume-from/{block_id}: the block and every later top-level block run
 * again from scratch (their rows, descendants' included, and worker tasks wiped); earlier blocks
 * keep their outputs and are not run again.
 */
export async function resumeFrom(db: Connectable, tenantId: TenantId, instanceId: string, request: ResumeFrom): Promise<ResumedFrom> {
  return inTransaction(db, async (client) => {
    const [row] = await lockForRerun(client, tenantId, [instanceId]);
    if (!row) throw notFound("instance");
    if (!RESUMABLE.includes(row.state)) {
      throw new AppError("invalid_argument", `cannot resume-from in state ${row.state}: pause or cancel the instance first`);
    }
    const top = (await blocksOfSequences(client, tenantId, [row.sequence_id])).get(row.sequence_id);
    const plan = top ? resumeFromPlan(top, row.cursor, request.blockId) : null;
    if (!plan) {
      throw new AppError("invalid_argument", `block '${request.blockId.slice(0, 256)}' is not a top-level block of sequence ${row.sequence_id}`, ["block_id"]);
    }
    const rerun = { id: instanceId, ...plan };
    const outputsDeleted = await wipe(client, tenantId, [rerun], "resume_from");
    if (request.context && Object.keys(request.context).length > 0) {
      try {
        await client.query({ name: "resume_merge_data", text: MERGE_DATA, values: [tenantId, instanceId, JSON.stringify(request.context)] });
      } catch (error) {
        throw rejectUnstorableText(error);
      }
    }
    // Queued before the instance is woken, so its first tick applies them.
    for (const signal of request.signals ?? []) await insertSignal(client, tenantId, instanceId, signal);
    await restart(client, tenantId, [rerun]);
    return { id: instanceId, state: "scheduled" as const, resumedFrom: request.blockId, outputsDeleted, signalsEnqueued: request.signals?.length ?? 0 };
  });
}
