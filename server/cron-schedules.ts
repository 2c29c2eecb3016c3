// Cron schedules (wire-format M), shared by REST (/cron) and the Schedules page (tRPC): the
// checks a schedule must pass before it is stored, its next_fire_at, the preview of fires, and
// each change's line in the audit log.
import { nextCronFire } from "../engine/scheduler/cron-tick.ts";
import { nextFires, requireCron, requireZone } from "../engine/scheduler/cron-expression.ts";
import {
  cronScheduleNotFound, type CronSchedulePatch, type CronScheduleRecord, type OverlapPolicy, type TenantStore,
} from "../engine/storage/index.ts";
import { AppError } from "../engine/errors.ts";
import { recordAudit, type AuditEntry } from "./control/audit.ts";
import type { Prisma } from "./db/prisma.ts";
import type { Services } from "./services.ts";
import { tenantLimitsCache } from "./tenant-limits-cache.ts";

export { OVERLAP_POLICIES } from "../engine/storage/index.ts";

/** GET /cron's page size (M: 100, at most 1000). */
export const CRON_LIST = { default: 100, max: 1000 } as const;
/** next-fires' count (M: 5, clamped to 1..50). */
export const NEXT_FIRES = { default: 5, min: 1, max: 50 } as const;

/** Who made a change, as the audit log names them, and where it is recorded. */
export interface CronAudit {
  prisma: Prisma;
  by: Pick<AuditEntry, "actor" | "actorUserId">;
}

function audit(log: CronAudit, tenantId: string, action: string, schedule: Pick<CronScheduleRecord, "id" | "sequenceId" | "cronExpr" | "timezone" | "enabled" | "overlapPolicy">) {
  return recordAudit(log.prisma, {
    ...log.by, tenantId, action,
    details: {
      cron_schedule_id: schedule.id, sequence_id: schedule.sequenceId, cron_expr: schedule.cronExpr, timezone: schedule.timezone,
      enabled: schedule.enabled, overlap_policy: schedule.overlapPolicy,
    },
  });
}

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
export async function createCronSchedule(
  store: TenantStore, log: CronAudit, input: CronScheduleInput, limit: number, now = new Date(),
): Promise<CronScheduleRecord> {
  if (input.namespace.trim() === "") throw new AppError("invalid_argument", "namespace must not be blank", ["namespace"]);
  const parsed = requireCron(input.cronExpr);
  const timezone = requireZone(input.timezone);
  const nextFireAt = nextFires(parsed, timezone, now, 1)[0] ?? null;
  const created = await store.insertCronSchedule({ ...input, cronExpr: parsed.source, timezone, nextFireAt }, limit);
  await audit(log, store.tenantId, "cron_schedule.create", created);
  return created;
}

/** Changes what the patch names and recomputes next_fire_at from now; 404 `cron_schedule <id>` when the tenant has none. */
export async function updateCronSchedule(
  store: TenantStore, log: CronAudit, id: string, patch: CronSchedulePatch, now = new Date(),
): Promise<CronScheduleRecord> {
  const checked: CronSchedulePatch = { ...patch };
  if (patch.cronExpr !== undefined) checked.cronExpr = requireCron(patch.cronExpr).source;
  if (patch.timezone !== undefined) checked.timezone = requireZone(patch.timezone);
  const updated = await store.updateCronSchedule(id, checked, nextCronFire, now);
  if (!updated) throw cronScheduleNotFound(id);
  await audit(log, store.tenantId, "cron_schedule.update", updated);
  return updated;
}

export async function requireCronSchedule(store: Pick<TenantStore, "getCronSchedule">, id: string): Promise<CronScheduleRecord> {
  const schedule = await store.getCronSchedule(id);
  if (!schedule) throw cronScheduleNotFound(id);
  return schedule;
}

export async function deleteCronSchedule(store: TenantStore, log: CronAudit, id: string): Promise<void> {
  const schedule = await store.getCronSchedule(id);
  if (!schedule || !(await store.deleteCronSchedule(id))) throw cronScheduleNotFound(id);
  await audit(log, store.tenantId, "cron_schedule.delete", schedule);
}

/** The schedule's next `n` fires after now, in UTC (whether or not it is enabled). */
export function previewFires(schedule: Pick<CronScheduleRecord, "cronExpr" | "timezone">, n: number, now = new Date()): Date[] {
  const count = Math.min(Math.max(n, NEXT_FIRES.min), NEXT_FIRES.max);
  return nextFires(requireCron(schedule.cronExpr), schedule.timezone, now, count);
}
