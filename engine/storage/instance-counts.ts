// A tenant's instances by state, from tenant_instance_counts (migrations/20261207120000_tenant_instance_counts):
// rows of deltas that triggers on task_instances append with every insert, delete and change of
// state, merged by the engine into one row per tenant and state. Reading sums a tenant's rows
// (its merged ones and the few deltas since), never its instances.
import { INSTANCE_STATES, type InstanceState } from "./instances.ts";
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

/** Deltas one merge folds at most (tenant and state pairs), so a merge after a long stop stays short. */
export const MERGE_BATCH = 5_000;

export async function readInstanceCounts(db: Queryable, tenantId: TenantId): Promise<Record<InstanceState, number>> {
  const { rows } = await db.query<{ state: InstanceState; count: number }>({
    name: "read_instance_counts",
    text: "SELECT state, sum(n)::int AS count FROM tenant_instance_counts WHERE tenant_id = $1 GROUP BY state",
    values: [tenantId],
  });
  const counts = Object.fromEntries(INSTANCE_STATES.map((state) => [state, 0])) as Record<InstanceState, number>;
  for (const row of rows) if (row.state in counts) counts[row.state] = row.count;
  return counts;
}

/**
 * Folds the deltas of up to MERGE_BATCH (tenant, state) pairs into one merged row each, in one
 * statement; returns how many pairs. Any number of engines may run it at once: a row another
 * merge has deleted is skipped, and each merge writes back only the sum of the rows it deleted,
 * while deltas committed meanwhile stay for the next one.
 */
export async function mergeInstanceCounts(db: Queryable, limit = MERGE_BATCH): Promise<number> {
  const { rowCount } = await db.query({
    name: "merge_instance_counts",
    text: `WITH pending AS (SELECT DISTINCT tenant_id, state FROM tenant_instance_counts WHERE NOT merged LIMIT $1),
                gone AS (DELETE FROM tenant_instance_counts c USING pending p
                          WHERE c.tenant_id = p.tenant_id AND c.state = p.state
                          RETURNING c.tenant_id, c.state, c.n)
           INSERT INTO tenant_instance_counts (tenant_id, state, n, merged)
           SELECT tenant_id, state, sum(n), true FROM gone GROUP BY tenant_id, state HAVING sum(n) <> 0`,
    values: [limit],
  });
  return rowCount ?? 0;
}
