// SQL for `resource_pools` and `pool_resources` (wire-format U). Every statement names the
// tenant, so another tenant's pool or resource is simply not there. A resource exists only with
// its pool: adding one holds the pool row (FOR SHARE) and deleting a pool locks it first, so a
// resource added meanwhile is either refused or deleted with it.
import { uuidv7, type TenantId } from "./ids.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";

export const POOL_STRATEGIES = ["round_robin", "weighted", "random"] as const;
export type PoolStrategy = (typeof POOL_STRATEGIES)[number];

export interface PoolRecord {
  id: string;
  tenantId: TenantId;
  name: string;
  strategy: PoolStrategy;
  roundRobinIndex: number;
  createdAt: Date;
  updatedAt: Date;
}

/** Dates are calendar days, `YYYY-MM-DD`, as U prints them. */
export interface PoolResourceRecord {
  id: string;
  poolId: string;
  resourceKey: string;
  name: string;
  weight: number;
  enabled: boolean;
  dailyCap: number;
  dailyUsage: number;
  dailyUsageDate: string | null;
  warmupStart: string | null;
  warmupDays: number;
  warmupStartCap: number;
  createdAt: Date;
}

export interface NewPoolResource {
  resourceKey: string;
  name: string;
  weight: number;
  dailyCap: number;
  warmupStart: string | null;
  warmupDays: number;
  warmupStartCap: number;
}

/** A PUT's fields: absent ones stay as they are. */
export type PoolResourceChange = Partial<Omit<NewPoolResource, "resourceKey">> & { enabled?: boolean };

/** What a PUT or DELETE of a resource found: the pool is looked for first, as U's 404s say. */
export type ResourceLookup<T> = { found: T } | { missing: "pool" | "resource" };

interface PoolRow {
  id: string;
  tenant_id: string;
  name: string;
  strategy: PoolStrategy;
  round_robin_index: number;
  created_at: Date;
  updated_at: Date;
}

interface ResourceRow {
  id: string;
  pool_id: string;
  resource_key: string;
  name: string;
  weight: number;
  enabled: boolean;
  daily_cap: number;
  daily_usage: number;
  daily_usage_date: string | null;
  warmup_start: string | null;
  warmup_days: number;
  warmup_start_cap: number;
  created_at: Date;
}

const POOL_COLUMNS = "id, tenant_id, name, strategy, round_robin_index, created_at, updated_at";
// DATE as text: pg would parse it into a Date at local midnight, and U's days are plain days.
const RESOURCE_COLUMNS = `id, pool_id, resource_key, name, weight, enabled, daily_cap, daily_usage,
  to_char(daily_usage_date, 'YYYY-MM-DD') AS daily_usage_date, to_char(warmup_start, 'YYYY-MM-DD') AS warmup_start,
  warmup_days, warmup_start_cap, created_at`;

