// Cron schedules (wire-format M), shared by REST (/cron) and the Schedules page (tRPC): the
// checks a schedule must pass before it is stored, its next_fire_at, and the preview of fires.
import { nextCronFire } from "../engine/scheduler/cron-tick.ts";
import { nextFires, requireCron, requireZone } from "../engine/scheduler/cron-expression.ts";
import {
  cronScheduleNotFound, type CronSchedulePatch, type CronScheduleRecord, type OverlapPolicy, type TenantStore,
} from "../engine/storage/index.ts";
import { AppError } from "../engine/errors.ts";
import type { Services } from "./services.ts";
import { tenantLimitsCache } from "./tenant-limits-cache.ts";

export { OVERLAP_POLICIES } from "../engine/storage/index.ts";

/** GET /cron's page size (M: 100, at most 1000). */
export const CRON_LIST = { default: 100, max: 1000 } as const;
/** next-fires' count (M: 5, clamped to 1..50). */
export const NEXT_FIRES = { default: 5, min: 1, max: 50 } as const;

export interface CronScheduleInput {
  namespace: string;
  sequenceId: string;
  cronExpr: string;
  timezone: string;
  enabled: boolean;
  metadata: unknown;
  overlapPolicy: OverlapPolicy;
}

/** How many schedules the tenant may have: its own limit (an operator's), else BULKHEAD_CRON_SCHEDULES_PER_TENANT. */
export async function cronScheduleLimit(services: Services, tenantId: string): Promise<number> {
  return (await tenantLimitsCache(services).of(tenantId))?.cronSchedules ?? services.config.BULKHEAD_CRON_SCHEDULES_PER_TENANT;
}

/** Creates a schedule: 400 for a bad expression or zone, 404 for a sequence not the tenant's, 409 at the tenant's limit. */
export async function createCronSchedule(store: TenantStore, input: CronScheduleInput, limit: number, now = new Date()): Promise<CronScheduleRecord> {
  if (input.namespace.trim() === "") throw new AppError("invalid_argument", "namespace must not be blank", ["namespace"]);
  const parsed = requireCron(input.cronExpr);
  const timezone = requireZone(input.timezone);
  const nextFireAt = nextFires(parsed, timezone, now, 1)[0] ?? null;
  return store.insertCronSchedule({ ...input, cronExpr: parsed.source, timezone, nextFireAt }, limit);
}

/** Changes what the patch names and recomputes next_fire_at from now; 404 `cron_schedule <id>` when the tenant has none. */
export async function updateCronSchedule(store: TenantStore, id: string, patch: CronSchedulePatch, now = new Date()): Promise<CronScheduleRecord> {
  const checked: CronSchedulePatch = { ...patch };
  if (patch.cronExpr !== undefined) checked.cronExpr = requireCron(patch.cronExpr).source;
  if (patch.timezone !== undefined) checked.timezone = requireZone(patch.timezone);
  const updated = await store.updateCronSchedule(id, checked, nextCronFire, now);
  if (!updated) throw cronScheduleNotFound(id);
  return updated;
}

export async function requireCronSchedule(store: Pick<TenantStore, "getCronSchedule">, id: string): Promise<CronScheduleRecord> {
  const schedule = await store.getCronSchedule(id);
  if (!schedule) throw cronScheduleNotFound(id);
  return schedule;
}

export async function deleteCronSchedule(store: TenantStore, id: string): Promise<void> {
  if (!(await store.deleteCronSchedule(id))) throw cronScheduleNotFound(id);
}

/** The schedule's next `n` fires after now, in UTC (whether or not it is enabled). */
export function previewFires(schedule: Pick<CronScheduleRecord, "cronExpr" | "timezone">, n: number, now = new Date()): Date[] {
  const count = Math.min(Math.max(n, NEXT_FIRES.min), NEXT_FIRES.max);
  return nextFires(requireCron(schedule.cronExpr), schedule.timezone, now, count);
}
