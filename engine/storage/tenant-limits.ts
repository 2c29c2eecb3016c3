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

/** Sets the overrides (null clears one); all null removes the row. NotFound for a tenant that does not exist. */
export async function setTenantLimits(db: Queryable, tenantId: string, limits: TenantLimits): Promise<void> {
  for (const [field, value] of [["claim_cap", limits.claimCap], ["max_concurrency", limits.maxConcurrency], ["max_steps", limits.maxSteps]] as const) {
    if (value !== null && (!Number.isInteger(value) || value < 1 || value > MAX_INT4)) {
      throw new AppError("invalid_argument", `${field} must be an integer from 1 to ${MAX_INT4}, or empty for the default`, [field]);
    }
  }
  if (limits.claimCap === null && limits.maxConcurrency === null && limits.maxSteps === null) {
    await db.query({ name: "clear_tenant_limits", text: "DELETE FROM tenant_limits WHERE tenant_id = $1", values: [tenantId] });
    return;
  }
  try {
    await db.query({
      name: "set_tenant_limits",
      text: `INSERT INTO tenant_limits (tenant_id, claim_cap, max_concurrency, max_steps) VALUES ($1, $2, $3, $4)
             ON CONFLICT (tenant_id) DO UPDATE
               SET claim_cap = EXCLUDED.claim_cap, max_concurrency = EXCLUDED.max_concurrency, max_steps = EXCLUDED.max_steps, updated_at = now()`,
      values: [tenantId, limits.claimCap, limits.maxConcurrency, limits.maxSteps],
    });
  } catch (error) {
    if ((error as { code?: string }).code === "23503") throw new AppError("not_found", "tenant not found");
    throw error;
  }
}
