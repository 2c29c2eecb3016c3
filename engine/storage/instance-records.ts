// SQL for creating and reading instances and their block outputs (wire-format E.5-E.9). Every
// statement but `instanceOwner` is scoped by tenant_id; that one serves Storage.locate, which
// confirms the owner through the partition router before anything is read.
import { uuidv7, type TenantId } from "./ids.ts";
import { AppError } from "../errors.ts";
import type { InstanceState } from "./instances.ts";
import type { Queryable } from "./transaction.ts";

export interface NewInstance {
  namespace: string;
  sequenceId: string;
  /** 0 Low, 1 Normal, 2 High, 3 Critical. */
  priority: number;
  /** The whole context, defaults filled in. */
  context: unknown;
  /** null: due now (a scheduled instance always has a due time). */
  nextFireAt: Date | null;
  timezone: string;
  metadata: unknown;
  idempotencyKey: string | null;
  concurrencyKey: string | null;
  maxConcurrency: number | null;
  budget: unknown;
  dryRun: boolean;
  /** The session (wire-format O) it belongs to; absent or null: none. */
  sessionId?: string | null;
}

/** An instance's context with every default and `data`, as POST /instances stores one without a context. */
export function contextWithData(data: unknown): unknown {
  return {
    data, config: null, audit: [],
    runtime: {
      current_step: null, attempt: 0, started_at: null, current_step_started_at: null, resource_key: null,
      total_steps_executed: 0, dry_run: false, dry_run_auto_approve: false,
    },
  };
}

