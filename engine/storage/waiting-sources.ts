// SQL for the approvals inbox (wire-format R, and the web app's Approvals page): a tenant's
// `waiting` instances, most recently updated first, each with what describeInstance reads to find
// its human-review gates. A gate is found in the cursor, not in SQL, so this pages over instances.
import type { TenantId } from "./ids.ts";
import type { InstanceState } from "./instances.ts";
import type { Queryable } from "./transaction.ts";

/** A page position: the last instance of the page before, in (updated_at, id) descending order. */
export interface WaitingKey {
  updatedAt: Date;
  id: string;
}

export interface WaitingQuery {
  namespace: string | null;
  /** Only instances of this sequence version. */
  sequenceId?: string | null;
  /** Keyset paging (the web app): instances after this one. */
  after?: WaitingKey | null;
  /** Offset paging (REST R). */
  offset: number;
  limit: number;
}

export interface WaitingTreeSource {
  instance: { id: string; state: InstanceState; createdAt: Date; updatedAt: Date };
  namespace: string;
  sequenceId: string;
  sequenceName: string | null;
  metadata: unknown;
  cursor: unknown;
  definition: unknown;
}

/**
 * The statement: only the predicates asked for, so each combination gets a plan of its own and
 * the keyset bound is an index condition of task_instances_waiting_idx (a `$n IS NULL OR …` form
 * would make it a filter, and a deep page would read every row before it). Exported for the test
 * that checks the plan.
 */
export function waitingTreeSourcesStatement(tenantId: TenantId, query: WaitingQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [tenantId];
  const param = (value: unknown) => `$${values.push(value)}`;
  const where = ["i.tenant_id = $1", "i.state = 'waiting'"];
  if (query.namespace !== null) where.push(`i.namespace = ${param(query.namespace)}`);
  if (query.sequenceId) where.push(`i.sequence_id = ${param(query.sequenceId)}::uuid`);
  if (query.after) where.push(`(i.updated_at, i.id) < (${param(query.after.updatedAt)}::timestamptz, ${param(query.after.id)}::uuid)`);
  const text = `SELECT i.id, i.namespace, i.sequence_id, s.name AS sequence_name, i.metadata, i.state, i.created_at, i.updated_at, i.cursor, s.definition
                  FROM task_instances i
                  LEFT JOIN sequences s ON s.id = i.sequence_id AND s.tenant_id = i.tenant_id
                 WHERE ${where.join(" AND ")}
                 ORDER BY i.updated_at DESC, i.id DESC
                OFFSET ${param(query.offset)} LIMIT ${param(query.limit)}`;
  return { text, values };
}

export async function listWaitingTreeSources(db: Queryable, tenantId: TenantId, query: WaitingQuery): Promise<WaitingTreeSource[]> {
  const { text, values } = waitingTreeSourcesStatement(tenantId, query);
  const { rows } = await db.query<{
    id: string; namespace: string; sequence_id: string; sequence_name: string | null; metadata: unknown; state: InstanceState;
    created_at: Date; updated_at: Date; cursor: unknown; definition: unknown;
  }>(text, values);
  return rows.map((row) => ({
    instance: { id: row.id, state: row.state, createdAt: row.created_at, updatedAt: row.updated_at },
    namespace: row.namespace, sequenceId: row.sequence_id, sequenceName: row.sequence_name, metadata: row.metadata ?? null,
    cursor: row.cursor ?? null, definition: row.definition ?? null,
  }));
}
