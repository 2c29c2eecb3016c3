// SQL for tenant_limits (control plane, on the primary): operators' per-tenant overrides of the
// claim cap and the in-flight limit. Engines read them all with the placements (TenantView).
import { AppError } from "../errors.ts";
import type { Queryable } from "./transaction.ts";

export interface TenantLimits {
  /** Instances of the tenant in one claim batch; null: BULKHEAD_MAX_INSTANCES_PER_TENANT. */
  claimCap: number | null;
  /** Instances of the tenant in flight per engine process; null: BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT. */
  maxConcurrency: number | null;
  /** Steps of the tenant running at once per engine process; null: BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT. */
  maxSteps: number | null;
}

const MAX_INT4 = 2_147_483_647;

export async function listTenantLimits(db: Queryable): Promise<Map<string, TenantLimits>> {
  const { rows } = await db.query<{ tenant_id: string; claim_cap: number | null; max_concurrency: number | null; max_steps: number | null }>({
    name: "list_tenant_limits",
    text: "SELECT tenant_id, claim_cap, max_concurrency, max_steps FROM tenant_limits",
  });
  return new Map(rows.map((r) => [r.tenant_id, { claimCap: r.claim_cap, maxConcurrency: r.max_concurrency, maxSteps: r.max_steps }]));
}

/**
 * Changes the overrides given (null clears one, an absent one is kept) and returns them all; a
 * row left with none is removed. NotFound for a tenant that does not exist.
 */
export async function setTenantLimits(db: Queryable, tenantId: string, limits: Partial<TenantLimits>): Promise<TenantLimits> {
  for (const [field, value] of [["claim_cap", limits.claimCap], ["max_concurrency", limits.maxConcurrency], ["max_steps", limits.maxSteps]] as const) {
    if (value !== null && value !== undefined && (!Number.isInteger(value) || value < 1 || value > MAX_INT4)) {
      throw new AppError("invalid_argument", `${field} must be an integer from 1 to ${MAX_INT4}, or empty for the default`, [field]);
    }
  }
  type Row = { claim_cap: number | null; max_concurrency: number | null; max_steps: number | null };
  let row: Row | undefined;
  try {
    ({ rows: [row] } = await db.query<Row>({
      name: "set_tenant_limits",
      // $5-$7: whether each override was given; one that was not keeps its stored value.
      text: `INSERT INTO tenant_limits AS l (tenant_id, claim_cap, max_concurrency, max_steps) VALUES ($1, $2, $3, $4)
             ON CONFLICT (tenant_id) DO UPDATE SET
               claim_cap = CASE WHEN $5 THEN EXCLUDED.claim_cap ELSE l.claim_cap END,
               max_concurrency = CASE WHEN $6 THEN EXCLUDED.max_concurrency ELSE l.max_concurrency END,
               max_steps = CASE WHEN $7 THEN EXCLUDED.max_steps ELSE l.max_steps END,
               updated_at = now()
             RETURNING claim_cap, max_concurrency, max_steps`,
      values: [
        tenantId, limits.claimCap ?? null, limits.maxConcurrency ?? null, limits.maxSteps ?? null,
        limits.claimCap !== undefined, limits.maxConcurrency !== undefined, limits.maxSteps !== undefined,
      ],
    }));
  } catch (error) {
    if ((error as { code?: string }).code === "23503") throw new AppError("not_found", "tenant not found");
    throw error;
  }
  const { claim_cap: claimCap, max_concurrency: maxConcurrency, max_steps: maxSteps } = row!;
  // No override left: the tenant has no row, as one that never had any (a later statement sees the upsert).
  if (claimCap === null && maxConcurrency === null && maxSteps === null) {
    await db.query({ name: "clear_tenant_limits", text: "DELETE FROM tenant_limits WHERE tenant_id = $1 AND claim_cap IS NULL AND max_concurrency IS NULL AND max_steps IS NULL", values: [tenantId] });
  }
  return { claimCap, maxConcurrency, maxSteps };
}
