// SQL for external worker tasks (wire-format H). The engine creates a task and parks its instance
// in `waiting` (execution.ts); workers claim it, report on it under a fenced lease, and the report
// wakes the instance so the engine applies the result itself (findTaskResult).
//
// Fencing: a claim bumps claim_epoch; complete / fail / heartbeat change the row only while it is
// `claimed` by the same worker under the same epoch. Every refusal of a known task is recorded as
// a `stale_mutation_rejected` attempt event, in the same statement as the check.
//
// Every statement is scoped by tenant_id (a worker sees only its key's tenant), except four:
// the reaper's sweep, which serves the whole backend and keys each row it touches by the row's
// own tenant_id; the operator's fleet poll, which is scoped by the list of tenants placed on the
// backend (and not being moved) that its caller passes; workerTaskOwner, which serves
// Storage.locate; and claimedTaskCountsOfBackend, the operator's fleet view, whose rows carry
// their tenant_id for Storage to keep only where the tenant is placed. Each write is one
// statement: atomic without a transaction, one round trip (the fleet poll adds a lock taken in
// its own statement first, see pollFleetWorkerTasks).
import { rejectUnstorableText } from "./instance-records.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";
import { asTenantId, type TenantId } from "./ids.ts";
import { wakeIfWaiting, type InstanceKey } from "./wakeups.ts";

export const WORKER_TASK_STATES = ["pending", "claimed", "completed", "failed"] as const;
export type WorkerTaskState = (typeof WORKER_TASK_STATES)[number];

export type WorkerTaskEvent =
  | "claimed" | "reclaimed" | "completed" | "failed" | "timed_out" | "cancelled" | "stale_mutation_rejected";

/** The failure the reaper records for a task whose timeout_ms has passed since it was created. */
export const TIMEOUT_MESSAGE = "task timed out (timeout_ms exceeded)";

export interface WorkerTaskRecord {
  id: string;
  instanceId: string;
  blockId: string;
  handlerName: string;
  queueName: string | null;
  params: unknown;
  context: unknown;
  attempt: number;
  timeoutMs: number | null;
  state: WorkerTaskState;
  workerId: string | null;
  claimedAt: Date | null;
  heartbeatAt: Date | null;
  claimEpoch: number;
  resumeCheckpoint: unknown;
  checkpointSeq: number;
  completedAt: Date | null;
  output: unknown;
  errorMessage: string | null;
  errorRetryable: boolean | null;
  createdAt: Date;
}

export interface WorkerTaskAttempt {
  id: number;
  taskId: string;
  claimEpoch: number | null;
  workerId: string | null;
  event: WorkerTaskEvent;
  reason: string | null;
  createdAt: Date;
}

/** The lease a worker names when it reports: the worker id it polled with and the epoch it got. */
export interface WorkerLease {
  workerId: string;
  claimEpoch: number;
}

export interface PollRequest {
  handlerName: string;
  /** null: any queue (the plain poll); otherwise only this queue. */
  queueName: string | null;
  workerId: string;
  limit: number;
}

export interface WorkerTaskFilter {
  states?: readonly WorkerTaskState[];
  handlerName?: string;
  workerId?: string;
  queueName?: string;
  /** Only tasks whose last heartbeat is older than this (claimed ones, with `states: ["claimed"]`). */
  heartbeatBefore?: Date;
  offset: number;
  limit: number;
}

export interface WorkerTaskStats {
  byState: Record<WorkerTaskState, number>;
  byHandler: Record<string, Record<WorkerTaskState, number>>;
  /** Workers holding a claimed task now. */
  activeWorkers: string[];
}

/** The answer to complete / fail: the task is unknown (or another tenant's), or the lease moved on. */
export type ReportOutcome = "ok" | "not_found" | "stale";

export type HeartbeatOutcome =
  | { kind: "ok"; checkpointSeq: number }
  | { kind: "not_found" }
  | { kind: "stale" }
  | { kind: "seq_mismatch"; checkpointSeq: number };

/** What the engine needs of a task to apply its result. */
export interface TaskResult {
  state: WorkerTaskState;
  output: unknown;
  errorMessage: string | null;
  errorRetryable: boolean | null;
  /** The worker's last checkpoint, for the next attempt's task to carry over (H, Fail). */
  resumeCheckpoint: unknown;
  checkpointSeq: number;
  /** Who ran it (the last claim's worker). */
  workerId: string | null;
}

/** JSON for a jsonb parameter; a JSON null becomes SQL NULL, as for an absent value. */
const jsonb = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

const TASK_COLUMNS = `id, instance_id, block_id, handler_name, queue_name, params, context, attempt, timeout_ms, state,
  worker_id, claimed_at, heartbeat_at, claim_epoch, resume_checkpoint, checkpoint_seq, completed_at, output,
  error_message, error_retryable, created_at`;

