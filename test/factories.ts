// Small factories for control-plane rows, so tests state only what matters to them.
import { randomBytes, randomUUID } from "node:crypto";
import { startSession, type SessionIdentity } from "../server/auth/sessions.ts";
import { createTenant } from "../server/control/tenants.ts";
import { addMember, createUser, type Role } from "../server/control/users.ts";
import { commitProgress, insertWorkerTask } from "../engine/storage/execution.ts";
import { asTenantId } from "../engine/storage/index.ts";
import { insertTrigger as insertTriggerRow } from "../engine/storage/triggers.ts";
import type pg from "pg";
import type { TestDatabase } from "./db.ts";

export const PASSWORD = "correct horse battery";

export async function makeTenant(db: TestDatabase, slug = `t-${randomBytes(4).toString("hex")}`) {
  return createTenant(db.prisma, { slug, backendId: db.config.BULKHEAD_DEFAULT_BACKEND });
}

export async function makeUser(
  db: TestDatabase,
  options: { memberOf?: [tenantId: string, role: Role][]; isOperator?: boolean } = {},
) {
  const user = await createUser(db.prisma, {
    email: `u-${randomBytes(4).toString("hex")}@example.test`,
    password: PASSWORD,
    isOperator: options.isOperator,
  });
  for (const [tenantId, role] of options.memberOf ?? []) await addMember(db.prisma, { tenantId, email: user.email, role });
  return user;
}

/** `count` scheduled instances of one tenant, due at `dueAt` (spread by 1 ms each, in order). */
export async function insertDueInstances(db: TestDatabase, tenantId: string, count: number, dueAt = new Date(Date.now() - 60_000)) {
  await db.sql.query(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at)
     SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), 'scheduled', $2::timestamptz + i * interval '1 millisecond'
       FROM generate_series(1, $3) AS i`,
    [tenantId, dueAt, count],
  );
}

/** Stores a sequence of `blocks` for the tenant (definition as clients send it) and returns its id. */
export async function insertSequence(db: TestDatabase, tenantId: string, blocks: unknown[], name = `seq-${randomBytes(3).toString("hex")}`, version = 1) {
  const id = randomUUID();
  const definition = { id, tenant_id: tenantId, namespace: "default", name, version, created_at: new Date().toISOString(), blocks };
  await db.sql.query(
    "INSERT INTO sequences (id, tenant_id, namespace, name, version, definition, created_at) VALUES ($1, $2, 'default', $3, $4, $5, now())",
    [id, tenantId, name, version, JSON.stringify(definition)],
  );
  return id;
}

/** `count` instances of a sequence, due now; returns their ids. */
export async function insertInstancesOf(db: TestDatabase, tenantId: string, sequenceId: string, count = 1, context: unknown = { data: null, config: null }) {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, next_fire_at)
     SELECT gen_random_uuid(), $1, 'default', $2, 'scheduled', $4, now() FROM generate_series(1, $3)
     RETURNING id`,
    [tenantId, sequenceId, count, JSON.stringify(context)],
  );
  return rows.map((r) => r.id);
}

/**
 * An instance parked on a worker task the way the engine parks one: running under lease epoch 1,
 * the task inserted, then committed as `waiting` on it. `ageMs` moves the task's creation into
 * the past (for the reaper's timeouts).
 */
