// SQL of the step pipeline. Every write names the lease epoch its claim returned and changes
// nothing when the epoch has moved on (the instance was reaped and claimed by someone else), so
// a process that lost its lease can never overwrite newer state. Each write is one statement:
// atomic without a transaction, one round trip; only a commit that ends instances adds a second
// (see commitProgressBatch).
import type pg from "pg";
import { isTerminal, type InstanceState } from "../model.ts";
import { asTenantId, uuidv7, type TenantId } from "./ids.ts";
import { consumeLateSignals } from "./signals.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";
import { wakeForQueuedSignals, wakeIfWaiting, wakeIfWaitIsOver } from "./wakeups.ts";

/**
 * The run facts context.runtime shows, kept by the engine in columns of their own: a commit
 * writes them without rewriting the context (which may be large, and is not otherwise touched
 * unless context.data changed), and reads put them into context.runtime.
 */
export interface RunFacts {
  /** When the run's first step started; reset by a retry. */
  startedAt: string | null;
  /** The newest step still running (or handed to a worker), and when its attempt started. */
  currentStep: string | null;
  currentStepStartedAt: string | null;
  /** That step's attempt, 0 for its first. */
  attempt: number;
  /** Step attempts that ended, successes and failures alike. */
  stepsExecuted: number;
  /** Why a failed instance failed (its first uncaught step failure); null otherwise. */
  failure: FailureCause | null;
}

/** The step failure that failed an instance, and the fingerprint failures are grouped by. */
export interface FailureCause {
  blockId: string;
  message: string;
  handler: string | null;
  /** `<handler>: <message with ids and numbers replaced>`, so failures that differ only in those read as one. */
  fingerprint: string;
}

export interface ClaimedRow {
  id: string;
  tenantId: string;
  sequenceId: string;
  context: unknown;
  cursor: unknown;
  timezone: string;
  /** The stored sequence definition (JSON), or null when the sequence is gone. */
  definition: unknown;
  /** Undelivered signals wait for it: the run takes them before anything else. */
  hasSignals: boolean;
  facts: RunFacts;
}

/** What the claim statement returns of each instance for its run (the RETURNING in claim.ts). */
export interface ClaimedRowColumns {
  id: string; tenant_id: string; sequence_id: string; context: unknown; cursor: unknown; timezone: string; definition: unknown; has_signals: boolean;
  started_at: Date | null; current_step: string | null; current_step_started_at: Date | null; current_attempt: number; steps_executed: number;
}

export function claimedRowOf(r: ClaimedRowColumns): ClaimedRow {
  return {
    id: r.id, tenantId: r.tenant_id, sequenceId: r.sequence_id, context: r.context,
    cursor: r.cursor, timezone: r.timezone, definition: r.definition, hasSignals: r.has_signals,
    facts: {
      startedAt: r.started_at?.toISOString() ?? null, currentStep: r.current_step,
      currentStepStartedAt: r.current_step_started_at?.toISOString() ?? null, attempt: r.current_attempt, stepsExecuted: r.steps_executed,
      // A claimed instance is not failed: a retry cleared its cause.
      failure: null,
    },
  };
}

export interface OutputRow {
  blockId: string;
  output: unknown;
  /** e.g. "__error__" for a failed step's marker row. */
  outputRef?: string | null;
  attempt: number;
}


export interface Progress {
  instanceId: string;
  tenantId: TenantId;
  leaseEpoch: number;
  state: InstanceState;
  cursor: unknown;
  /** Required when the new state is `scheduled`. */
  nextFireAt?: Date | null;
  deferReason?: string | null;
  outputs?: OutputRow[];
  /**
   * Top-level keys of context.data to set (`set`) or remove (`unset`). Only these keys are written,
   * so an edit made meanwhile through the API to other keys is kept.
   */
  dataPatch?: { set: Record<string, unknown>; unset: string[] };
  /**
   * With state `waiting`: the worker tasks and child instances it waits for. If one finished
   * while the run was still going (nothing could wake a running instance), the instance is
   * scheduled, due now, instead of parked: by this statement, or by the look again once it has
   * committed (wakeups.ts).
   */
  waitingOn?: string[];
  /**
   * The signals the run applied since its last commit: marked delivered by this write, so they
   * are consumed exactly when what they did is stored, and left queued when the lease was lost.
   */
  signalsApplied?: string[];
  /** The run's facts as they are now (absent: left as stored). */
  facts?: RunFacts;
}

