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

/**
 * The groups from the failure index alone (an index-only scan: fingerprint and time, no row
 * read), then one row per group shown, its newest, for the sample: a tenant's 16,000 failures are
 * counted without reading 16,000 scattered rows.
 */
export const LIST_FAILURE_GROUPS = `
  WITH g AS (
    SELECT error_fingerprint AS fp, count(*)::int AS count, max(updated_at) AS latest_at
      FROM task_instances
     WHERE tenant_id = $1 AND state = 'failed'
     GROUP BY error_fingerprint
     ORDER BY count(*) DESC, max(updated_at) DESC
     LIMIT $2)
  SELECT g.fp AS error_fingerprint, g.count, g.latest_at, s.id AS sample_id, s.error_message AS sample_message, s.failed_block AS sample_block
    FROM g CROSS JOIN LATERAL (
      (SELECT id, error_message, failed_block FROM task_instances
        WHERE tenant_id = $1 AND state = 'failed' AND error_fingerprint = g.fp
        ORDER BY updated_at DESC, id DESC LIMIT 1)
      UNION ALL
      (SELECT id, error_message, failed_block FROM task_instances
        WHERE tenant_id = $1 AND state = 'failed' AND g.fp IS NULL AND error_fingerprint IS NULL
        ORDER BY updated_at DESC, id DESC LIMIT 1)) s
   ORDER BY g.count DESC, g.latest_at DESC`;

export async function listFailureGroups(db: Queryable, tenantId: TenantId, limit: number): Promise<FailureGroup[]> {
  const { rows } = await db.query<{
    error_fingerprint: string | null; count: number; latest_at: Date; sample_id: string; sample_message: string | null; sample_block: string | null;
  }>({
    name: "list_failure_groups",
    text: LIST_FAILURE_GROUPS,
    values: [tenantId, limit],
  });
  return rows.map((r) => ({
    fingerprint: r.error_fingerprint, count: r.count, latestAt: r.latest_at,
    sampleInstanceId: r.sample_id, sampleMessage: r.sample_message, sampleBlock: r.sample_block,
  }));
}
