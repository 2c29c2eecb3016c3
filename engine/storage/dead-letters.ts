// The dead-letter queue (wire-format J): no store of its own, just the tenant's `failed`
// instances, most recently updated first. `cancelled` ones are never in it; a retry or a
// resume-from takes an instance out.
import type { TenantId } from "./ids.ts";
import { INSTANCE_COLUMNS, toInstance, type InstanceRecord } from "./instance-records.ts";
import type { Queryable } from "./transaction.ts";

export interface DeadLetterQuery {
  namespace?: string;
  sequenceId?: string;
  offset: number;
  limit: number;
}

/** A page of the tenant's failed instances, newest update first (ties by id, so pages never overlap). */
export async function listDeadLetters(db: Queryable, tenantId: TenantId, query: DeadLetterQuery): Promise<InstanceRecord[]> {
  const values: unknown[] = [tenantId];
  const param = (value: unknown) => `$${values.push(value)}`;
  // state = 'failed' is the dead_letters index's own predicate (migration dead_letter_index).
  const where = ["tenant_id = $1", "state = 'failed'"];
  if (query.namespace !== undefined) where.push(`namespace = ${param(query.namespace)}`);
  if (query.sequenceId !== undefined) where.push(`sequence_id = ${param(query.sequenceId)}::uuid`);
  const { rows } = await db.query<Parameters<typeof toInstance>[0]>(
    `SELECT ${INSTANCE_COLUMNS} FROM task_instances WHERE ${where.join(" AND ")}
      ORDER BY updated_at DESC, id DESC LIMIT ${param(query.limit)} OFFSET ${param(query.offset)}`,
    values,
  );
  return rows.map(toInstance);
}
