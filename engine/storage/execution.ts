// SQL of the step pipeline. Every write names the lease epoch its claim returned and changes
// nothing when the epoch has moved on (the instance was reaped and claimed by someone else), so
// a process that lost its lease can never overwrite newer state. Each write is one statement:
// atomic without a transaction, one round trip.
import type pg from "pg";

type Queryable = Pick<pg.Pool, "query">;

export interface ClaimedRow {
  id: string;
  tenantId: string;
  sequenceId: string;
  context: unknown;
  cursor: unknown;
  timezone: string;
  /** The stored sequence definition (JSON), or null when the sequence is gone. */
  definition: unknown;
}

/** The claimed instances with their sequence definitions, in one query per claim batch. */
export async function loadClaimed(db: Queryable, ids: string[]): Promise<ClaimedRow[]> {
  const { rows } = await db.query<{
    id: string; tenant_id: string; sequence_id: string; context: unknown; cursor: unknown; timezone: string; definition: unknown;
  }>({
    name: "load_claimed",
    // The sequence must belong to the instance's own tenant: a forged sequence_id can never
    // pull another tenant's definition into this instance.
    text: `SELECT i.id, i.tenant_id, i.sequence_id, i.context, i.cursor, i.timezone, s.definition
             FROM task_instances i
             LEFT JOIN sequences s ON s.id = i.sequence_id AND s.tenant_id = i.tenant_id
            WHERE i.id = ANY($1::uuid[])`,
    values: [ids],
  });
  return rows.map((r) => ({
    id: r.id, tenantId: r.tenant_id, sequenceId: r.sequence_id, context: r.context,
    cursor: r.cursor, timezone: r.timezone, definition: r.definition,
  }));
}

export interface OutputRow {
  blockId: string;
  output: unknown;
  /** e.g. "__error__" for a failed step's marker row. */
  outputRef?: string | null;
  attempt: number;
}

export type InstanceState = "scheduled" | "running" | "waiting" | "completed" | "failed" | "cancelled";

export interface Progress {
  instanceId: string;
  tenantId: string;
  leaseEpoch: number;
  state: InstanceState;
  cursor: unknown;
  /** Required when the new state is `scheduled`. */
  nextFireAt?: Date | null;
  deferReason?: string | null;
  outputs?: OutputRow[];
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/**
 * Records a step's outputs and the instance's new state, cursor and due time in one statement,
 * fenced by the lease epoch. Returns false (and writes nothing) when the lease was lost.
 * Leaving `running` gives up the lease.
 */
export async function commitProgress(db: Queryable, p: Progress): Promise<boolean> {
  const outputs = p.outputs ?? [];
  const { rows } = await db.query<{ n: number }>({
    name: "commit_progress",
    text: `WITH updated AS (
             UPDATE task_instances
                SET state = $4, cursor = $5, next_fire_at = $6, defer_reason = $7, updated_at = now(),
                    -- a finished instance keeps no lease
                    lease_owner = CASE WHEN $4 = 'running' THEN lease_owner END,
                    lease_expires_at = CASE WHEN $4 = 'running' THEN lease_expires_at END,
                    completed_at = CASE WHEN $8 THEN now() END
              WHERE id = $1 AND tenant_id = $2 AND lease_epoch = $3 AND state = 'running'
              RETURNING id, tenant_id
           ), inserted AS (
             INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output, output_ref, output_size, attempt)
             SELECT gen_random_uuid(), updated.tenant_id, updated.id, o.block_id, o.output, o.output_ref, octet_length(o.output::text), o.attempt
               FROM updated
              CROSS JOIN unnest($9::text[], $10::jsonb[], $11::text[], $12::int[]) AS o(block_id, output, output_ref, attempt)
             RETURNING 1
           )
           SELECT count(*)::int AS n FROM updated`,
    values: [
      p.instanceId, p.tenantId, p.leaseEpoch, p.state, JSON.stringify(p.cursor ?? null), p.nextFireAt ?? null,
      p.deferReason ?? null, TERMINAL.has(p.state),
      outputs.map((o) => o.blockId), outputs.map((o) => JSON.stringify(o.output ?? null)),
      outputs.map((o) => o.outputRef ?? null), outputs.map((o) => o.attempt),
    ],
  });
  return rows[0]!.n === 1;
}

export interface NewWorkerTask {
  instanceId: string;
  tenantId: string;
  leaseEpoch: number;
  cursor: unknown;
  blockId: string;
  handlerName: string;
  queueName: string | null;
  params: unknown;
  context: unknown;
  attempt: number;
  timeoutMs: number | null;
}

/**
 * Hands a step to an external worker: the pending task and the instance's move to `waiting`
 * in one fenced statement, so a lost lease creates no task.
 */
export async function createWorkerTaskAndWait(db: Queryable, t: NewWorkerTask): Promise<boolean> {
  const { rows } = await db.query<{ n: number }>({
    name: "create_worker_task_and_wait",
    text: `WITH updated AS (
             UPDATE task_instances
                SET state = 'waiting', cursor = $4, next_fire_at = NULL, defer_reason = NULL,
                    lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
              WHERE id = $1 AND tenant_id = $2 AND lease_epoch = $3 AND state = 'running'
              RETURNING id, tenant_id
           ), inserted AS (
             INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, queue_name, params, context, attempt, timeout_ms)
             SELECT gen_random_uuid(), tenant_id, id, $5, $6, $7, $8, $9, $10, $11 FROM updated
             RETURNING 1
           )
           SELECT count(*)::int AS n FROM updated`,
    values: [
      t.instanceId, t.tenantId, t.leaseEpoch, JSON.stringify(t.cursor), t.blockId, t.handlerName, t.queueName,
      JSON.stringify(t.params ?? null), JSON.stringify(t.context ?? null), t.attempt, t.timeoutMs,
    ],
  });
  return rows[0]!.n === 1;
}