/**
 * Records steps' outputs and their instances' new state, cursor and due time, for many instances
 * in one statement (the scheduler groups the commits that arrive together), each row fenced by
 * its lease epoch. Returns the ids that were written; a missing id had lost its lease and nothing
 * of it was written. Leaving `running` gives up the lease.
 *
 * A batch that ends an instance is a transaction of two statements; the second consumes the
 * signals still queued for it. A sender (enqueueSignalIfActive) checks the state and inserts under
 * the instance's row lock: one that locks after this UPDATE waits, sees the end and is refused;
 * one that locked first has committed by the time the UPDATE gets the row, but maybe after the
 * UPDATE's snapshot was taken, so only a later statement is sure to see its signal. `db` must
 * be able to connect: the two statements run on one pooled connection.
 */
export async function commitProgressBatch(db: Queryable & Connectable, batch: Progress[]): Promise<Set<string>> {
  const running = batch.every((p) => p.state === "running");
  const statement = commitStatement(batch, running);
  if (running) return new Set((await db.query<{ id: string }>(statement)).rows.map((r) => r.id));
  const rows = batch.some((p) => isTerminal(p.state))
    ? await inTransaction(db, async (client) => {
      const { rows } = await client.query<WrittenRow>(statement);
      await consumeLateSignals(client, rows.filter((r) => isTerminal(r.state)).map((r) => ({ tenantId: asTenantId(r.tenant_id), id: r.id })));
      return rows;
    })
    : (await db.query<WrittenRow>(statement)).rows;
  await lookAgainAfterCommit(db, batch, rows);
  return new Set(rows.map((r) => r.id));
}

interface WrittenRow {
  id: string;
  tenant_id: string;
  state: InstanceState;
  parent_instance_id: string | null;
}

/**
 * Once the batch has committed (see wakeups.ts): instances still parked look again at what they
 * wait for, children that ended wake their parents, and signals queued too late for a run make
 * its instance due again.
 */
async function lookAgainAfterCommit(db: Queryable, batch: Progress[], rows: WrittenRow[]): Promise<void> {
  const waitingOn = new Map(batch.map((p) => [p.instanceId, p.waitingOn ?? []]));
  const parked = rows.filter((r) => r.state === "waiting" && waitingOn.get(r.id)!.length > 0);
  await wakeIfWaitIsOver(db, parked.map((r) => ({ tenantId: r.tenant_id, id: r.id, waitingOn: waitingOn.get(r.id)! })));
  const ended = rows.filter((r) => isTerminal(r.state) && r.parent_instance_id !== null);
  await wakeIfWaiting(db, ended.map((r) => ({ tenantId: r.tenant_id, id: r.parent_instance_id! })));
  const leftRunning = rows.filter((r) => r.state === "waiting" || r.state === "paused" || r.state === "scheduled");
  await wakeForQueuedSignals(db, leftRunning.map((r) => ({ tenantId: r.tenant_id, id: r.id })));
}

const byInstanceId = (a: Progress, b: Progress) => (a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0);

