// Resource pools over REST (wire-format U): pools (create, list by name, read, delete with their
// resources) and a pool's resources (list by name, add, PUT any subset, delete). CRUD only: no
// step uses a pool. An operator key names the tenant in X-Tenant-Id. Another tenant's pool or
// resource is one this tenant does not have: the same 404, or on DELETE of a resource the same
// 204. The pool is looked for first on every resource route, so a missing pool is
// `pool not found` there too, and `resource not found` means the pool has no such resource.
import { z } from "zod";
import { AppError, notFound } from "../../../engine/errors.ts";
import { nameString } from "../../../engine/sequence/schema.ts";
import {
  POOL_STRATEGIES, type PoolRecord, type PoolResourceChange, type PoolResourceRecord, type TenantStore,
} from "../../../engine/storage/index.ts";
import { recordAudit } from "../../control/audit.ts";
import { keyActor } from "../auth.ts";
import { shapedBody } from "../body.ts";
import { empty, json } from "../http.ts";
import { requireTenantHeader, type RestContext } from "../route.ts";

const NO_TENANT = "resource pools belong to one tenant: name it (X-Tenant-Id)";
const U32_MAX = 4_294_967_295;
/** Orch8's counters are u32: a negative, fractional or larger number is a shape error (422). */
const u32 = () => z.int().min(0).max(U32_MAX);

// Extra fields (Orch8 clients send `max_size`) are dropped by the object schema, as U says.
const PoolBody = z.object({
  // The key rules: blank or absent is the request tenant, another tenant a 404 (the dispatcher).
  tenant_id: z.string().optional(),
  // U lists no 400 here: an over-long name is the 422 every other name gets (DESIGN: "over-long names").
  name: nameString(),
  strategy: z.enum(POOL_STRATEGIES).default("round_robin"),
});
type PoolBody = z.output<typeof PoolBody>;

const ResourceBody = z.object({
  resource_key: z.string(),
  name: z.string(),
  weight: u32().default(1),
  daily_cap: u32().default(0),
  warmup_start: z.string().nullish(),
  warmup_days: u32().default(0),
  warmup_start_cap: u32().default(0),
});
type ResourceBody = z.output<typeof ResourceBody>;

/** A PUT: absent or null fields stay as they are (so warmup_start cannot be cleared, as in Orch8). */
const ResourcePatch = z.object({
  name: z.string().nullish(),
  weight: u32().nullish(),
  enabled: z.boolean().nullish(),
  daily_cap: u32().nullish(),
  warmup_start: z.string().nullish(),
  warmup_days: u32().nullish(),
  warmup_start_cap: u32().nullish(),
});
type ResourcePatch = z.output<typeof ResourcePatch>;

export const poolCreateBody = shapedBody(PoolBody, (body) => [body.tenant_id]);
export const poolResourceBody = shapedBody(ResourceBody, () => []);
export const poolResourcePatchBody = shapedBody(ResourcePatch, () => []);

const invalid = (message: string, field: string) => new AppError("invalid_argument", message, [field]);
const poolNotFound = () => notFound("pool");
const resourceNotFound = () => notFound("resource");

function checkLength(value: string, field: string): void {
  if (value.length < 1 || value.length > 255) throw invalid(`${field} must be 1-255 characters`, field);
}