interface TaskRow {
  id: string; instance_id: string; block_id: string; handler_name: string; queue_name: string | null; params: unknown;
  context: unknown; attempt: number; timeout_ms: number | null; state: WorkerTaskState; worker_id: string | null;
  claimed_at: Date | null; heartbeat_at: Date | null; claim_epoch: number; resume_checkpoint: unknown; checkpoint_seq: number;
  completed_at: Date | null; output: unknown; error_message: string | null; error_retryable: boolean | null; created_at: Date;
}

function toTask(row: TaskRow): WorkerTaskRecord {
  return {
    id: row.id, instanceId: row.instance_id, blockId: row.block_id, handlerName: row.handler_name, queueName: row.queue_name,
    params: row.params, context: row.context, attempt: row.attempt, timeoutMs: row.timeout_ms, state: row.state,
    workerId: row.worker_id, claimedAt: row.claimed_at, heartbeatAt: row.heartbeat_at, claimEpoch: row.claim_epoch,
    resumeCheckpoint: row.resume_checkpoint, checkpointSeq: row.checkpoint_seq, completedAt: row.completed_at,
    output: row.output, errorMessage: row.error_message, errorRetryable: row.error_retryable, createdAt: row.created_at,
  };
}

/**
 * Wakes the instances of the tasks in CTE `finished` (columns tenant_id, instance_id): a waiting
 * instance becomes due at `at`, so the engine picks the task's result up. Any other state
 * (terminal, paused, already scheduled) is left alone: a late report changes nothing. One seen
 * `running` may be parking as this runs: the caller looks again once this has committed
 * (wakeups.ts), for the instances this statement did not wake.
 * The instances are locked in id order first, as every statement that updates many of them does
 * (commit_progress, renew_leases), so a timeout sweep waking hundreds cannot deadlock with them.
 */
const wakeInstances = (at: string) => `waking AS (
  SELECT id FROM task_instances
   WHERE (tenant_id, id) IN (SELECT tenant_id, instance_id FROM finished) AND state = 'waiting'
   ORDER BY id
   FOR UPDATE
), woken AS (
  UPDATE task_instances i
     SET state = 'scheduled', next_fire_at = ${at}, defer_reason = NULL, updated_at = ${at}
    FROM waking w
   WHERE i.id = w.id AND i.state = 'waiting'
  RETURNING i.tenant_id, i.id`;

// picked:  the tenant's oldest pending tasks of the handler (and queue), locked. SKIP LOCKED lets
//          concurrent pollers take disjoint tasks instead of queueing behind each other; a task
//          another poller claimed after this snapshot fails the state re-check and is skipped.
// claimed: those tasks under a new lease; the epoch bump fences any earlier holder.
// events:  one `claimed` event each.
const pollSql = (byQueue: boolean) => `
WITH picked AS (
  SELECT id FROM worker_tasks
   WHERE tenant_id = $1 AND state = 'pending' AND handler_name = $2 ${byQueue ? "AND queue_name = $5" : ""}
   ORDER BY created_at, id
   LIMIT $4
   FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE worker_tasks t
     SET state = 'claimed', worker_id = $3, claimed_at = now(), heartbeat_at = now(), claim_epoch = t.claim_epoch + 1
    FROM picked
   WHERE t.tenant_id = $1 AND t.id = picked.id
  RETURNING t.*
), events AS (
  INSERT INTO worker_task_attempts (tenant_id, task_id, event, worker_id, claim_epoch)
  SELECT tenant_id, id, 'claimed', worker_id, claim_epoch FROM claimed
)
SELECT ${TASK_COLUMNS} FROM claimed ORDER BY created_at, id`;

/** The tenant poll's texts, plain and by queue (exported for the plan test). */
export const POLL_SQL = { plain: pollSql(false), queue: pollSql(true) } as const;

