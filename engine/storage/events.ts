// SQL of emit_event (D): a child instance in the caller's own tenant and namespace, optionally
// deduplicated. The dedupe row and the child are written in one transaction, so a crash can
// never leave a dedupe row pointing at a child that does not exist.
import { inputProblem } from "../sequence/input-schema.ts";
import { uuidv7, type TenantId } from "./ids.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";

export interface EmitEvent {
  tenantId: TenantId;
  parentId: string;
  /** The sequence to spawn: by name, or through one of the tenant's trigger slugs. */
  target: { sequenceName: string } | { triggerSlug: string };
  data: unknown;
  metadata: unknown;
  /** `tenant` or `parent:<instance id>`, with the key; absent: no deduplication. */
  dedupe?: { scope: string; key: string };
  /** The fan-out bounds; absent: none (tests of other things). */
  limits?: EventLimits;
}

/** The resource ledger's event fan-out row. */
export interface EventLimits {
  /** Children one instance may emit in its life. */
  perParent: number;
  /** Children a tenant's instances may emit per clock minute, together. */
  perTenantPerMinute: number;
}

export type EmitResult =
  | { instanceId: string; sequenceName: string; deduped: boolean }
  /** Over a fan-out bound: nothing was written. `retryAt` is when the tenant's minute ends (per tenant), absent per parent. */
  | { overLimit: "per_parent" | "per_tenant_per_minute"; retryAt?: Date }
  /** The data does not match the sequence's input_schema: nothing was written. */
  | { inputProblem: string }
  | null;

class OverLimit extends Error {
  constructor(readonly result: Extract<EmitResult, { overLimit: string }>) {
    super(result.overLimit);
  }
}

// Counted once the child is known to be new (a deduplicated emit takes nothing). The tenant's
// minute row is taken before the parent's row, always in that order; holding the tenant's row
// until commit serializes only that tenant's emits.
const COUNT_TENANT_MINUTE = {
  name: "emit_count_tenant_minute",
  text: `INSERT INTO event_fan_out_minutes AS m (tenant_id, minute, emitted) VALUES ($1, date_trunc('minute', now()), 1)
         ON CONFLICT (tenant_id, minute) DO UPDATE SET emitted = m.emitted + 1 WHERE m.emitted < $2
         RETURNING date_trunc('minute', now()) + interval '1 minute' AS minute_ends`,
};
const COUNT_PARENT = {
  name: "emit_count_parent",
  text: `UPDATE task_instances SET events_emitted = events_emitted + 1
          WHERE tenant_id = $1 AND id = $2 AND events_emitted < $3 RETURNING events_emitted`,
};
const MINUTE_ENDS = "SELECT date_trunc('minute', now()) + interval '1 minute' AS minute_ends";

// The newest sequence version that is not deprecated, in the parent's namespace; through a
// trigger (enabled, of the parent's namespace), the one it pins when it pins one.
const FIND_BY_NAME = {
  name: "emit_find_sequence",
  text: `SELECT s.id, s.name, s.definition->'input_schema' AS input_schema FROM sequences s
           JOIN task_instances p ON p.id = $2 AND p.tenant_id = $1 AND s.namespace = p.namespace
          WHERE s.tenant_id = $1 AND s.name = $3 AND NOT s.deprecated
          ORDER BY s.version DESC LIMIT 1`,
};
const FIND_BY_TRIGGER = {
  name: "emit_find_trigger_sequence",
  text: `SELECT s.id, s.name, s.definition->'input_schema' AS input_schema FROM triggers t
           JOIN task_instances p ON p.id = $2 AND p.tenant_id = $1
           JOIN sequences s ON s.tenant_id = $1 AND s.namespace = p.namespace AND s.name = t.sequence_name
          WHERE t.tenant_id = $1 AND t.slug = $3 AND t.enabled AND t.namespace = p.namespace
            AND (CASE WHEN t.sequence_version IS NULL THEN NOT s.deprecated ELSE s.version = t.sequence_version END)
          ORDER BY s.version DESC LIMIT 1`,
};

/** The child's id (new, or the one an earlier emit with the same dedupe key made); null when no such sequence. */
export async function emitEvent(db: Connectable, event: EmitEvent, beforeChild: () => void = () => {}): Promise<EmitResult> {
  // Over a bound the transaction rolls back, so a dedupe key taken on the way is not kept.
  return inTransaction(db, (client) => emitInTransaction(client, event, beforeChild)).catch((error: unknown) => {
    if (error instanceof OverLimit) return error.result;
    throw error;
  });
}