// Lock order: every statement that locks several task_instances rows takes them in id order (see
// `locked`, and renewLeases), so two of them can never wait for each other in a cycle. The waiting
// parents of the children a batch ends are woken by a statement of their own, after the commit.
function commitStatement(unordered: Progress[], asynchronous: boolean): pg.QueryConfig {
  const batch = [...unordered].sort(byInstanceId);
  const outputs = batch.flatMap((p) => (p.outputs ?? []).map((o) => ({ ...o, instanceId: p.instanceId })));
  const applied = batch.flatMap((p) => (p.signalsApplied ?? []).map((id) => ({ id, instanceId: p.instanceId })));
  return {
    name: asynchronous ? "commit_progress_async" : "commit_progress",
    // Asynchronous: the statement's own transaction commits without waiting for the WAL flush,
    // set from within it (the final SELECT reads the setting's row, so it is applied).
    text: `WITH ${asynchronous ? "asynchronous AS (SELECT set_config('synchronous_commit', 'off', true) AS setting), " : ""}raw AS (
             SELECT * FROM jsonb_to_recordset($2::jsonb)
               AS x(id uuid, tenant_id text, lease_epoch bigint, state text, cursor jsonb, next_fire_at timestamptz, defer_reason text, data_patch jsonb, waiting_on jsonb, facts jsonb)
           ), locked AS (
             -- the batch's rows, locked in id order before any is written (a locking CTE is
             -- never inlined; without it the join locks them in plan and array order)
             SELECT id FROM task_instances WHERE id = ANY($1::uuid[]) AND state = 'running' ORDER BY id FOR UPDATE
           ), checked AS MATERIALIZED (
             -- is what a waiting instance waits for (worker tasks, children) already over?
             SELECT x.*, x.state = 'waiting' AND (
                      EXISTS (SELECT 1 FROM worker_tasks w
                               WHERE w.tenant_id = x.tenant_id AND w.instance_id = x.id
                                 AND w.id = ANY(ARRAY(SELECT jsonb_array_elements_text(x.waiting_on))::uuid[])
                                 AND w.state IN ('completed', 'failed'))
                      OR EXISTS (SELECT 1 FROM task_instances c
                                  WHERE c.tenant_id = x.tenant_id AND c.parent_instance_id = x.id
                                    AND c.id = ANY(ARRAY(SELECT jsonb_array_elements_text(x.waiting_on))::uuid[])
                                    AND c.state IN ('completed', 'failed', 'cancelled'))) AS wait_is_over
               FROM raw x
           ), input AS (
             -- then it is scheduled, due now, instead of parked (nothing could wake it while it
             -- ran); a waiting one keeps its wake-up time (an input gate's timeout) or none
             SELECT id, tenant_id, lease_epoch, cursor, defer_reason, data_patch, facts,
                    CASE WHEN wait_is_over THEN 'scheduled' ELSE state END AS state,
                    CASE WHEN wait_is_over THEN now() ELSE next_fire_at END AS next_fire_at
               FROM checked
           ), updated AS (
             UPDATE task_instances t
                SET state = x.state, cursor = coalesce(x.cursor, 'null'::jsonb), next_fire_at = x.next_fire_at, defer_reason = x.defer_reason,
                    context = CASE WHEN x.data_patch IS NULL THEN t.context ELSE jsonb_set(
                      t.context, '{data}',
                      (CASE WHEN jsonb_typeof(t.context -> 'data') = 'object' THEN t.context -> 'data' ELSE '{}'::jsonb END
                        || (x.data_patch -> 'set'))
                        - ARRAY(SELECT jsonb_array_elements_text(x.data_patch -> 'unset')),
                      true) END,
                    updated_at = now(),
                    started_at = CASE WHEN x.facts IS NULL THEN t.started_at ELSE (x.facts ->> 'startedAt')::timestamptz END,
                    current_step = CASE WHEN x.facts IS NULL THEN t.current_step ELSE x.facts ->> 'currentStep' END,
                    current_step_started_at = CASE WHEN x.facts IS NULL THEN t.current_step_started_at ELSE (x.facts ->> 'currentStepStartedAt')::timestamptz END,
                    current_attempt = CASE WHEN x.facts IS NULL THEN t.current_attempt ELSE (x.facts ->> 'attempt')::int END,
                    steps_executed = CASE WHEN x.facts IS NULL THEN t.steps_executed ELSE (x.facts ->> 'stepsExecuted')::int END,
                    failed_block = CASE WHEN x.state = 'failed' THEN x.facts #>> '{failure,blockId}' END,
                    error_message = CASE WHEN x.state = 'failed' THEN x.facts #>> '{failure,message}' END,
                    error_fingerprint = CASE WHEN x.state = 'failed' THEN x.facts #>> '{failure,fingerprint}' END,
                    -- only a running instance keeps its lease
                    lease_owner = CASE WHEN x.state = 'running' THEN t.lease_owner END,
                    lease_expires_at = CASE WHEN x.state = 'running' THEN t.lease_expires_at END,
                    completed_at = CASE WHEN x.state IN ('completed', 'failed', 'cancelled') THEN now() END
               FROM input x JOIN locked l ON l.id = x.id
              WHERE t.id = x.id AND t.tenant_id = x.tenant_id AND t.lease_epoch = x.lease_epoch AND t.state = 'running'
              RETURNING t.id, t.tenant_id, t.state, t.parent_instance_id
           ), inserted AS (
             INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output, output_ref, output_size, attempt)
             SELECT o.id, u.tenant_id, u.id, o.block_id, coalesce(o.output, 'null'::jsonb), o.output_ref, octet_length(coalesce(o.output, 'null'::jsonb)::text), o.attempt
               FROM jsonb_to_recordset($3::jsonb)
                      AS o(instance_id uuid, block_id text, output jsonb, output_ref text, attempt int, id uuid)
               JOIN updated u ON u.id = o.instance_id
             RETURNING 1
           ), delivered AS (
             UPDATE signals s SET delivered = true, delivered_at = now()
               FROM unnest($4::uuid[], $5::uuid[]) AS a(instance_id, id)
               JOIN updated u ON u.id = a.instance_id
              WHERE s.tenant_id = u.tenant_id AND s.instance_id = u.id AND s.id = a.id
             RETURNING 1
           )
           SELECT id, tenant_id, state, parent_instance_id FROM updated${asynchronous ? ", asynchronous" : ""}`,
    // The rows as JSON documents, not arrays of JSON texts: pg escapes every quote of an array's
    // elements, which for the cursors cost more than all the rest of a commit's encoding. A JSON
    // null reads back as SQL NULL there, hence the coalesce of the cursor and the output.
    values: [
      batch.map((p) => p.instanceId),
      JSON.stringify(batch.map((p) => ({
        id: p.instanceId, tenant_id: p.tenantId, lease_epoch: p.leaseEpoch, state: p.state, cursor: p.cursor ?? null,
        next_fire_at: p.nextFireAt ?? null, defer_reason: p.deferReason ?? null, data_patch: p.dataPatch ?? null,
        waiting_on: p.waitingOn ?? [], facts: p.facts ?? null,
      }))),
      // ids minted in order, so the rows of one commit read back in the order they were produced
      JSON.stringify(outputs.map((o) => ({
        instance_id: o.instanceId, block_id: o.blockId, output: o.output ?? null, output_ref: o.outputRef ?? null, attempt: o.attempt, id: uuidv7(),
      }))),
      applied.map((a) => a.instanceId), applied.map((a) => a.id),
    ],
  };
}