/** Claims up to `limit` of the tenant's pending tasks for the handler (and queue), oldest first. */
export async function pollWorkerTasks(db: Queryable, tenantId: TenantId, poll: PollRequest): Promise<WorkerTaskRecord[]> {
  if (poll.limit <= 0) return [];
  const byQueue = poll.queueName !== null;
  const values: unknown[] = [tenantId, poll.handlerName, poll.workerId, poll.limit];
  if (byQueue) values.push(poll.queueName);
  try {
    const { rows } = await db.query<TaskRow>({ name: byQueue ? "poll_worker_tasks_queue" : "poll_worker_tasks", text: byQueue ? POLL_SQL.queue : POLL_SQL.plain, values });
    return rows.map(toTask);
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

/**
 * A fleet poll passes over a tenant that already holds this many `claimed` tasks of the handler,
 * so one tenant's backlog cannot take every fleet worker (DESIGN.md, the resource ledger).
 */
export const FLEET_CLAIMED_PER_TENANT = 64;

export interface FleetPollRequest extends PollRequest {
  /** Only these tenants' tasks: those placed on this backend now and not quiesced for a move. */
  tenants: readonly string[];
  /** The per-tenant cap on claimed tasks of the handler (FLEET_CLAIMED_PER_TENANT by default). */
  claimedCap?: number;
}

/** Where a candidate stands in the fleet's round robin: by round, then by its tenant's oldest candidate. */
export interface FleetRank {
  tenantId: TenantId;
  /** 1 for the tenant's oldest candidate, 2 for its next, and so on. */
  round: number;
  /** When the tenant's oldest candidate was created: the order of tenants within a round. */
  firstAt: Date;
}

/** A task a fleet poll claimed, with its tenant and its place in the round robin. */
export interface FleetTask extends WorkerTaskRecord, FleetRank {}

/** The round-robin order, the same within a backend and across backends (their tenants are disjoint). */
export function compareFleetRank(a: FleetRank, b: FleetRank): number {
  return a.round - b.round || a.firstAt.getTime() - b.firstAt.getTime() || (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : 0);
}

// The fleet's candidates, fair across tenants, reading indexes only (worker_tasks_pending_idx and
// worker_tasks_fleet_claimed_idx):
//   tenants:  a loose index scan over the tenants with pending tasks of the handler, one index
//             descent each (cost ~ tenants, however long one tenant's backlog). It starts below
//             every tenant id ('', never one: ids are slugs) so every descent has the same shape,
//             `tenant_id > previous` under `handler_name`, the one worker_tasks_pending_idx serves,
//   eligible: those placed here and not being moved ($2, hashed), each with its room under the
//             cap of claimed tasks of the handler ($4; the count stops at the cap); none left
//             for a tenant at the cap,
//   rounds:   round 1 is each eligible tenant's oldest pending task (of the queue, $5); round
//             k + 1 is the task after its round-k task, for a tenant that has room for k + 1.
//             One index descent per row. A recursive query yields whole rounds in order, so
//             `picked` reads only the first limit + tenants rows (cost ~ limit + tenants): that
//             always holds every round that fits in `limit` plus all of the next one,
//   picked:   the first `limit` ($3) of those by round, then by the tenant's oldest task (the
//             order of tenants in every round), then tenant id.
const fleetCandidates = (byQueue: boolean) => {
  const queue = byQueue ? "AND queue_name = $5" : "";
  return `
WITH RECURSIVE tenants AS (
  SELECT ''::text AS tenant_id
  UNION ALL
  SELECT (SELECT w.tenant_id FROM worker_tasks w
           WHERE w.state = 'pending' AND w.handler_name = $1 AND w.tenant_id > tenants.tenant_id
           ORDER BY w.tenant_id LIMIT 1)
    FROM tenants WHERE tenants.tenant_id IS NOT NULL
), eligible AS MATERIALIZED (
  SELECT t.tenant_id, r.room
    FROM tenants t
    JOIN unnest($2::text[]) AS placed(tenant_id) ON placed.tenant_id = t.tenant_id
    CROSS JOIN LATERAL (
      SELECT $4::int - count(*)::int AS room
        FROM (SELECT 1 FROM worker_tasks c
               WHERE c.state = 'claimed' AND c.handler_name = $1 AND c.tenant_id = t.tenant_id
               LIMIT $4::int) held
    ) r
   WHERE r.room > 0
), rounds AS (
  SELECT e.tenant_id, e.room, f.id, f.created_at, 1 AS round, f.created_at AS first_at
    FROM eligible e
    CROSS JOIN LATERAL (
      SELECT id, created_at FROM worker_tasks
       WHERE state = 'pending' AND handler_name = $1 AND tenant_id = e.tenant_id ${queue}
       ORDER BY created_at, id LIMIT 1
    ) f
  UNION ALL
  SELECT r.tenant_id, r.room, n.id, n.created_at, r.round + 1, r.first_at
    FROM rounds r
    CROSS JOIN LATERAL (
      SELECT id, created_at FROM worker_tasks
       WHERE state = 'pending' AND handler_name = $1 AND tenant_id = r.tenant_id ${queue}
         AND (created_at, id) > (r.created_at, r.id)
       ORDER BY created_at, id LIMIT 1
    ) n
   WHERE r.round < least(r.room, $3::int)
), picked AS (
  SELECT id, tenant_id, round, first_at
    FROM (SELECT * FROM rounds LIMIT $3::int + (SELECT count(*) FROM eligible)) enough
   ORDER BY round, first_at, tenant_id
   LIMIT $3::int
)`;
};

// winners: the picked tasks locked, skipping any a concurrent poller holds (SKIP LOCKED) and any
//          it claimed after this snapshot (the state re-check on the locked row).
// claimed: those tasks under a new lease (worker id: the last parameter); the epoch bump fences
//          any earlier holder.
// events:  one `claimed` event each.
const fleetPollSql = (byQueue: boolean) => `${fleetCandidates(byQueue)}, winners AS (
  SELECT w.id, picked.round, picked.first_at
    FROM worker_tasks w JOIN picked ON w.id = picked.id
   WHERE w.state = 'pending'
   FOR UPDATE OF w SKIP LOCKED
), claimed AS (
  UPDATE worker_tasks t
     SET state = 'claimed', worker_id = $${byQueue ? 6 : 5}, claimed_at = statement_timestamp(), heartbeat_at = statement_timestamp(), claim_epoch = t.claim_epoch + 1
    FROM winners
   WHERE t.id = winners.id
  RETURNING t.*, winners.round, winners.first_at
), events AS (
  INSERT INTO worker_task_attempts (tenant_id, task_id, event, worker_id, claim_epoch)
  SELECT tenant_id, id, 'claimed', worker_id, claim_epoch FROM claimed
)
SELECT tenant_id, round, first_at, ${TASK_COLUMNS} FROM claimed ORDER BY round, first_at, tenant_id`;

// The same candidates, read without locking or claiming: how a poll across several backends
// learns how many of its `limit` each backend's tenants win (Storage.pollWorkerTasksOfEveryTenant).
const fleetRankSql = (byQueue: boolean) => `${fleetCandidates(byQueue)}
SELECT tenant_id, round, first_at FROM picked ORDER BY round, first_at, tenant_id`;

/** The fleet poll's two texts, claim and rank, plain and by queue (exported for the plan test). */
export const FLEET_SQL = {
  poll: fleetPollSql(false), pollQueue: fleetPollSql(true), rank: fleetRankSql(false), rankQueue: fleetRankSql(true),
} as const;

/**
 * Fleet polls of one handler on one backend take turns, so the cap sees every claim made before:
 * two concurrent polls would otherwise both count the same room. The lock is the transaction's,
 * taken in a statement of its own so the poll's snapshot starts after the previous poll's commit.
 */
const FLEET_LOCK = "SELECT pg_advisory_xact_lock(hashtext('worker_fleet_poll'), hashtext($1))";

/** $1 handler, $2 tenants, $3 limit, $4 cap, then $5 the queue (queue polls only). */
function fleetValues(poll: FleetPollRequest): unknown[] {
  const values: unknown[] = [poll.handlerName, poll.tenants, poll.limit, poll.claimedCap ?? FLEET_CLAIMED_PER_TENANT];
  if (poll.queueName !== null) values.push(poll.queueName);
  return values;
}

/**
 * The operator's fleet poll on one backend: claims up to `limit` pending tasks of the handler
 * (and queue) across `poll.tenants`, round robin: every tenant's oldest task, then every tenant's
 * next, …, a tenant holding `claimedCap` claimed tasks of the handler getting none. Answered in
 * that order, each task with its tenant.
 */
export async function pollFleetWorkerTasks(db: Connectable, poll: FleetPollRequest): Promise<FleetTask[]> {
  if (poll.limit <= 0 || poll.tenants.length === 0) return [];
  const byQueue = poll.queueName !== null;
  try {
    const rows = await inTransaction(db, async (client) => {
      await client.query({ name: "fleet_poll_lock", text: FLEET_LOCK, values: [poll.handlerName] });
      const result = await client.query<TaskRow & { tenant_id: string; round: number; first_at: Date }>({
        name: byQueue ? "poll_fleet_worker_tasks_queue" : "poll_fleet_worker_tasks",
        text: byQueue ? FLEET_SQL.pollQueue : FLEET_SQL.poll,
        values: [...fleetValues(poll), poll.workerId],
      });
      return result.rows;
    });
    return rows.map((row) => ({ ...toTask(row), tenantId: asTenantId(row.tenant_id), round: Number(row.round), firstAt: row.first_at }));
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

/** The candidates pollFleetWorkerTasks would claim now, in the same order; nothing is locked or changed. */
export async function rankFleetWorkerTasks(db: Queryable, poll: FleetPollRequest): Promise<FleetRank[]> {
  if (poll.limit <= 0 || poll.tenants.length === 0) return [];
  const byQueue = poll.queueName !== null;
  const { rows } = await db.query<{ tenant_id: string; round: number; first_at: Date }>({
    name: byQueue ? "rank_fleet_worker_tasks_queue" : "rank_fleet_worker_tasks",
    text: byQueue ? FLEET_SQL.rankQueue : FLEET_SQL.rank,
    values: fleetValues(poll),
  });
  return rows.map((row) => ({ tenantId: asTenantId(row.tenant_id), round: Number(row.round), firstAt: row.first_at }));
}

/** For Storage.locate: the tenant whose task this is on this backend, or null. */
export async function workerTaskOwner(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ tenant_id: string }>({
    name: "worker_task_owner",
    text: "SELECT tenant_id FROM worker_tasks WHERE id = $1",
    values: [id],
  });
  return rows[0]?.tenant_id ?? null;
}

// known:    the task as this statement sees it; no row: unknown, or another tenant's.
// finished: the fenced update: only the current lease holder's report lands.
// woken:    the instance, when it waits (see wakeInstances).
// event:    what happened to a known task: the report's event, or `stale_mutation_rejected`.
// Returned with the event: the task's instance when the report landed but did not wake it.
const REPORT = `
WITH known AS (
  SELECT id FROM worker_tasks WHERE tenant_id = $1 AND id = $2
), finished AS (
  UPDATE worker_tasks
     SET state = $5, output = $6, error_message = $7, error_retryable = $8, completed_at = now()
   WHERE tenant_id = $1 AND id = $2 AND state = 'claimed' AND worker_id = $3 AND claim_epoch = $4
  RETURNING tenant_id, instance_id
), ${wakeInstances("now()")}
), event AS (
  INSERT INTO worker_task_attempts (tenant_id, task_id, event, worker_id, claim_epoch, details)
  SELECT $1, known.id,
         CASE WHEN EXISTS (SELECT 1 FROM finished) THEN $5 ELSE 'stale_mutation_rejected' END,
         $3, $4,
         jsonb_build_object('reason', CASE WHEN EXISTS (SELECT 1 FROM finished) THEN $7::text ELSE $9::text END)
    FROM known
  RETURNING event
)
SELECT event, (SELECT instance_id FROM finished WHERE NOT EXISTS (SELECT 1 FROM woken)) AS unwoken FROM event`;

type Report = { state: "completed"; output: unknown } | { state: "failed"; message: string; retryable: boolean };

async function report(db: Queryable, tenantId: TenantId, taskId: string, lease: WorkerLease, outcome: Report): Promise<ReportOutcome> {
  const failure = outcome.state === "failed" ? outcome : null;
  const operation = outcome.state === "completed" ? "complete" : "fail";
  try {
    const { rows } = await db.query<{ event: string; unwoken: string | null }>({
      name: "report_worker_task",
      text: REPORT,
      values: [
        tenantId, taskId, lease.workerId, lease.claimEpoch, outcome.state,
        outcome.state === "completed" ? jsonb(outcome.output) : null,
        failure?.message ?? null, failure?.retryable ?? null, `${operation}: worker task lease changed`,
      ],
    });
    if (!rows[0]) return "not_found";
    // Not waiting in this statement's snapshot: maybe parking right now (see wakeups.ts).
    if (rows[0].unwoken) await wakeIfWaiting(db, [{ tenantId, id: rows[0].unwoken }]);
    return rows[0].event === outcome.state ? "ok" : "stale";
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

/** The worker's success: the task is `completed` with `output` and its waiting instance is woken. */
export function completeWorkerTask(db: Queryable, tenantId: TenantId, taskId: string, lease: WorkerLease, output: unknown) {
  return report(db, tenantId, taskId, lease, { state: "completed", output });
}

/** The worker's failure: the task is `failed`; the engine applies the retry policy when it wakes. */
export function failWorkerTask(
  db: Queryable, tenantId: TenantId, taskId: string, lease: WorkerLease, failure: { message: string; retryable: boolean },
) {
  return report(db, tenantId, taskId, lease, { state: "failed", ...failure });
}

// known:    the task as this statement sees it; no row: unknown, or another tenant's.
// beat:     the fenced refresh; with a checkpoint, also a compare-and-set on checkpoint_seq.
// verdict:  why a known task was refused: the lease still held in the snapshot means the
//           sequence was wrong; otherwise (or when a concurrent change made the update miss)
//           the lease moved on. Either way the refusal is recorded.
const HEARTBEAT = `
WITH known AS (
  SELECT id, checkpoint_seq,
         (state = 'claimed' AND worker_id = $3 AND claim_epoch = $4 AND $5::bigint IS NOT NULL
          AND checkpoint_seq <> $5::bigint) AS seq_mismatch
    FROM worker_tasks WHERE tenant_id = $1 AND id = $2
), beat AS (
  UPDATE worker_tasks
     SET heartbeat_at = now(),
         resume_checkpoint = CASE WHEN $5::bigint IS NULL THEN resume_checkpoint ELSE $6::jsonb END,
         checkpoint_seq = CASE WHEN $5::bigint IS NULL THEN checkpoint_seq ELSE checkpoint_seq + 1 END
   WHERE tenant_id = $1 AND id = $2 AND state = 'claimed' AND worker_id = $3 AND claim_epoch = $4
     AND ($5::bigint IS NULL OR checkpoint_seq = $5::bigint)
  RETURNING checkpoint_seq
), rejected AS (
  INSERT INTO worker_task_attempts (tenant_id, task_id, event, worker_id, claim_epoch, details)
  SELECT $1, id, 'stale_mutation_rejected', $3, $4,
         jsonb_build_object('reason', CASE WHEN seq_mismatch THEN format('heartbeat: checkpoint_seq %s is not current', $5::bigint)
                                           ELSE 'heartbeat: worker task lease changed' END)
    FROM known WHERE NOT EXISTS (SELECT 1 FROM beat)
)
SELECT known.seq_mismatch, known.checkpoint_seq AS current_seq, (SELECT checkpoint_seq FROM beat) AS new_seq FROM known`;

/**
 * Refreshes the lease's heartbeat. With a checkpoint, stores it only when `checkpoint.seq` is the
 * task's current checkpoint_seq, which then moves on by one. A refusal changes nothing.
 */
export async function heartbeatWorkerTask(
  db: Queryable,
  tenantId: TenantId,
  taskId: string,
  lease: WorkerLease,
  checkpoint: { value: unknown; seq: number } | null,
): Promise<HeartbeatOutcome> {
  try {
    const { rows } = await db.query<{ seq_mismatch: boolean; current_seq: number; new_seq: number | null }>({
      name: "heartbeat_worker_task",
      text: HEARTBEAT,
      values: [tenantId, taskId, lease.workerId, lease.claimEpoch, checkpoint?.seq ?? null, jsonb(checkpoint?.value)],
    });
    const row = rows[0];
    if (!row) return { kind: "not_found" };
    if (row.new_seq !== null) return { kind: "ok", checkpointSeq: row.new_seq };
    return row.seq_mismatch ? { kind: "seq_mismatch", checkpointSeq: row.current_seq } : { kind: "stale" };
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

/** Newest first. */
export async function listWorkerTasks(db: Queryable, tenantId: TenantId, filter: WorkerTaskFilter): Promise<WorkerTaskRecord[]> {
  // Only the predicates asked for, so each filter combination gets a plan of its own.
  const values: unknown[] = [tenantId];
  const where = ["tenant_id = $1"];
  const param = (value: unknown) => `$${values.push(value)}`;
  if (filter.states !== undefined) where.push(`state = ANY(${param(filter.states)}::text[])`);
  if (filter.handlerName !== undefined) where.push(`handler_name = ${param(filter.handlerName)}`);
  if (filter.workerId !== undefined) where.push(`worker_id = ${param(filter.workerId)}`);
  if (filter.queueName !== undefined) where.push(`queue_name = ${param(filter.queueName)}`);
  if (filter.heartbeatBefore !== undefined) where.push(`heartbeat_at < ${param(filter.heartbeatBefore)}::timestamptz`);
  const text = `SELECT ${TASK_COLUMNS} FROM worker_tasks WHERE ${where.join(" AND ")}
                ORDER BY created_at DESC, id DESC LIMIT ${param(filter.limit)} OFFSET ${param(filter.offset)}`;
  try {
    const { rows } = await db.query<TaskRow>(text, values);
    return rows.map(toTask);
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

/** Task counts by state and by handler (every state present, zero when none), and the busy workers. */
export async function workerTaskStats(db: Queryable, tenantId: TenantId): Promise<WorkerTaskStats> {
  const { rows } = await db.query<{ handler_name: string; state: WorkerTaskState; count: number; workers: string[] }>({
    name: "worker_task_stats",
    text: `SELECT handler_name, state, count(*)::int AS count,
                  array_remove(array_agg(DISTINCT worker_id) FILTER (WHERE state = 'claimed'), NULL) AS workers
             FROM worker_tasks WHERE tenant_id = $1
            GROUP BY handler_name, state`,
    values: [tenantId],
  });
  const zeros = () => Object.fromEntries(WORKER_TASK_STATES.map((state) => [state, 0])) as Record<WorkerTaskState, number>;
  const stats: WorkerTaskStats = { byState: zeros(), byHandler: {}, activeWorkers: [] };
  const workers = new Set<string>();
  for (const row of rows) {
    stats.byState[row.state] += row.count;
    (stats.byHandler[row.handler_name] ??= zeros())[row.state] = row.count;
    for (const worker of row.workers ?? []) workers.add(worker);
  }
  stats.activeWorkers = [...workers].sort();
  return stats;
}

/** A worker's claimed tasks of one tenant, and how many of them have a stale heartbeat. */
export interface ClaimedTaskCount {
  tenantId: string;
  workerId: string;
  claimed: number;
  stale: number;
}

// Claimed tasks are few (the fleet's per-tenant cap, each worker's own limit), and the partial
// index worker_tasks_claimed_heartbeat_idx holds just them: neither count reads finished tasks.
const CLAIMED_COUNTS = (scope: string) => `
SELECT tenant_id, worker_id, count(*)::int AS claimed, count(*) FILTER (WHERE heartbeat_at < $1::timestamptz)::int AS stale
  FROM worker_tasks
 WHERE state = 'claimed' AND ${scope}
 GROUP BY tenant_id, worker_id`;

type ClaimedCountRow = { tenant_id: string; worker_id: string; claimed: number; stale: number };
const toClaimedCount = (row: ClaimedCountRow): ClaimedTaskCount => ({ tenantId: row.tenant_id, workerId: row.worker_id, claimed: row.claimed, stale: row.stale });

/** The tenant's claimed tasks per worker; `stale`: last heartbeat before `staleBefore`. */
export async function claimedTaskCounts(db: Queryable, tenantId: TenantId, staleBefore: Date): Promise<ClaimedTaskCount[]> {
  const { rows } = await db.query<ClaimedCountRow>({ name: "claimed_task_counts", text: CLAIMED_COUNTS("tenant_id = $2"), values: [staleBefore, tenantId] });
  return rows.map(toClaimedCount);
}

/** Every tenant's claimed tasks on this backend held by these workers, per (tenant, worker): for Storage's fleet view. */
export async function claimedTaskCountsOfBackend(db: Queryable, workerIds: readonly string[], staleBefore: Date): Promise<ClaimedTaskCount[]> {
  if (workerIds.length === 0) return [];
  const { rows } = await db.query<ClaimedCountRow>({
    name: "claimed_task_counts_of_backend", text: CLAIMED_COUNTS("worker_id = ANY($2::text[])"), values: [staleBefore, workerIds],
  });
  return rows.map(toClaimedCount);
}

/**
 * The task's attempt events, oldest first, or null when the tenant has no such task. A task that
 * was cancelled (deleted) still has its events, `cancelled` last, so it is still known here.
 */
export async function listWorkerTaskAttempts(db: Queryable, tenantId: TenantId, taskId: string): Promise<WorkerTaskAttempt[] | null> {
  const { rows } = await db.query<{
    id: number; task_id: string; claim_epoch: number | null; worker_id: string | null; event: WorkerTaskEvent;
    reason: string | null; created_at: Date;
  }>({
    name: "list_worker_task_attempts",
    text: `SELECT id, task_id, claim_epoch, worker_id, event, details ->> 'reason' AS reason, created_at
             FROM worker_task_attempts
            WHERE tenant_id = $1 AND task_id = $2
            ORDER BY id`,
    values: [tenantId, taskId],
  });
  if (rows.length === 0) {
    const known = await db.query({
      name: "worker_task_exists",
      text: "SELECT 1 FROM worker_tasks WHERE tenant_id = $1 AND id = $2",
      values: [tenantId, taskId],
    });
    if (known.rowCount === 0) return null;
  }
  return rows.map((row) => ({
    id: row.id, taskId: row.task_id, claimEpoch: row.claim_epoch, workerId: row.worker_id, event: row.event,
    reason: row.reason, createdAt: row.created_at,
  }));
}

/**
 * For the engine: the task of (instance, block, attempt), the newest if several, or null. A task
 * still `pending` or `claimed` means the worker has not reported yet.
 */
export async function findTaskResult(db: Queryable, tenantId: TenantId, taskId: string): Promise<TaskResult | null> {
  const { rows } = await db.query<{
    state: WorkerTaskState; output: unknown; error_message: string | null; error_retryable: boolean | null;
    resume_checkpoint: unknown; checkpoint_seq: number; worker_id: string | null;
  }>({
    name: "find_worker_task_result",
    // By the task's own id, which the engine keeps in the step's node: a loop's earlier iteration
    // may have left a finished task for the same block and attempt.
    text: `SELECT state, output, error_message, error_retryable, resume_checkpoint, checkpoint_seq, worker_id FROM worker_tasks
            WHERE tenant_id = $1 AND id = $2`,
    values: [tenantId, taskId],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    state: row.state, output: row.output, errorMessage: row.error_message, errorRetryable: row.error_retryable,
    resumeCheckpoint: row.resume_checkpoint, checkpointSeq: row.checkpoint_seq, workerId: row.worker_id,
  };
}

/**
 * For the engine (race losers, loop resets): deletes the open (pending or claimed) tasks of these
 * blocks, each with a `cancelled` event. A later poll never returns them; a report on one is 404.
 * Returns how many were cancelled.
 */
export async function cancelWorkerTasks(db: Queryable, tenantId: TenantId, instanceId: string, blockIds: readonly string[]): Promise<number> {
  if (blockIds.length === 0) return 0;
  const { rows } = await db.query<{ n: number }>({
    name: "cancel_worker_tasks",
    text: `WITH gone AS (
             DELETE FROM worker_tasks
              WHERE tenant_id = $1 AND instance_id = $2 AND block_id = ANY($3::text[]) AND state IN ('pending', 'claimed')
             RETURNING tenant_id, id, worker_id, claim_epoch
           ), events AS (
             INSERT INTO worker_task_attempts (tenant_id, task_id, event, worker_id, claim_epoch)
             SELECT tenant_id, id, 'cancelled', worker_id, claim_epoch FROM gone
           )
           SELECT count(*)::int AS n FROM gone`,
    values: [tenantId, instanceId, blockIds],
  });
  return rows[0]!.n;
}

// expired:  open tasks whose timeout_ms has passed since creation, oldest first, locked.
// finished: failed as retryable timeouts; their waiting instances are woken like after a fail.
const TIME_OUT = `
WITH expired AS (
  SELECT id, tenant_id FROM worker_tasks
   WHERE state IN ('pending', 'claimed') AND timeout_ms IS NOT NULL
     AND created_at + timeout_ms * interval '1 millisecond' <= $1
     AND ($4::text[] IS NULL OR tenant_id = ANY($4::text[]))
   ORDER BY created_at
   LIMIT $2
   FOR UPDATE SKIP LOCKED
), finished AS (
  UPDATE worker_tasks t
     SET state = 'failed', error_message = $3, error_retryable = true, completed_at = $1
    FROM expired
   WHERE t.tenant_id = expired.tenant_id AND t.id = expired.id
  RETURNING t.tenant_id, t.id, t.instance_id, t.worker_id, t.claim_epoch
), ${wakeInstances("$1")}
), events AS (
  INSERT INTO worker_task_attempts (tenant_id, task_id, event, worker_id, claim_epoch, details)
  SELECT tenant_id, id, 'timed_out', worker_id, claim_epoch, jsonb_build_object('reason', $3::text) FROM finished
)
SELECT count(*)::int AS n,
       ARRAY(SELECT DISTINCT jsonb_build_object('tenantId', f.tenant_id, 'id', f.instance_id) FROM finished f
              WHERE (f.tenant_id, f.instance_id) NOT IN (SELECT tenant_id, id FROM woken)) AS unwoken
  FROM finished`;

// stale:     claimed tasks whose worker has not sent a heartbeat for staleMs, locked.
// reclaimed: back to `pending` with the worker cleared; the epoch is kept, the next claim bumps it.
const RECLAIM = `
WITH stale AS (
  SELECT id, tenant_id, worker_id, claim_epoch FROM worker_tasks
   WHERE state = 'claimed' AND heartbeat_at < $1::timestamptz - $2::bigint * interval '1 millisecond'
     AND ($4::text[] IS NULL OR tenant_id = ANY($4::text[]))
   ORDER BY heartbeat_at
   LIMIT $3
   FOR UPDATE SKIP LOCKED
), reclaimed AS (
  UPDATE worker_tasks t
     SET state = 'pending', worker_id = NULL, claimed_at = NULL, heartbeat_at = NULL
    FROM stale
   WHERE t.tenant_id = stale.tenant_id AND t.id = stale.id
  RETURNING stale.tenant_id, stale.id, stale.worker_id, stale.claim_epoch
), events AS (
  INSERT INTO worker_task_attempts (tenant_id, task_id, event, worker_id, claim_epoch, details)
  SELECT tenant_id, id, 'reclaimed', worker_id, claim_epoch, jsonb_build_object('reason', format('no heartbeat for %s ms', $2::bigint))
    FROM reclaimed
)
SELECT count(*)::int AS n FROM reclaimed`;

export interface ReapOptions {
  /** A claimed task without a heartbeat for this long goes back to `pending` (H: 60 s). */
  staleMs: number;
  /** At most this many tasks of each kind per call, so one sweep never holds many row locks. */
  limit: number;
  /** Only these tenants' tasks (the engine's: placed on this backend, not being moved); null: all. */
  onlyTenants: string[] | null;
}

export const REAP_DEFAULTS: ReapOptions = { staleMs: 60_000, limit: 500, onlyTenants: null };

/**
 * When the pages call a claimed task's heartbeat stale: none for 30 s, half the time after which
 * the reaper hands the task to another worker, so a worker going quiet shows before its claims
 * are taken back (and a task the reaper would already take back is stale too).
 */
export const STALE_HEARTBEAT_MS = REAP_DEFAULTS.staleMs / 2;

/**
 * The worker-task reaper, for the engine's reaper timer; sweeps the whole backend. Timeouts
 * first, so a task that is both timed out and abandoned fails rather than being handed out again.
 */
export async function reapWorkerTasks(
  db: Queryable,
  now: Date,
  options: Partial<ReapOptions> = {},
): Promise<{ timedOut: number; reclaimed: number }> {
  const { staleMs, limit, onlyTenants } = { ...REAP_DEFAULTS, ...options };
  const timedOut = await db.query<{ n: number; unwoken: InstanceKey[] }>({
    name: "time_out_worker_tasks", text: TIME_OUT, values: [now, limit, TIMEOUT_MESSAGE, onlyTenants],
  });
  await wakeIfWaiting(db, timedOut.rows[0]!.unwoken);
  const reclaimed = await db.query<{ n: number }>({ name: "reclaim_worker_tasks", text: RECLAIM, values: [now, staleMs, limit, onlyTenants] });
  return { timedOut: timedOut.rows[0]!.n, reclaimed: reclaimed.rows[0]!.n };
}