function checkWeight(weight: number): void {
  if (weight < 1) throw invalid("weight must be at least 1", "weight");
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar day, `YYYY-MM-DD`, year 1 to 9999 (PostgreSQL's DATE has no year 0). */
function checkedDay(value: string): string {
  const match = DAY.exec(value);
  if (!match) throw invalid("invalid warmup_start date: expected YYYY-MM-DD", "warmup_start");
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (year < 1 || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    throw invalid(`invalid warmup_start date: ${value} is not a day of the calendar`, "warmup_start");
  }
  return value;
}

const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

export function wirePool(pool: PoolRecord) {
  return {
    id: pool.id,
    tenant_id: pool.tenantId,
    name: pool.name,
    strategy: pool.strategy,
    round_robin_index: pool.roundRobinIndex,
    created_at: pool.createdAt.toISOString(),
    updated_at: pool.updatedAt.toISOString(),
  };
}

export function wireResource(resource: PoolResourceRecord) {
  return {
    id: resource.id,
    pool_id: resource.poolId,
    resource_key: resource.resourceKey,
    name: resource.name,
    weight: resource.weight,
    enabled: resource.enabled,
    daily_cap: resource.dailyCap,
    daily_usage: resource.dailyUsage,
    daily_usage_date: resource.dailyUsageDate,
    warmup_start: resource.warmupStart,
    warmup_days: resource.warmupDays,
    warmup_start_cap: resource.warmupStartCap,
    created_at: resource.createdAt.toISOString(),
  };
}

/** A change's line in the audit log, by this request's key: ids and field names, never values. */
async function audit(context: RestContext<unknown>, store: TenantStore, action: string, details: Record<string, string | string[]>) {
  const actor = await keyActor(context.services.prisma, context.principal!);
  await recordAudit(context.services.prisma, { actor, tenantId: store.tenantId, action, details });
}

export async function createPool(context: RestContext<PoolBody>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const pool = await store.createPool({ name: context.body.name, strategy: context.body.strategy });
  await audit(context, store, "pool.create", { id: pool.id, strategy: pool.strategy });
  return json(201, wirePool(pool));
}

export async function listPools(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  return json(200, (await store.listPools()).map(wirePool));
}

export async function getPool(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const pool = await store.getPool(context.params.id!);
  if (!pool) throw poolNotFound();
  return json(200, wirePool(pool));
}

export async function deletePool(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const id = context.params.id!;
  if (!(await store.deletePool(id))) throw poolNotFound();
  await audit(context, store, "pool.delete", { id });
  return empty(204);
}

export async function listPoolResources(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const resources = await store.listPoolResources(context.params.pool_id!);
  if (!resources) throw poolNotFound();
  return json(200, resources.map(wireResource));
}

/** The body is checked whole before the pool is looked for: a malformed request is a 400 whatever it names. */
export async function addPoolResource(context: RestContext<ResourceBody>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const body = context.body;
  checkLength(body.resource_key, "resource_key");
  checkLength(body.name, "name");
  checkWeight(body.weight);
  const warmupStart = present(body.warmup_start) ? checkedDay(body.warmup_start) : null;
  const poolId = context.params.pool_id!;
  const added = await store.addPoolResource(poolId, {
    resourceKey: body.resource_key, name: body.name, weight: body.weight, dailyCap: body.daily_cap, warmupStart,
    warmupDays: body.warmup_days, warmupStartCap: body.warmup_start_cap,
  });
  if (!added) throw poolNotFound();
  await audit(context, store, "pool.resource.add", { pool_id: poolId, id: added.id });
  return json(201, wireResource(added));
}

/**
 * U lists only the date's 400 for a PUT; a name or weight a POST would refuse is refused here too,
 * with the POST's words, so no PUT makes a resource the POST could not have made.
 */
export async function updatePoolResource(context: RestContext<ResourcePatch>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const patch = context.body;
  if (present(patch.name)) checkLength(patch.name, "name");
  if (present(patch.weight)) checkWeight(patch.weight);
  const change: PoolResourceChange = {
    ...(present(patch.name) ? { name: patch.name } : {}),
    ...(present(patch.weight) ? { weight: patch.weight } : {}),
    ...(present(patch.enabled) ? { enabled: patch.enabled } : {}),
    ...(present(patch.daily_cap) ? { dailyCap: patch.daily_cap } : {}),
    ...(present(patch.warmup_start) ? { warmupStart: checkedDay(patch.warmup_start) } : {}),
    ...(present(patch.warmup_days) ? { warmupDays: patch.warmup_days } : {}),
    ...(present(patch.warmup_start_cap) ? { warmupStartCap: patch.warmup_start_cap } : {}),
  };
  const poolId = context.params.pool_id!;
  const id = context.params.resource_id!;
  const outcome = await store.updatePoolResource(poolId, id, change);
  if ("missing" in outcome) throw outcome.missing === "pool" ? poolNotFound() : resourceNotFound();
  // Which fields changed, never what to; a PUT of nothing leaves no line.
  const fields = Object.keys(patch).filter((key) => present(patch[key as keyof ResourcePatch]));
  if (fields.length > 0) await audit(context, store, "pool.resource.update", { pool_id: poolId, id, fields });
  return json(200, wireResource(outcome.found));
}

/** 204 also when the pool has no such resource (any more), a foreign one included; 404 when it is in another of the tenant's pools. */
export async function deletePoolResource(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const poolId = context.params.pool_id!;
  const id = context.params.resource_id!;
  const outcome = await store.deletePoolResource(poolId, id);
  if ("missing" in outcome) throw outcome.missing === "pool" ? poolNotFound() : resourceNotFound();
  if (outcome.found) await audit(context, store, "pool.resource.delete", { pool_id: poolId, id });
  return empty(204);
}
