// SQL of emit_event (D): a child instance in the caller's own tenant and namespace, optionally
// deduplicated. The dedupe row and the child are written in one transaction, so a crash can
// never leave a dedupe row pointing at a child that does not exist.
import { inputProblem } from "../sequence/input-schema.ts";
import { uuidv7, type TenantId } from "./ids.ts";
import { inTransaction, type Connectable } from "./transaction.ts";

export interface EmitEvent {
  tenantId: TenantId;
  parentId: string;
  /** The sequence to spawn: by name, or through one of the tenant's trigger slugs. */
  target: { sequenceName: string } | { triggerSlug: string };
  data: unknown;
  metadata: unknown;
  /** `tenant` or `parent:<instance id>`, with the key; absent: no deduplication. */
  dedupe?: { scope: string; key: string };
}

export type EmitResult =
  | { instanceId: string; sequenceName: string; deduped: boolean }
  /** The data does not match the sequence's input_schema: nothing was written. */
  | { inputProblem: string }
  | null;

// The newest sequence version that is not deprecated, in the parent's namespace; through a
// trigger, the one it pins when it pins one.
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
          WHERE t.tenant_id = $1 AND t.slug = $3 AND NOT s.deprecated
            AND (t.sequence_version IS NULL OR s.version = t.sequence_version)
          ORDER BY s.version DESC LIMIT 1`,
};

/** The child's id (new, or the one an earlier emit with the same dedupe key made); null when no such sequence. */
export async function emitEvent(db: Connectable, event: EmitEvent, beforeChild: () => void = () => {}): Promise<EmitResult> {
  return inTransaction(db, async (client) => {
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
  });
}