/** One instance's progress; false (and nothing written) when its lease was lost. */
export async function commitProgress(db: Queryable & Connectable, progress: Progress): Promise<boolean> {
  return (await commitProgressBatch(db, [progress])).has(progress.instanceId);
}

/** The latest output of each block of an instance (the scope of templates and conditions). */
export async function loadLatestOutputs(db: Queryable, tenantId: TenantId, instanceId: string): Promise<Record<string, unknown>> {
  const { rows } = await db.query<{ block_id: string; output: unknown }>({
    name: "load_latest_outputs",
    text: `SELECT DISTINCT ON (block_id) block_id, output FROM block_outputs
            WHERE tenant_id = $1 AND instance_id = $2 AND (output_ref IS NULL OR output_ref NOT IN ('__in_progress__', '__retry__'))
              AND block_id NOT LIKE '\\_sla:%' AND block_id NOT LIKE '\\_interceptor:%'  -- B.1: engine records, not block outputs
            ORDER BY block_id, created_at DESC, id DESC`,
    values: [tenantId, instanceId],
  });
  return Object.fromEntries(rows.map((r) => [r.block_id, r.output]));
}

export interface NewWorkerTask {
  instanceId: string;
  tenantId: TenantId;
  leaseEpoch: number;
  blockId: string;
  handlerName: string;
  queueName: string | null;
  params: unknown;
  context: unknown;
  attempt: number;
  timeoutMs: number | null;
}

/**
 * Creates a step's worker task while the instance keeps running (other branches may still run).
 * Returns the task's id, which the step's node keeps, or null when the lease was lost.
 */
export async function insertWorkerTask(db: Queryable, t: NewWorkerTask): Promise<string | null> {
  const id = uuidv7();
  const { rowCount } = await db.query({
    name: "insert_worker_task",
    text: `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, queue_name, params, context, attempt, timeout_ms)
           SELECT $11, tenant_id, id, $4, $5, $6, $7, $8, $9, $10 FROM task_instances
            WHERE id = $1 AND tenant_id = $2 AND lease_epoch = $3 AND state = 'running'`,
    values: [
      t.instanceId, t.tenantId, t.leaseEpoch, t.blockId, t.handlerName, t.queueName,
      JSON.stringify(t.params ?? null), JSON.stringify(t.context ?? null), t.attempt, t.timeoutMs, id,
    ],
  });
  return rowCount === 1 ? id : null;
}