/** Takes one of the tenant's emits of this minute and one of the parent's; throws OverLimit past either. */
async function countEmit(client: Queryable, tenantId: TenantId, parentId: string, limits: EventLimits): Promise<void> {
  const { rows: minute } = await client.query<{ minute_ends: Date }>({ ...COUNT_TENANT_MINUTE, values: [tenantId, limits.perTenantPerMinute] });
  if (minute.length === 0) {
    const { rows } = await client.query<{ minute_ends: Date }>(MINUTE_ENDS);
    throw new OverLimit({ overLimit: "per_tenant_per_minute", retryAt: rows[0]!.minute_ends });
  }
  const { rows: parent } = await client.query({ ...COUNT_PARENT, values: [tenantId, parentId, limits.perParent] });
  if (parent.length === 0) throw new OverLimit({ overLimit: "per_parent" });
}

async function emitInTransaction(client: Queryable, event: EmitEvent, beforeChild: () => void): Promise<EmitResult> {
  const [find, name] = "triggerSlug" in event.target ? [FIND_BY_TRIGGER, event.target.triggerSlug] : [FIND_BY_NAME, event.target.sequenceName];
  const { rows: sequences } = await client.query<{ id: string; name: string; input_schema: unknown }>({
    ...find, values: [event.tenantId, event.parentId, name],
  });
  const sequence = sequences[0];
  if (!sequence) return null;
  // Before the dedupe row: an emit refused for its data must not take the key.
  const problem = inputProblem(sequence.input_schema, event.data);
  if (problem) return { inputProblem: problem };
  const sequenceId = sequence.id;
  const childId = uuidv7();
  if (event.dedupe) {
    // A concurrent emit with the same key waits here for the first to commit, then finds its child.
    const { rows: claimed } = await client.query<{ child_instance_id: string }>({
      name: "emit_dedupe",
      text: `INSERT INTO event_dedupe (tenant_id, scope, dedupe_key, child_instance_id) VALUES ($1, $2, $3, $4)
             ON CONFLICT (tenant_id, scope, dedupe_key) DO NOTHING RETURNING child_instance_id`,
      values: [event.tenantId, event.dedupe.scope, event.dedupe.key, childId],
    });
    if (claimed.length === 0) {
      // The earlier child's own sequence: a trigger may have been repointed since.
      const { rows } = await client.query<{ child_instance_id: string; name: string | null }>({
        name: "emit_deduped",
        text: `SELECT d.child_instance_id, s.name FROM event_dedupe d
                 LEFT JOIN task_instances c ON c.id = d.child_instance_id AND c.tenant_id = d.tenant_id
                 LEFT JOIN sequences s ON s.id = c.sequence_id AND s.tenant_id = d.tenant_id
                WHERE d.tenant_id = $1 AND d.scope = $2 AND d.dedupe_key = $3`,
        values: [event.tenantId, event.dedupe.scope, event.dedupe.key],
      });
      return { instanceId: rows[0]!.child_instance_id, sequenceName: rows[0]!.name ?? sequence.name, deduped: true };
    }
  }
  if (event.limits) await countEmit(client, event.tenantId, event.parentId, event.limits);
  beforeChild(); // tests inject a crash here
  await client.query({
    name: "emit_child",
    text: `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, priority, context, next_fire_at, timezone, metadata)
           SELECT $3, tenant_id, namespace, $4, 'scheduled', priority,
                  jsonb_build_object('data', $5::jsonb, 'config', NULL, 'audit', '[]'::jsonb, 'runtime', '{}'::jsonb),
                  now(), timezone, $6::jsonb
             FROM task_instances WHERE id = $2 AND tenant_id = $1`,
    values: [event.tenantId, event.parentId, childId, sequenceId, JSON.stringify(event.data ?? {}), JSON.stringify(event.metadata ?? null)],
  });
  return { instanceId: childId, sequenceName: sequence.name, deduped: false };
}

/** Deletes up to `limit` emit counts of minutes before `before`; returns how many. */
export async function pruneEventMinutes(db: Queryable, before: Date, limit = 10_000): Promise<number> {
  const { rowCount } = await db.query({
    name: "prune_event_minutes",
    text: "DELETE FROM event_fan_out_minutes WHERE ctid IN (SELECT ctid FROM event_fan_out_minutes WHERE minute < $1 LIMIT $2)",
    values: [before, limit],
  });
  return rowCount ?? 0;
}
