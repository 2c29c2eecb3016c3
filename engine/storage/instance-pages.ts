// SQL for the web app's instance pages: the list (filters, search, keyset pagination) and what the detail
// page shows besides the tree (the instance with its sequence, outputs, signals, worker tasks and
// their attempt events). Every statement is scoped by tenant_id; a foreign instance is missing.
import type { InstanceSearch } from "../instance-search.ts";
import type { InstanceState } from "./instances.ts";
import { searchArms } from "./instance-search.ts";
import { signalTypeFromText, type SignalType } from "./signals.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";
import type { WorkerTaskEvent, WorkerTaskState } from "./worker-tasks.ts";
import type { TenantId } from "./ids.ts";
import { contextWithRunFacts, RUN_FACT_COLUMNS, type RunFactColumns } from "./instance-records.ts";

export const INSTANCE_PAGE_MAX = 200;

/** A position in the list: the last row seen. The list is ordered by (created_at DESC, id DESC). */
export interface InstanceKey {
  createdAt: Date;
  id: string;
}

export interface InstancePageQuery {
  /** Any of these; absent or empty: every state. */
  states?: readonly InstanceState[];
  sequenceId?: string;
  /** Inclusive. */
  createdAfter?: Date;
  /** Exclusive. */
  createdBefore?: Date;
  /** Only the instances it finds (instance-search.ts), in the same order and pages. */
  search?: InstanceSearch;
  /** Rows strictly after this key; absent: the first page. */
  after?: InstanceKey;
  /** 1 to INSTANCE_PAGE_MAX. */
  limit: number;
}