export async function parkOnWorkerTask(
  db: TestDatabase,
  tenantId: string,
  handlerName: string,
  options: { queue?: string; blockId?: string; attempt?: number; timeoutMs?: number; ageMs?: number; params?: unknown; context?: unknown } = {},
): Promise<{ instanceId: string; taskId: string }> {
  const blockId = options.blockId ?? "ext";
  const sequenceId = await insertSequence(db, tenantId, [{ type: "step", id: blockId, handler: handlerName }]);
  const [instanceId] = (await insertInstancesOf(db, tenantId, sequenceId)) as [string];
  await db.sql.query("UPDATE task_instances SET state = 'running', lease_epoch = 1 WHERE id = $1", [instanceId]);
  const fence = { instanceId, tenantId: asTenantId(tenantId), leaseEpoch: 1 };
  const taskId = await insertWorkerTask(db.sql, {
    ...fence, blockId, handlerName, queueName: options.queue ?? null, params: options.params ?? { n: 1 },
    context: options.context ?? { data: { a: 1 }, config: null }, attempt: options.attempt ?? 0, timeoutMs: options.timeoutMs ?? null,
  });
  if (!taskId || !(await commitProgress(db.sql, { ...fence, state: "waiting", cursor: null, waitingOn: [taskId] }))) {
    throw new Error("could not park the instance");
  }
  await db.sql.query("UPDATE worker_tasks SET created_at = created_at - $2 * interval '1 millisecond' WHERE id = $1", [taskId, options.ageMs ?? 0]);
  return { instanceId, taskId };
}

/** A live session of the user, as signing in makes one: what the HTTP handler is given. */
export async function sessionOf(db: TestDatabase, userId: string): Promise<SessionIdentity> {
  return { userId, sessionId: (await startSession(db.prisma, userId))! };
}

/** An `event` trigger of the tenant's, slug claimed across tenants as a create through the API claims it. */
export async function insertTrigger(db: TestDatabase, tenantId: string, slug: string, sequenceName: string, sequenceVersion: number | null = null) {
  await db.sql.query("INSERT INTO trigger_slugs (slug, tenant_id) VALUES ($1, $2)", [slug, tenantId]);
  await insertTriggerRow(db.sql, asTenantId(tenantId), {
    slug, namespace: "default", sequenceName, sequenceVersion, triggerType: "event", config: null, secret: null,
  });
}

/**
 * `count` instances in `state`, finished `daysAgo` days ago (not finished when not terminal),
 * each with one row in every table that belongs to an instance; returns their ids.
 */
export async function seedInstancesWithRows(pool: Pick<pg.Pool, "query">, tenantId: string, count: number, state: string, daysAgo: number): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `WITH made AS (
       INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, created_at, completed_at)
       SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), $3, CASE WHEN $3 = 'scheduled' THEN now() + interval '1 day' END,
              now() - make_interval(days => $4 + 1),
              CASE WHEN $3 IN ('completed', 'failed', 'cancelled') THEN now() - make_interval(days => $4) END
         FROM generate_series(1, $2)
       RETURNING id
     ), outputs AS (
       INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output) SELECT gen_random_uuid(), $1, id, 'b', '{}' FROM made
     ), signals_made AS (
       INSERT INTO signals (id, tenant_id, instance_id, signal_type) SELECT gen_random_uuid(), $1, id, 'pause' FROM made
     ), tasks AS (
       INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name)
       SELECT gen_random_uuid(), $1, id, 'b', 'h' FROM made RETURNING id
     ), attempts AS (
       INSERT INTO worker_task_attempts (tenant_id, task_id, event) SELECT $1, id, 'claimed' FROM tasks
     ), checkpoints AS (
       INSERT INTO instance_checkpoints (id, tenant_id, instance_id) SELECT gen_random_uuid(), $1, id FROM made
     ), logs AS (
       INSERT INTO instance_logs (tenant_id, instance_id, block_id, level, message) SELECT $1, id, 'b', 'info', 'hi' FROM made
     ), audit AS (
       INSERT INTO instance_audit_log (tenant_id, instance_id, event_type) SELECT $1, id, 'state_change' FROM made
     ), dedupe AS (
       INSERT INTO event_dedupe (tenant_id, scope, dedupe_key, child_instance_id)
       SELECT $1, 'tenant', 'k-' || id, id FROM made
       UNION ALL SELECT $1, 'parent:' || id, 'k', gen_random_uuid() FROM made
     )
     SELECT id FROM made`,
    [tenantId, count, state, daysAgo],
  );
  return rows.map((r) => r.id);
}
