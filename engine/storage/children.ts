// SQL of sub_sequence blocks (wire-format C.7): finding the child's sequence, creating the child
// under the parent's lease, and reading how a child ended. Every statement is tenant-scoped: a
// child lives in its parent's tenant and namespace, always.
import { uuidv7, type TenantId } from "./ids.ts";
import type { Queryable } from "./transaction.ts";

export const MAX_SUB_SEQUENCE_DEPTH = 16;

/** The sequence named in the caller's tenant and namespace: that version, or the latest non-deprecated. */
export async function findSubSequence(
  db: Queryable, tenantId: TenantId, instanceId: string, name: string, version: number | undefined,
): Promise<{ id: string; inputSchema: unknown } | null> {
  const { rows } = await db.query<{ id: string; input_schema: unknown }>({
    name: "find_sub_sequence",
    text: `SELECT s.id, s.definition->'input_schema' AS input_schema FROM sequences s
             JOIN task_instances p ON p.id = $2 AND p.tenant_id = $1 AND s.namespace = p.namespace
            WHERE s.tenant_id = $1 AND s.name = $3
              AND (CASE WHEN $4::int IS NULL THEN NOT s.deprecated ELSE s.version = $4 END)
            ORDER BY s.version DESC LIMIT 1`,
    values: [tenantId, instanceId, name, version ?? null],
  });
  return rows[0] ? { id: rows[0].id, inputSchema: rows[0].input_schema } : null;
}

export type ChildCreation = { childId: string } | { error: "depth" | "lease_lost" };

/**
 * Creates the child instance, scheduled and due now, with the parent's namespace, priority, session,
 * timezone and dry-run flag, `context.data = input`, and metadata naming the parent block and the
 * depth. Fenced by the parent's lease; refused beyond MAX_SUB_SEQUENCE_DEPTH.
 */
export async function createChildInstance(
  db: Queryable,
  parent: { instanceId: string; tenantId: TenantId; leaseEpoch: number },
  child: { sequenceId: string; blockId: string; input: unknown },
): Promise<ChildCreation> {
  const id = uuidv7();
  const { rows } = await db.query<{ id: string | null; depth: number }>({
    name: "create_child_instance",
    text: `WITH parent AS (
             SELECT *, COALESCE((metadata ->> '_sub_sequence_depth')::int, 0) AS depth FROM task_instances
              WHERE id = $1 AND tenant_id = $2 AND lease_epoch = $3 AND state = 'running'
           ), created AS (
             INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, priority, context, next_fire_at,
                                         timezone, metadata, parent_instance_id, dry_run, session_id)
             SELECT $4, tenant_id, namespace, $5, 'scheduled', priority,
                    jsonb_build_object('data', $6::jsonb, 'config', NULL, 'audit', '[]'::jsonb, 'runtime', '{}'::jsonb),
                    now(), timezone, jsonb_build_object('_parent_block_id', $7::text, '_sub_sequence_depth', depth + 1),
                    id, dry_run, session_id
               FROM parent WHERE depth < $8
             RETURNING id
           )
           SELECT (SELECT id FROM created) AS id, (SELECT depth FROM parent) AS depth`,
    values: [parent.instanceId, parent.tenantId, parent.leaseEpoch, id, child.sequenceId, JSON.stringify(child.input ?? null), child.blockId, MAX_SUB_SEQUENCE_DEPTH],
  });
  const row = rows[0]!;
  if (row.id) return { childId: row.id };
  return { error: row.depth === null ? "lease_lost" : "depth" };
}

export interface ChildOutcome {
  state: string;
  /** The child's output rows as BlockOutput objects (C.7), when it completed. */
  outputs: unknown[];
}

/** How a child ended, with its outputs; null while it runs (or when it is not this parent's). */
export async function childOutcome(db: Queryable, tenantId: TenantId, parentId: string, childId: string): Promise<ChildOutcome | null> {
  const { rows } = await db.query<{ state: string; outputs: unknown[] | null }>({
    name: "child_outcome",
    text: `SELECT c.state,
                  (SELECT jsonb_agg(jsonb_build_object(
                            'id', o.id, 'instance_id', o.instance_id, 'block_id', o.block_id, 'output', o.output,
                            'output_ref', o.output_ref, 'output_size', o.output_size, 'attempt', o.attempt,
                            'created_at', to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                            ORDER BY o.created_at, o.id)
                     FROM block_outputs o WHERE o.tenant_id = c.tenant_id AND o.instance_id = c.id) AS outputs
             FROM task_instances c
            WHERE c.id = $3 AND c.tenant_id = $1 AND c.parent_instance_id = $2
              AND c.state IN ('completed', 'failed', 'cancelled')`,
    values: [tenantId, parentId, childId],
  });
  const row = rows[0];
  return row ? { state: row.state, outputs: row.outputs ?? [] } : null;
}