const toPool = (row: PoolRow): PoolRecord => ({
  id: row.id,
  tenantId: row.tenant_id as TenantId,
  name: row.name,
  strategy: row.strategy,
  roundRobinIndex: row.round_robin_index,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toResource = (row: ResourceRow): PoolResourceRecord => ({
  id: row.id,
  poolId: row.pool_id,
  resourceKey: row.resource_key,
  name: row.name,
  weight: row.weight,
  enabled: row.enabled,
  dailyCap: row.daily_cap,
  dailyUsage: row.daily_usage,
  dailyUsageDate: row.daily_usage_date,
  warmupStart: row.warmup_start,
  warmupDays: row.warmup_days,
  warmupStartCap: row.warmup_start_cap,
  createdAt: row.created_at,
});

export async function createPool(db: Queryable, tenantId: TenantId, pool: { name: string; strategy: PoolStrategy }): Promise<PoolRecord> {
  const { rows } = await db.query<PoolRow>({
    name: "create_pool",
    text: `INSERT INTO resource_pools (tenant_id, id, name, strategy) VALUES ($1, $2, $3, $4) RETURNING ${POOL_COLUMNS}`,
    values: [tenantId, uuidv7(), pool.name, pool.strategy],
  });
  return toPool(rows[0]!);
}

/** By name, as Orch8 lists them (id breaks ties). */
export async function listPools(db: Queryable, tenantId: TenantId): Promise<PoolRecord[]> {
  const { rows } = await db.query<PoolRow>({
    name: "list_pools",
    text: `SELECT ${POOL_COLUMNS} FROM resource_pools WHERE tenant_id = $1 ORDER BY name, id`,
    values: [tenantId],
  });
  return rows.map(toPool);
}

export async function getPool(db: Queryable, tenantId: TenantId, id: string): Promise<PoolRecord | null> {
  const { rows } = await db.query<PoolRow>({
    name: "get_pool",
    text: `SELECT ${POOL_COLUMNS} FROM resource_pools WHERE tenant_id = $1 AND id = $2`,
    values: [tenantId, id],
  });
  return rows[0] ? toPool(rows[0]) : null;
}

/** Deletes the pool and its resources; false when the tenant has no such pool. */
export function deletePool(db: Connectable, tenantId: TenantId, id: string): Promise<boolean> {
  return inTransaction(db, async (client) => {
    // Locked first: an add holding the pool (FOR SHARE) commits before the resources are deleted.
    const locked = await client.query({
      name: "lock_pool",
      text: "SELECT 1 FROM resource_pools WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
      values: [tenantId, id],
    });
    if (locked.rowCount === 0) return false;
    await client.query({ name: "delete_pool_resources", text: "DELETE FROM pool_resources WHERE tenant_id = $1 AND pool_id = $2", values: [tenantId, id] });
    await client.query({ name: "delete_pool", text: "DELETE FROM resource_pools WHERE tenant_id = $1 AND id = $2", values: [tenantId, id] });
    return true;
  });
}

async function poolExists(db: Queryable, tenantId: TenantId, id: string): Promise<boolean> {
  const { rowCount } = await db.query({ name: "pool_exists", text: "SELECT 1 FROM resource_pools WHERE tenant_id = $1 AND id = $2", values: [tenantId, id] });
  return (rowCount ?? 0) > 0;
}

/** The pool's resources by name (id breaks ties); null when the tenant has no such pool. */
export async function listPoolResources(db: Queryable, tenantId: TenantId, poolId: string): Promise<PoolResourceRecord[] | null> {
  if (!(await poolExists(db, tenantId, poolId))) return null;
  const { rows } = await db.query<ResourceRow>({
    name: "list_pool_resources",
    text: `SELECT ${RESOURCE_COLUMNS} FROM pool_resources WHERE tenant_id = $1 AND pool_id = $2 ORDER BY name, id`,
    values: [tenantId, poolId],
  });
  return rows.map(toResource);
}

/** The new resource (enabled, no usage yet); null when the tenant has no such pool. Keys need not be unique. */
export async function addPoolResource(db: Queryable, tenantId: TenantId, poolId: string, resource: NewPoolResource): Promise<PoolResourceRecord | null> {
  const { rows } = await db.query<ResourceRow>({
    name: "add_pool_resource",
    text: `WITH pool AS (SELECT id FROM resource_pools WHERE tenant_id = $1 AND id = $2 FOR SHARE)
           INSERT INTO pool_resources (tenant_id, id, pool_id, resource_key, name, weight, daily_cap, warmup_start, warmup_days, warmup_start_cap)
           SELECT $1, $3, pool.id, $4, $5, $6, $7, $8::date, $9, $10 FROM pool
           RETURNING ${RESOURCE_COLUMNS}`,
    values: [
      tenantId, poolId, uuidv7(), resource.resourceKey, resource.name, resource.weight, resource.dailyCap, resource.warmupStart,
      resource.warmupDays, resource.warmupStartCap,
    ],
  });
  return rows[0] ? toResource(rows[0]) : null;
}

/** Why nothing matched (pool, resource) and (tenant, id): the pool is missing, or the resource is not in it. */
async function missingOf(db: Queryable, tenantId: TenantId, poolId: string): Promise<{ missing: "pool" | "resource" }> {
  return { missing: (await poolExists(db, tenantId, poolId)) ? "resource" : "pool" };
}

/** Applies the change to the pool's resource; which is missing when there is none. */
export async function updatePoolResource(
  db: Queryable, tenantId: TenantId, poolId: string, id: string, change: PoolResourceChange,
): Promise<ResourceLookup<PoolResourceRecord>> {
  const { rows } = await db.query<ResourceRow>({
    name: "update_pool_resource",
    text: `UPDATE pool_resources SET
             name = coalesce($4, name), weight = coalesce($5, weight), enabled = coalesce($6, enabled),
             daily_cap = coalesce($7, daily_cap), warmup_start = coalesce($8::date, warmup_start),
             warmup_days = coalesce($9, warmup_days), warmup_start_cap = coalesce($10, warmup_start_cap)
           WHERE tenant_id = $1 AND pool_id = $2 AND id = $3
           RETURNING ${RESOURCE_COLUMNS}`,
    values: [
      tenantId, poolId, id, change.name ?? null, change.weight ?? null, change.enabled ?? null, change.dailyCap ?? null,
      change.warmupStart ?? null, change.warmupDays ?? null, change.warmupStartCap ?? null,
    ],
  });
  return rows[0] ? { found: toResource(rows[0]) } : missingOf(db, tenantId, poolId);
}

/**
 * Deletes the pool's resource. U: an id that is not (or no longer) there is deleted already
 * (found: false), but one in another of the tenant's pools is a missing resource.
 */
export async function deletePoolResource(db: Queryable, tenantId: TenantId, poolId: string, id: string): Promise<ResourceLookup<boolean>> {
  const { rowCount } = await db.query({
    name: "delete_pool_resource",
    text: "DELETE FROM pool_resources WHERE tenant_id = $1 AND pool_id = $2 AND id = $3",
    values: [tenantId, poolId, id],
  });
  if ((rowCount ?? 0) > 0) return { found: true };
  const { rows } = await db.query<{ pool: boolean; elsewhere: boolean }>({
    name: "pool_resource_elsewhere",
    text: `SELECT EXISTS (SELECT 1 FROM resource_pools WHERE tenant_id = $1 AND id = $2) AS pool,
                  EXISTS (SELECT 1 FROM pool_resources WHERE tenant_id = $1 AND id = $3) AS elsewhere`,
    values: [tenantId, poolId, id],
  });
  const { pool, elsewhere } = rows[0]!;
  if (!pool) return { missing: "pool" };
  return elsewhere ? { missing: "resource" } : { found: false };
}
