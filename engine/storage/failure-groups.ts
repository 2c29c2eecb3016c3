// The Failed view: a tenant's failed instances grouped by why they failed (the fingerprint the
// commit that failed them wrote: the handler and the message with ids and numbers replaced), the
// largest group first, each with its latest message and failing block. Read through the partial
// index of failed rows (migrations/…_failure_cause).
import type { TenantId } from "./ids.ts";
import type { Queryable } from "./transaction.ts";

export interface FailureGroup {
  /** null: instances that failed before causes were recorded, or without a step to blame. */
  fingerprint: string | null;
  count: number;
  latestAt: Date;
  /** The newest instance of the group, its message and failing block. */
  sampleInstanceId: string;
  sampleMessage: string | null;
  sampleBlock: string | null;
}

export async function listFailureGroups(db: Queryable, tenantId: TenantId, limit: number): Promise<FailureGroup[]> {
  const { rows } = await db.query<{
    error_fingerprint: string | null; count: number; latest_at: Date; sample_id: string; sample_message: string | null; sample_block: string | null;
  }>({
    name: "list_failure_groups",
    text: `SELECT error_fingerprint, count(*)::int AS count, max(updated_at) AS latest_at,
                  (array_agg(id ORDER BY updated_at DESC, id DESC))[1] AS sample_id,
                  (array_agg(error_message ORDER BY updated_at DESC, id DESC))[1] AS sample_message,
                  (array_agg(failed_block ORDER BY updated_at DESC, id DESC))[1] AS sample_block
             FROM task_instances
            WHERE tenant_id = $1 AND state = 'failed'
            GROUP BY error_fingerprint
            ORDER BY count(*) DESC, max(updated_at) DESC
            LIMIT $2`,
    values: [tenantId, limit],
  });
  return rows.map((r) => ({
    fingerprint: r.error_fingerprint, count: r.count, latestAt: r.latest_at,
    sampleInstanceId: r.sample_id, sampleMessage: r.sample_message, sampleBlock: r.sample_block,
  }));
}
