// Tenant budgets: at most `steps_per_period` steps per period of `period_secs`, shared by every
// engine process through the tenant's one row in `tenant_budgets`. No row means unlimited.
//
// Periods lie on a fixed grid, multiples of the period since the Unix epoch (an hourly budget
// resets on the hour, a daily one at 00:00 UTC), so every process agrees on the next reset
// whatever version of the row it read.
import { AppError } from "../errors.ts";
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

/** As a rate-limit `Reservation`; a unit taken says from which period, so it can be handed back. */
export type BudgetReservation = { ok: true; periodStart: Date | null } | { ok: false; retryAt: Date };

export interface TenantBudget {
  stepsPerPeriod: number;
  periodSecs: number;
  /** Start of the current period. */
  periodStart: Date;
  /** Steps taken in the current period. */
  used: number;
}

/** 366 days. */
export const MAX_BUDGET_PERIOD_SECS = 366 * 86_400;
const MAX_INT4 = 2_147_483_647;

/**
 * The start of the period that holds `at`, on the grid of `periodSecs` periods from `origin`;
 * never before `origin` itself, in case `at` comes from a clock behind the one that wrote it.
 */
function periodStartAt(at: number, periodSecs: number, origin = 0): number {
  const periodMs = periodSecs * 1000;
  return origin + Math.max(0, Math.floor((at - origin) / periodMs)) * periodMs;
}

// consumed: one UPDATE of the tenant's row, so concurrent consumers queue on its row lock and each
//           re-evaluates the conditions on the version the previous one committed: `used` never
//           passes the limit. A period that has ended rolls forward on the grid and this step is
//           its first. A row that is exhausted, or absent, is not touched.
// The SELECT reads the snapshot: no row means unlimited, a row not consumed means exhausted
// (when a concurrent consumer rolled the period meanwhile, the grid still gives the right reset).
const CONSUME = `
WITH consumed AS (
  UPDATE tenant_budgets b
     SET period_start = CASE WHEN $2::timestamptz >= b.period_start + b.period_secs * interval '1 second'
                             THEN b.period_start + floor(extract(epoch FROM $2::timestamptz - b.period_start) / b.period_secs)
                                                   * b.period_secs * interval '1 second'
                             ELSE b.period_start END,
         used = CASE WHEN $2::timestamptz >= b.period_start + b.period_secs * interval '1 second'
                     THEN 1 ELSE b.used + 1 END
   WHERE b.tenant_id = $1
     AND ($2::timestamptz >= b.period_start + b.period_secs * interval '1 second' OR b.used < b.steps_per_period)
  RETURNING b.period_start
)
SELECT (SELECT period_start FROM consumed) AS consumed_in, b.period_start, b.period_secs
  FROM (VALUES (1)) AS one (x)
  LEFT JOIN tenant_budgets b ON b.tenant_id = $1`;

/** Takes one step of the tenant's budget at `now`; exhausted answers the start of the next period. */
export async function tryConsumeBudget(db: Queryable, tenantId: TenantId, now: Date): Promise<BudgetReservation> {
  const { rows } = await db.query<{ consumed_in: Date | null; period_start: Date | null; period_secs: number | null }>({
    name: "budget_consume",
    text: CONSUME,
    values: [tenantId, now],
  });
  const row = rows[0]!;
  if (row.consumed_in) return { ok: true, periodStart: row.consumed_in };
  if (!row.period_start) return { ok: true, periodStart: null };
  const current = periodStartAt(now.getTime(), row.period_secs!, row.period_start.getTime());
  return { ok: false, retryAt: new Date(current + row.period_secs! * 1000) };
}

/**
 * Hands back a step taken in the period starting `periodStart`, for a step that a later check
 * deferred after all. A period that has ended since is left alone: its count no longer matters.
 */
export async function refundBudget(db: Queryable, tenantId: TenantId, periodStart: Date): Promise<void> {
  await db.query({
    name: "budget_refund",
    text: "UPDATE tenant_budgets SET used = used - 1 WHERE tenant_id = $1 AND period_start = $2 AND used > 0",
    values: [tenantId, periodStart],
  });
}

// A new period length starts a fresh period on the new grid. A new size alone keeps the current
// period and what it has used, so lowering a budget mid-period takes effect at once.
const SET_BUDGET = `
INSERT INTO tenant_budgets (tenant_id, steps_per_period, period_secs, period_start, used)
VALUES ($1, $2, $3, $4, 0)
ON CONFLICT (tenant_id) DO UPDATE SET
  steps_per_period = EXCLUDED.steps_per_period,
  period_start = CASE WHEN tenant_budgets.period_secs = EXCLUDED.period_secs
                      THEN tenant_budgets.period_start ELSE EXCLUDED.period_start END,
  used = CASE WHEN tenant_budgets.period_secs = EXCLUDED.period_secs THEN tenant_budgets.used ELSE 0 END,
  period_secs = EXCLUDED.period_secs`;

/** Creates or replaces the tenant's budget: at most `stepsPerPeriod` steps per `periodSecs`. */
export async function setBudget(db: Queryable, tenantId: TenantId, stepsPerPeriod: number, periodSecs: number, now: Date): Promise<void> {
  if (!Number.isInteger(stepsPerPeriod) || stepsPerPeriod < 1 || stepsPerPeriod > MAX_INT4) {
    throw new AppError("invalid_argument", `steps_per_period must be an integer from 1 to ${MAX_INT4}`, ["steps_per_period"]);
  }
  if (!Number.isInteger(periodSecs) || periodSecs < 1 || periodSecs > MAX_BUDGET_PERIOD_SECS) {
    throw new AppError("invalid_argument", `period_secs must be an integer from 1 to ${MAX_BUDGET_PERIOD_SECS}`, ["period_secs"]);
  }
  await db.query({
    name: "budget_set",
    text: SET_BUDGET,
    values: [tenantId, stepsPerPeriod, periodSecs, new Date(periodStartAt(now.getTime(), periodSecs))],
  });
}

/** Removes the tenant's budget (unlimited from now on); false when there was none. */
export async function removeBudget(db: Queryable, tenantId: TenantId): Promise<boolean> {
  const { rowCount } = await db.query({
    name: "budget_remove",
    text: "DELETE FROM tenant_budgets WHERE tenant_id = $1",
    values: [tenantId],
  });
  return rowCount === 1;
}

/** The tenant's budget as it stands at `now` (a period that has ended reads as a fresh one); null when unlimited. */
export async function readBudget(db: Queryable, tenantId: TenantId, now: Date): Promise<TenantBudget | null> {
  const { rows } = await db.query<{ steps_per_period: number; period_secs: number; period_start: Date; used: number }>({
    name: "budget_read",
    text: "SELECT steps_per_period, period_secs, period_start, used FROM tenant_budgets WHERE tenant_id = $1",
    values: [tenantId],
  });
  const row = rows[0];
  if (!row) return null;
  const current = periodStartAt(now.getTime(), row.period_secs, row.period_start.getTime());
  const rolled = current !== row.period_start.getTime();
  return {
    stepsPerPeriod: row.steps_per_period,
    periodSecs: row.period_secs,
    periodStart: new Date(current),
    used: rolled ? 0 : row.used,
  };
}

/** The tenants on this backend that have a budget (the scheduler skips the check for others). */
export async function listBudgetedTenants(db: Queryable): Promise<Set<string>> {
  const { rows } = await db.query<{ tenant_id: string }>({ name: "list_budgeted_tenants", text: "SELECT tenant_id FROM tenant_budgets" });
  return new Set(rows.map((r) => r.tenant_id));
}