export interface InstanceRecord {
  id: string;
  tenantId: string;
  namespace: string;
  sequenceId: string;
  state: InstanceState;
  priority: number;
  context: unknown;
  nextFireAt: Date | null;
  timezone: string;
  metadata: unknown;
  parentInstanceId: string | null;
  idempotencyKey: string | null;
  concurrencyKey: string | null;
  maxConcurrency: number | null;
  sessionId: string | null;
  budget: unknown;
  dryRun: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface InstanceFilter {
  namespace?: string;
  sequenceId?: string;
  states?: readonly InstanceState[];
  /** `metadata ->> key = value`, all of them. */
  metadata?: readonly (readonly [key: string, value: string])[];
  offset: number;
  limit: number;
}

export interface BlockOutputRecord {
  id: string;
  instanceId: string;
  blockId: string;
  output: unknown;
  outputRef: string | null;
  outputSize: number;
  attempt: number;
  createdAt: Date;
}

/**
 * PostgreSQL refuses NUL characters in text and jsonb; that is the client's input, not our fault,
 * so it is an invalid argument rather than a 500.
 */
export function rejectUnstorableText(error: unknown): unknown {
  const code = (error as { code?: string }).code;
  if (code === "22P05" || code === "22021") return new AppError("invalid_argument", "text must not contain NUL (\\u0000) characters");
  return error;
}

/** JSON for a jsonb parameter; a JSON null becomes SQL NULL, as for an absent value. */
const jsonb = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** The columns the engine keeps context.runtime's run facts in (RunFacts in execution.ts). */
export const RUN_FACT_COLUMNS = "started_at, current_step, current_step_started_at, current_attempt, steps_executed";

export interface RunFactColumns {
  started_at: Date | null; current_step: string | null; current_step_started_at: Date | null; current_attempt: number; steps_executed: number;
}

/**
 * The stored context with the engine's run facts in context.runtime, once the engine has run the
 * instance; before that, context.runtime is as the client created it.
 */
export function contextWithRunFacts(context: unknown, facts: RunFactColumns): unknown {
  if (facts.started_at === null && facts.steps_executed === 0) return context;
  const stored = typeof context === "object" && context !== null ? (context as Record<string, unknown>) : {};
  const runtime = typeof stored.runtime === "object" && stored.runtime !== null ? stored.runtime : {};
  return {
    ...stored,
    runtime: {
      ...runtime,
      started_at: facts.started_at?.toISOString() ?? null,
      current_step: facts.current_step,
      current_step_started_at: facts.current_step_started_at?.toISOString() ?? null,
      attempt: facts.current_attempt,
      total_steps_executed: facts.steps_executed,
    },
  };
}

export const INSTANCE_COLUMNS = `id, tenant_id, namespace, sequence_id, state, priority, context, next_fire_at, timezone,
  metadata, parent_instance_id, idempotency_key, concurrency_key, max_concurrency, session_id, budget, dry_run,
  created_at, updated_at, ${RUN_FACT_COLUMNS}`;

/** The columns the create statements write, in INSERT order after (id, tenant_id). */
const CREATE_COLUMNS = `namespace, sequence_id, state, priority, context, next_fire_at, timezone, metadata,
  idempotency_key, concurrency_key, max_concurrency, budget, dry_run, session_id`;

// An idempotency key names at most one instance per tenant (unique partial index).
const ON_KEY_CONFLICT = "ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING";

/**
 * Creates one scheduled instance, or finds the tenant's instance with the same idempotency key.
 * The lookup after a conflict is a separate statement on purpose: it must see the row a
 * concurrent creator committed, which the inserting statement's snapshot does not.
 */
export async function createInstance(
  db: Queryable,
  tenantId: TenantId,
  instance: NewInstance,
): Promise<{ id: string; deduplicated: boolean }> {
  const id = uuidv7();
  try {
    const { rows } = await db.query<{ id: string }>({
      name: "create_instance",
      text: `INSERT INTO task_instances (id, tenant_id, ${CREATE_COLUMNS})
             VALUES ($1, $2, $3, $4, 'scheduled', $5, $6, COALESCE($7::timestamptz, now()), $8, $9, $10, $11, $12, $13, $14, $15)
             ${ON_KEY_CONFLICT}
             RETURNING id`,
      values: [
        id, tenantId, instance.namespace, instance.sequenceId, instance.priority, jsonb(instance.context), instance.nextFireAt,
        instance.timezone, jsonb(instance.metadata), instance.idempotencyKey, instance.concurrencyKey, instance.maxConcurrency,
        jsonb(instance.budget), instance.dryRun, instance.sessionId ?? null,
      ],
    });
    if (rows[0]) return { id: rows[0].id, deduplicated: false };
  } catch (error) {
    throw rejectUnstorableText(error);
  }
  const { rows } = await db.query<{ id: string }>({
    name: "instance_by_idempotency_key",
    text: "SELECT id FROM task_instances WHERE tenant_id = $1 AND idempotency_key = $2",
    values: [tenantId, instance.idempotencyKey],
  });
  if (!rows[0]) throw new AppError("internal", "idempotency conflict without a matching instance");
  return { id: rows[0].id, deduplicated: true };
}

/**
 * Creates all the instances in one statement, so the batch is all or nothing. An item whose
 * idempotency key the tenant already used (or an earlier item of the batch used) is skipped.
 * Returns how many were created.
 */
export async function createInstances(db: Queryable, tenantId: TenantId, instances: readonly NewInstance[]): Promise<number> {
  if (instances.length === 0) return 0;
  const rows = instances.map((instance) => ({
    id: uuidv7(),
    namespace: instance.namespace,
    sequence_id: instance.sequenceId,
    priority: instance.priority,
    context: instance.context,
    next_fire_at: instance.nextFireAt?.toISOString() ?? null,
    timezone: instance.timezone,
    metadata: instance.metadata ?? null,
    idempotency_key: instance.idempotencyKey,
    concurrency_key: instance.concurrencyKey,
    max_concurrency: instance.maxConcurrency,
    budget: instance.budget ?? null,
    dry_run: instance.dryRun,
    session_id: instance.sessionId ?? null,
  }));
  try {
    const result = await db.query({
      name: "create_instances",
      // jsonb_to_recordset turns a JSON null into SQL NULL, as jsonb() does for one instance.
      text: `INSERT INTO task_instances (id, tenant_id, ${CREATE_COLUMNS})
             SELECT r.id, $1, r.namespace, r.sequence_id, 'scheduled', r.priority, r.context, COALESCE(r.next_fire_at, now()),
                    r.timezone, r.metadata, r.idempotency_key, r.concurrency_key, r.max_concurrency, r.budget, r.dry_run, r.session_id
               FROM jsonb_to_recordset($2::jsonb) AS r(
                      id uuid, namespace text, sequence_id uuid, priority smallint, context jsonb, next_fire_at timestamptz,
                      timezone text, metadata jsonb, idempotency_key text, concurrency_key text, max_concurrency integer,
                      budget jsonb, dry_run boolean, session_id text)
             ${ON_KEY_CONFLICT}`,
      values: [tenantId, JSON.stringify(rows)],
    });
    return result.rowCount ?? 0;
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

type InstanceRow = {
  id: string; tenant_id: string; namespace: string; sequence_id: string; state: InstanceState; priority: number;
  context: unknown; next_fire_at: Date | null; timezone: string; metadata: unknown; parent_instance_id: string | null;
  idempotency_key: string | null; concurrency_key: string | null; max_concurrency: number | null; session_id: string | null;
  budget: unknown; dry_run: boolean; created_at: Date; updated_at: Date;
} & RunFactColumns;

export function toInstance(row: InstanceRow): InstanceRecord {
  return {
    id: row.id, tenantId: row.tenant_id, namespace: row.namespace, sequenceId: row.sequence_id, state: row.state,
    priority: row.priority, context: contextWithRunFacts(row.context, row), nextFireAt: row.next_fire_at, timezone: row.timezone, metadata: row.metadata,
    parentInstanceId: row.parent_instance_id, idempotencyKey: row.idempotency_key, concurrencyKey: row.concurrency_key,
    maxConcurrency: row.max_concurrency, sessionId: row.session_id, budget: row.budget, dryRun: row.dry_run,
    createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

export async function getInstance(db: Queryable, tenantId: TenantId, id: string): Promise<InstanceRecord | null> {
  const { rows } = await db.query<InstanceRow>({
    name: "get_instance",
    text: `SELECT ${INSTANCE_COLUMNS} FROM task_instances WHERE tenant_id = $1 AND id = $2`,
    values: [tenantId, id],
  });
  return rows[0] ? toInstance(rows[0]) : null;
}

/** Newest first; `hasMore` says whether a further page exists (one extra row is read to know). */
export async function listInstances(
  db: Queryable,
  tenantId: TenantId,
  filter: InstanceFilter,
): Promise<{ items: InstanceRecord[]; hasMore: boolean }> {
  // Only the predicates asked for, so each filter combination gets a plan of its own.
  const values: unknown[] = [tenantId];
  const where = ["tenant_id = $1"];
  const param = (value: unknown) => `$${values.push(value)}`;
  if (filter.namespace !== undefined) where.push(`namespace = ${param(filter.namespace)}`);
  if (filter.sequenceId !== undefined) where.push(`sequence_id = ${param(filter.sequenceId)}`);
  if (filter.states !== undefined) where.push(`state = ANY(${param(filter.states)}::text[])`);
  for (const [key, value] of filter.metadata ?? []) where.push(`metadata ->> ${param(key)} = ${param(value)}`);
  const text = `SELECT ${INSTANCE_COLUMNS} FROM task_instances WHERE ${where.join(" AND ")}
                ORDER BY created_at DESC, id DESC LIMIT ${param(filter.limit + 1)} OFFSET ${param(filter.offset)}`;
  try {
    const { rows } = await db.query<InstanceRow>(text, values);
    return { items: rows.slice(0, filter.limit).map(toInstance), hasMore: rows.length > filter.limit };
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

/**
 * The instance's outputs, oldest first (created_at, then id), or null when the tenant has no such
 * instance. A block's internal rows (`__in_progress__`, `__retry__`) are hidden once it has a
 * real one (wire-format E, `<BlockOutput>`).
 */
/** Whether the tenant has this instance: the lookup behind every "instance not found" of a read that lists its rows. */
export async function instanceExists(db: Queryable, tenantId: TenantId, instanceId: string): Promise<boolean> {
  const { rowCount } = await db.query({ name: "instance_exists", text: "SELECT 1 FROM task_instances WHERE tenant_id = $1 AND id = $2", values: [tenantId, instanceId] });
  return (rowCount ?? 0) > 0;
}

export async function listBlockOutputs(db: Queryable, tenantId: TenantId, instanceId: string): Promise<BlockOutputRecord[] | null> {
  if (!(await instanceExists(db, tenantId, instanceId))) return null;
  const { rows } = await db.query<{
    id: string; instance_id: string; block_id: string; output: unknown; output_ref: string | null;
    output_size: number; attempt: number; created_at: Date;
  }>({
    name: "list_block_outputs",
    text: `SELECT o.id, o.instance_id, o.block_id, o.output, o.output_ref, o.output_size, o.attempt, o.created_at
             FROM block_outputs o
            WHERE o.tenant_id = $1 AND o.instance_id = $2
              AND NOT (COALESCE(o.output_ref, '') IN ('__in_progress__', '__retry__') AND EXISTS (
                    SELECT 1 FROM block_outputs r
                     WHERE r.tenant_id = o.tenant_id AND r.instance_id = o.instance_id AND r.block_id = o.block_id
                       AND COALESCE(r.output_ref, '') NOT IN ('__in_progress__', '__retry__')))
            ORDER BY o.created_at, o.id`,
    values: [tenantId, instanceId],
  });
  return rows.map((row) => ({
    id: row.id, instanceId: row.instance_id, blockId: row.block_id, output: row.output, outputRef: row.output_ref,
    outputSize: row.output_size, attempt: row.attempt, createdAt: row.created_at,
  }));
}

/** The sub-sequence children of an instance, oldest first; null when the tenant has no such parent. */
export async function listChildInstances(db: Queryable, tenantId: TenantId, parentId: string): Promise<InstanceRecord[] | null> {
  if (!(await instanceExists(db, tenantId, parentId))) return null;
  const { rows } = await db.query<InstanceRow>({
    name: "list_child_instances",
    text: `SELECT ${INSTANCE_COLUMNS} FROM task_instances WHERE tenant_id = $1 AND parent_instance_id = $2 ORDER BY created_at, id`,
    values: [tenantId, parentId],
  });
  return rows.map(toInstance);
}

/** A session's instances listed at most (wire-format O sets no bound; a response must have one). */
export const SESSION_INSTANCES_MAX = 10_000;

/** The instances attached to the tenant's session, by id (O: unordered), at most SESSION_INSTANCES_MAX. */
export async function listSessionInstances(db: Queryable, tenantId: TenantId, sessionId: string): Promise<InstanceRecord[]> {
  const { rows } = await db.query<InstanceRow>({
    name: "list_session_instances",
    text: `SELECT ${INSTANCE_COLUMNS} FROM task_instances WHERE tenant_id = $1 AND session_id = $2 ORDER BY id LIMIT $3`,
    values: [tenantId, sessionId, SESSION_INSTANCES_MAX],
  });
  return rows.map(toInstance);
}

/** The tenant of the instance with this id on this backend, for Storage.locate only. */
export async function instanceOwner(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ tenant_id: string }>({
    name: "instance_owner",
    text: "SELECT tenant_id FROM task_instances WHERE id = $1",
    values: [id],
  });
  return rows[0]?.tenant_id ?? null;
}