export interface InstanceListItem {
  id: string;
  namespace: string;
  sequenceId: string;
  /** null when the sequence is gone (or never was the tenant's). */
  sequenceName: string | null;
  sequenceVersion: number | null;
  state: InstanceState;
  priority: number;
  nextFireAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface InstancePage {
  items: InstanceListItem[];
  /** The key to pass as `after` for the next page; null on the last page. */
  next: InstanceKey | null;
}

interface ListRow {
  id: string; namespace: string; sequence_id: string; sequence_name: string | null; sequence_version: number | null;
  state: InstanceState; priority: number; next_fire_at: Date | null; created_at: Date; updated_at: Date;
}

const LIST_COLUMNS = "id, tenant_id, namespace, sequence_id, state, priority, next_fire_at, created_at, updated_at";

/**
 * One page, newest first. Keyset, not OFFSET: each page is an index range scan that starts at the
 * previous page's last key, so page 5,000 costs what page 1 costs, and rows inserted meanwhile
 * (always newer) never shift a row into or out of a later page.
 *
 * Several states are one branch per state, merged: each branch reads
 * (tenant_id, state, created_at DESC, id DESC) in order and stops after `limit + 1` rows. With
 * `state = ANY(...)` no index yields that order, so the planner would either sort every matching
 * row or walk the tenant's whole history filtering by state, which is slow for rare states.
 * A search has branches of its own (searchArms), each read through its search index.
 */
export async function listInstancesPage(db: Queryable, tenantId: TenantId, query: InstancePageQuery): Promise<InstancePage> {
  const { text, values, limit } = instancesPageStatement(tenantId, query);
  const { rows } = await db.query<ListRow>(text, values);
  const items = rows.slice(0, limit).map((row) => ({
    id: row.id, namespace: row.namespace, sequenceId: row.sequence_id, sequenceName: row.sequence_name,
    sequenceVersion: row.sequence_version, state: row.state, priority: row.priority, nextFireAt: row.next_fire_at,
    createdAt: row.created_at, updatedAt: row.updated_at,
  }));
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/** The statement `listInstancesPage` runs (exported for the test that EXPLAINs it); reads `limit + 1` rows. */
export function instancesPageStatement(tenantId: TenantId, query: InstancePageQuery) {
  const limit = Math.min(Math.max(Math.trunc(query.limit), 1), INSTANCE_PAGE_MAX);
  const values: unknown[] = [tenantId];
  const param = (value: unknown) => `$${values.push(value)}`;
  // Only the predicates asked for, so each filter combination gets a plan of its own.
  const shared: string[] = [];
  if (query.sequenceId !== undefined) shared.push(`sequence_id = ${param(query.sequenceId)}::uuid`);
  if (query.createdAfter !== undefined) shared.push(`created_at >= ${param(query.createdAfter)}`);
  if (query.createdBefore !== undefined) shared.push(`created_at < ${param(query.createdBefore)}`);
  // A row-value comparison, which the btree reads as one range bound on (created_at, id).
  if (query.after !== undefined) shared.push(`(created_at, id) < (${param(query.after.createdAt)}, ${param(query.after.id)}::uuid)`);
  const take = param(limit + 1);
  const branch = (where: string[]) =>
    `SELECT ${LIST_COLUMNS} FROM task_instances WHERE ${["tenant_id = $1", ...where, ...shared].join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ${take}`;
  const states = [...new Set(query.states ?? [])];
  const branches =
    query.search !== undefined ? searchArms(tenantId, query.search, states, param).map(branch)
    : states.length === 0 ? [branch([])]
    : states.map((state) => branch([`state = ${param(state)}`]));
  const page =
    branches.length === 0 ? `SELECT ${LIST_COLUMNS} FROM task_instances WHERE false`
    : branches.length === 1 ? branches[0]!
    : `SELECT * FROM (${branches.map((b) => `(${b})`).join(" UNION ALL ")}) merged ORDER BY created_at DESC, id DESC LIMIT ${take}`;
  // The sequence is looked up for the page's rows only, after the limit.
  const text = `SELECT p.id, p.namespace, p.sequence_id, s.name AS sequence_name, s.version AS sequence_version, p.state,
                       p.priority, p.next_fire_at, p.created_at, p.updated_at
                  FROM (${page}) p
                  LEFT JOIN sequences s ON s.tenant_id = p.tenant_id AND s.id = p.sequence_id
                 ORDER BY p.created_at DESC, p.id DESC`;
  return { text, values, limit };
}

// ------------------------------------------------------------------ the detail page

export interface InstanceDetailRecord {
  id: string;
  namespace: string;
  sequenceId: string;
  state: InstanceState;
  priority: number;
  context: unknown;
  metadata: unknown;
  timezone: string;
  nextFireAt: Date | null;
  deferReason: string | null;
  parentInstanceId: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The evaluator's cursor, for the execution tree. */
  cursor: unknown;
  /** null when the tenant has no such sequence (any more). */
  sequence: { id: string; namespace: string; name: string; version: number; definition: unknown } | null;
}

export interface InstanceOutput {
  id: string;
  blockId: string;
  output: unknown;
  outputRef: string | null;
  attempt: number;
  createdAt: Date;
}

export interface InstanceSignal {
  id: string;
  type: SignalType;
  payload: unknown;
  delivered: boolean;
  createdAt: Date;
  deliveredAt: Date | null;
}

export interface InstanceWorkerTaskAttempt {
  id: number;
  event: WorkerTaskEvent;
  workerId: string | null;
  claimEpoch: number | null;
  reason: string | null;
  createdAt: Date;
}

export interface InstanceWorkerTask {
  id: string;
  blockId: string;
  handlerName: string;
  queueName: string | null;
  state: WorkerTaskState;
  attempt: number;
  workerId: string | null;
  errorMessage: string | null;
  createdAt: Date;
  completedAt: Date | null;
  /** Oldest first. */
  attempts: InstanceWorkerTaskAttempt[];
}

export interface InstanceDetail {
  instance: InstanceDetailRecord;
  /** Oldest first; the newest `limits.outputs` only. */
  outputs: InstanceOutput[];
  outputsTruncated: boolean;
  /** Newest first. */
  signals: InstanceSignal[];
  /** Newest first, each with its attempt events. */
  workerTasks: InstanceWorkerTask[];
}

export interface InstanceDetailLimits {
  outputs: number;
  signals: number;
  workerTasks: number;
}

export const DETAIL_LIMITS: InstanceDetailLimits = { outputs: 200, signals: 50, workerTasks: 100 };

/** The instance with its sequence (name, version, definition) and cursor, or null. */
export async function getInstanceWithSequence(db: Queryable, tenantId: TenantId, instanceId: string): Promise<InstanceDetailRecord | null> {
  const { rows } = await db.query<{
    id: string; namespace: string; sequence_id: string; state: InstanceState; priority: number; context: unknown;
    metadata: unknown; timezone: string; next_fire_at: Date | null; defer_reason: string | null; parent_instance_id: string | null;
    created_at: Date; updated_at: Date; cursor: unknown; s_id: string | null; s_namespace: string | null; s_name: string | null;
    s_version: number | null; s_definition: unknown;
  } & RunFactColumns>({
    name: "instance_page_instance",
    text: `SELECT i.id, i.namespace, i.sequence_id, i.state, i.priority, i.context, i.metadata, i.timezone, i.next_fire_at,
                  i.defer_reason, i.parent_instance_id, i.created_at, i.updated_at, i.cursor, ${RUN_FACT_COLUMNS.replace(/(\w+)/g, "i.$1")},
                  s.id AS s_id, s.namespace AS s_namespace, s.name AS s_name, s.version AS s_version, s.definition AS s_definition
             FROM task_instances i
             LEFT JOIN sequences s ON s.tenant_id = i.tenant_id AND s.id = i.sequence_id
            WHERE i.tenant_id = $1 AND i.id = $2`,
    values: [tenantId, instanceId],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id, namespace: row.namespace, sequenceId: row.sequence_id, state: row.state, priority: row.priority,
    context: contextWithRunFacts(row.context, row), metadata: row.metadata, timezone: row.timezone, nextFireAt: row.next_fire_at,
    deferReason: row.defer_reason, parentInstanceId: row.parent_instance_id, createdAt: row.created_at,
    updatedAt: row.updated_at, cursor: row.cursor ?? null,
    sequence: row.s_id === null
      ? null
      : { id: row.s_id, namespace: row.s_namespace!, name: row.s_name!, version: row.s_version!, definition: row.s_definition },
  };
}

/**
 * The instance's newest `limit` outputs (one more is read to tell whether there are older ones),
 * returned oldest first. As in `listBlockOutputs`, a block's internal rows (`__in_progress__`,
 * `__retry__`) are hidden once it has a real one.
 */
export async function listInstanceOutputs(
  db: Queryable, tenantId: TenantId, instanceId: string, limit: number,
): Promise<{ outputs: InstanceOutput[]; truncated: boolean }> {
  const { rows } = await db.query<{
    id: string; block_id: string; output: unknown; output_ref: string | null; attempt: number; created_at: Date;
  }>({
    name: "instance_page_outputs",
    text: `SELECT o.id, o.block_id, o.output, o.output_ref, o.attempt, o.created_at
             FROM block_outputs o
            WHERE o.tenant_id = $1 AND o.instance_id = $2
              AND NOT (COALESCE(o.output_ref, '') IN ('__in_progress__', '__retry__') AND EXISTS (
                    SELECT 1 FROM block_outputs r
                     WHERE r.tenant_id = o.tenant_id AND r.instance_id = o.instance_id AND r.block_id = o.block_id
                       AND COALESCE(r.output_ref, '') NOT IN ('__in_progress__', '__retry__')))
            ORDER BY o.created_at DESC, o.id DESC
            LIMIT $3`,
    values: [tenantId, instanceId, limit + 1],
  });
  const outputs = rows.slice(0, limit).reverse().map((row) => ({
    id: row.id, blockId: row.block_id, output: row.output, outputRef: row.output_ref, attempt: row.attempt, createdAt: row.created_at,
  }));
  return { outputs, truncated: rows.length > limit };
}

/** The instance's latest signals, delivered or not, newest first. */
export async function listInstanceSignals(db: Queryable, tenantId: TenantId, instanceId: string, limit: number): Promise<InstanceSignal[]> {
  const { rows } = await db.query<{
    id: string; signal_type: string; payload: unknown; delivered: boolean; created_at: Date; delivered_at: Date | null;
  }>({
    name: "instance_page_signals",
    text: `SELECT id, signal_type, payload, delivered, created_at, delivered_at
             FROM signals
            WHERE tenant_id = $1 AND instance_id = $2
            ORDER BY created_at DESC, id DESC
            LIMIT $3`,
    values: [tenantId, instanceId, limit],
  });
  return rows.map((row) => ({
    id: row.id, type: signalTypeFromText(row.signal_type), payload: row.payload ?? null, delivered: row.delivered,
    createdAt: row.created_at, deliveredAt: row.delivered_at,
  }));
}

/**
 * The instance's latest worker tasks, newest first, each with its attempt events (oldest first).
 * A task the engine cancelled is deleted, and its events cannot be tied to the instance any more.
 */
export async function listInstanceWorkerTasks(db: Queryable, tenantId: TenantId, instanceId: string, limit: number): Promise<InstanceWorkerTask[]> {
  const { rows: tasks } = await db.query<{
    id: string; block_id: string; handler_name: string; queue_name: string | null; state: WorkerTaskState; attempt: number;
    worker_id: string | null; error_message: string | null; created_at: Date; completed_at: Date | null;
  }>({
    name: "instance_page_worker_tasks",
    text: `SELECT id, block_id, handler_name, queue_name, state, attempt, worker_id, error_message, created_at, completed_at
             FROM worker_tasks
            WHERE tenant_id = $1 AND instance_id = $2
            ORDER BY created_at DESC, id DESC
            LIMIT $3`,
    values: [tenantId, instanceId, limit],
  });
  if (tasks.length === 0) return [];
  const { rows: events } = await db.query<{
    id: number; task_id: string; event: WorkerTaskEvent; worker_id: string | null; claim_epoch: number | null;
    reason: string | null; created_at: Date;
  }>({
    name: "instance_page_worker_task_attempts",
    text: `SELECT id, task_id, event, worker_id, claim_epoch, details ->> 'reason' AS reason, created_at
             FROM worker_task_attempts
            WHERE tenant_id = $1 AND task_id = ANY($2::uuid[])
            ORDER BY id`,
    values: [tenantId, tasks.map((task) => task.id)],
  });
  const byTask = new Map<string, InstanceWorkerTaskAttempt[]>(tasks.map((task) => [task.id, []]));
  for (const row of events) {
    byTask.get(row.task_id)?.push({
      id: row.id, event: row.event, workerId: row.worker_id, claimEpoch: row.claim_epoch, reason: row.reason, createdAt: row.created_at,
    });
  }
  return tasks.map((task) => ({
    id: task.id, blockId: task.block_id, handlerName: task.handler_name, queueName: task.queue_name, state: task.state,
    attempt: task.attempt, workerId: task.worker_id, errorMessage: task.error_message, createdAt: task.created_at,
    completedAt: task.completed_at, attempts: byTask.get(task.id) ?? [],
  }));
}

/**
 * Everything the detail page shows, from one snapshot (a read-only REPEATABLE READ transaction):
 * the tree, the outputs and the signals agree with each other however busy the instance is. One
 * connection, used in turn, so a page view never takes more than one from the pool.
 */
export function getInstanceDetail(
  pool: Connectable, tenantId: TenantId, instanceId: string, limits: InstanceDetailLimits = DETAIL_LIMITS,
): Promise<InstanceDetail | null> {
  return inTransaction(pool, async (client) => {
    await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    const instance = await getInstanceWithSequence(client, tenantId, instanceId);
    if (!instance) return null;
    const { outputs, truncated } = await listInstanceOutputs(client, tenantId, instanceId, limits.outputs);
    const signals = await listInstanceSignals(client, tenantId, instanceId, limits.signals);
    const workerTasks = await listInstanceWorkerTasks(client, tenantId, instanceId, limits.workerTasks);
    return { instance, outputs, outputsTruncated: truncated, signals, workerTasks };
  });
}
