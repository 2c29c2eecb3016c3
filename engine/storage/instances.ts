// SQL for `task_instances` that the web side needs. The engine's claim path comes with the
// scheduler. Every statement is scoped by tenant_id.
import type pg from "pg";

type Queryable = Pick<pg.Pool, "query">;

export const INSTANCE_STATES = ["scheduled", "running", "waiting", "paused", "completed", "failed", "cancelled"] as const;
export type InstanceState = (typeof INSTANCE_STATES)[number];

/** Instance counts by state, every state present (zero when none). */
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

export async function countInstancesByState(db: Queryable, tenantId: string): Promise<Record<InstanceState, number>> {
  const { rows } = await db.query<{ state: InstanceState; count: number }>({
    name: "count_instances_by_state",
    text: "SELECT state, count(*)::int AS count FROM task_instances WHERE tenant_id = $1 GROUP BY state",
    values: [tenantId],
  });
  const counts = Object.fromEntries(INSTANCE_STATES.map((state) => [state, 0])) as Record<InstanceState, number>;
  for (const row of rows) counts[row.state] = row.count;
  return counts;
}
