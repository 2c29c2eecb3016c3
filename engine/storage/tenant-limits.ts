// SQL for tenant_limits (control plane, on the primary): operators' per-tenant overrides of the
// resource ledger's tiered defaults. Engines read them all with the placements (TenantView), web
// processes for the API request rate (server/tenant-limits-cache.ts).
import { AppError } from "../errors.ts";
import type { Queryable } from "./transaction.ts";

export interface TenantLimits {
  /** Instances of the tenant in one claim batch; null: BULKHEAD_MAX_INSTANCES_PER_TENANT. */
  claimCap: number | null;
  /** Instances of the tenant in flight per engine process; null: BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT. */
  maxConcurrency: number | null;
  /** Steps of the tenant running at once per engine process; null: BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT. */
  maxSteps: number | null;
  /** Outbound requests of the tenant open to one host at once; null: BULKHEAD_OUTBOUND_PER_HOST. */
  outboundPerHost: number | null;
  /** API requests per second of one principal for the tenant; null: BULKHEAD_API_RATE_PER_SEC. */
  apiRatePerSec: number | null;
  /** Cron schedules the tenant may have; null: BULKHEAD_CRON_SCHEDULES_PER_TENANT. */
  cronSchedules: number | null;
  /** Public webhook requests per second of the tenant, per web process; null: BULKHEAD_WEBHOOK_RATE_PER_SEC. */
  webhookRatePerSec: number | null;
  /** The tenant's schedule-lag p99 objective in ms (the fairness page); null: BULKHEAD_LAG_OBJECTIVE_MS. */
  lagObjectiveMs: number | null;
  /** Days a terminal instance is kept before the pruner deletes it; null: BULKHEAD_RETENTION_DAYS. */
  retentionDays: number | null;
}

/** tenant_limits columns by field, in the order of the statements below. */
const COLUMNS = {
  claimCap: "claim_cap", maxConcurrency: "max_concurrency", maxSteps: "max_steps", outboundPerHost: "outbound_per_host", apiRatePerSec: "api_rate_per_sec",
  cronSchedules: "cron_schedules", webhookRatePerSec: "webhook_rate_per_sec", lagObjectiveMs: "lag_objective_ms", retentionDays: "retention_days",
} as const satisfies Record<keyof TenantLimits, string>;
const FIELDS = Object.keys(COLUMNS) as (keyof TenantLimits)[];
const SELECTED = FIELDS.map((f) => COLUMNS[f]).join(", ");

type Row = Record<(typeof COLUMNS)[keyof TenantLimits], number | null>;
const fromRow = (row: Row): TenantLimits => Object.fromEntries(FIELDS.map((f) => [f, row[COLUMNS[f]]])) as unknown as TenantLimits;

const MAX_INT4 = 2_147_483_647;

export async function listTenantLimits(db: Queryable): Promise<Map<string, TenantLimits>> {
  const { rows } = await db.query<Row & { tenant_id: string }>({ name: "list_tenant_limits", text: `SELECT tenant_id, ${SELECTED} FROM tenant_limits` });
  return new Map(rows.map((r) => [r.tenant_id, fromRow(r)]));
}

/**
 * Changes the overrides given (null clears one, an absent one is kept) and returns them all; a
 * row left with none is removed. NotFound for a tenant that does not exist.
 */
export async function setTenantLimits(db: Queryable, tenantId: string, limits: Partial<TenantLimits>): Promise<TenantLimits> {
  for (const field of FIELDS) {
    const value = limits[field];
    if (value !== null && value !== undefined && (!Number.isInteger(value) || value < 1 || value > MAX_INT4)) {
      throw new AppError("invalid_argument", `${COLUMNS[field]} must be an integer from 1 to ${MAX_INT4}, or empty for the default`, [COLUMNS[field]]);
    }
  }
  const n = FIELDS.length;
  let row: Row | undefined;
  try {
    ({ rows: [row] } = await db.query<Row>({
      name: "set_tenant_limits",
      // $2..: the values; $(n+2)..: whether each was given; one that was not keeps its stored value.
      text: `INSERT INTO tenant_limits AS l (tenant_id, ${SELECTED}) VALUES ($1, ${FIELDS.map((_, i) => `$${i + 2}`).join(", ")})
             ON CONFLICT (tenant_id) DO UPDATE SET
               ${FIELDS.map((f, i) => `${COLUMNS[f]} = CASE WHEN $${i + n + 2} THEN EXCLUDED.${COLUMNS[f]} ELSE l.${COLUMNS[f]} END`).join(",\n               ")},
               updated_at = now()
             RETURNING ${SELECTED}`,
      values: [tenantId, ...FIELDS.map((f) => limits[f] ?? null), ...FIELDS.map((f) => limits[f] !== undefined)],
    }));
  } catch (error) {
    if ((error as { code?: string }).code === "23503") throw new AppError("not_found", "tenant not found");
    throw error;
  }
  const stored = fromRow(row!);
  // No override left: the tenant has no row, as one that never had any (a later statement sees the upsert).
  if (FIELDS.every((f) => stored[f] === null)) {
    await db.query({
      name: "clear_tenant_limits",
      text: `DELETE FROM tenant_limits WHERE tenant_id = $1 AND ${FIELDS.map((f) => `${COLUMNS[f]} IS NULL`).join(" AND ")}`,
      values: [tenantId],
    });
  }
  return stored;
}
