// SQL for `task_instances` that the web side and the state changes share. Every statement is
// scoped by tenant_id but the backend-wide count for platform metrics.
import { notFound } from "../errors.ts";
import { INSTANCE_STATES, type InstanceState } from "../model.ts";
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

export { INSTANCE_STATES, type InstanceState };

/** The instance's row locked until the transaction ends, or not found (missing and foreign alike). */
export async function lockInstance(client: Queryable, tenantId: TenantId, instanceId: string) {
  const { rows } = await client.query<{ state: InstanceState; parent_instance_id: string | null }>({
    name: "lock_instance",
    text: "SELECT state, parent_instance_id FROM task_instances WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
    values: [tenantId, instanceId],
  });
  if (!rows[0]) throw notFound("instance");
  return rows[0];
}

/** Every instance on this backend by state, every state present (platform metrics, not a tenant's view). */
export async function countBackendInstancesByState(db: Queryable): Promise<Record<InstanceState, number>> {
  const { rows } = await db.query<{ state: InstanceState; count: number }>({
    name: "count_backend_instances_by_state",
    text: "SELECT state, count(*)::int AS count FROM task_instances GROUP BY state",
  });
  const counts = Object.fromEntries(INSTANCE_STATES.map((state) => [state, 0])) as Record<InstanceState, number>;
  for (const row of rows) if (row.state in counts) counts[row.state] = row.count;
  return counts;
}

export async function countInstancesByState(db: Queryable, tenantId: TenantId): Promise<Record<InstanceState, number>> {
  const { rows } = await db.query<{ state: InstanceState; count: number }>({
    name: "count_instances_by_state",
    text: "SELECT state, count(*)::int AS count FROM task_instances WHERE tenant_id = $1 GROUP BY state",
    values: [tenantId],
  });
  const counts = Object.fromEntries(INSTANCE_STATES.map((state) => [state, 0])) as Record<InstanceState, number>;
  for (const row of rows) counts[row.state] = row.count;
  return counts;
}
