// Cron schedules for the Schedules page and a sequence's page (wire-format M's rules, as REST
// /cron applies them): list (the tenant's, or one sequence's) with each schedule's next fires,
// create, update (enable, disable, edit), remove, and the next fires of a schedule or of an
// expression being typed. Members manage them, as they run sequences.
import { z } from "zod";
import { isAppError, notFound } from "../../../engine/errors.ts";
import { UUID_PATTERN } from "../../../engine/model.ts";
import type { CronRun, CronScheduleRecord } from "../../../engine/storage/index.ts";
import {
  CRON_LIST, createCronSchedule, cronScheduleLimit, deleteCronSchedule, NEXT_FIRES, OVERLAP_POLICIES, previewFires, requireCronSchedule, updateCronSchedule,
} from "../../cron-schedules.ts";
import { requireCron, requireZone } from "../../../engine/scheduler/cron-expression.ts";
import type { Prisma } from "../../db/prisma.ts";
import { router, tenantProcedure } from "../trpc.ts";

const Id = z.string().regex(UUID_PATTERN).transform((id) => id.toLowerCase());
const Expression = z.string().max(256);
const Zone = z.string().max(64);
const Count = z.int().min(1).max(NEXT_FIRES.max).default(NEXT_FIRES.default);
/** The page shows this many fires per schedule, and this many of its latest runs. */
const LISTED_FIRES = 5;
const LISTED_RUNS = 3;

/** The audit log's record of a change the signed-in user made. */
const auditOf = (ctx: { services: { prisma: Prisma }; user: { email: string; id: string } }) => ({
  prisma: ctx.services.prisma, by: { actor: ctx.user.email, actorUserId: ctx.user.id },
});

/** REST's 404 names the schedule's id; here a missing schedule is NOT_FOUND like any missing object. */
async function orMissing<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw isAppError(error, "not_found") && error.message.startsWith("cron_schedule ") ? notFound("cron schedule") : error;
  }
}

function summary(schedule: CronScheduleRecord, now: Date, runs: readonly CronRun[] = []) {
  let nextFires: string[] = [];
  try {
    nextFires = previewFires(schedule, LISTED_FIRES, now).map((date) => date.toISOString());
  } catch {
    // Stored under an older rule: it shows no fires (and the tick never fires it).
  }
  return {
    id: schedule.id,
    sequenceId: schedule.sequenceId,
    namespace: schedule.namespace,
    cronExpr: schedule.cronExpr,
    timezone: schedule.timezone,
    enabled: schedule.enabled,
    metadata: schedule.metadata ?? null,
    overlapPolicy: schedule.overlapPolicy,
    skippedFires: schedule.skippedFires,
    lastSkippedAt: schedule.lastSkippedAt?.toISOString() ?? null,
    lastTriggeredAt: schedule.lastTriggeredAt?.toISOString() ?? null,
    nextFireAt: schedule.nextFireAt?.toISOString() ?? null,
    createdAt: schedule.createdAt.toISOString(),
    nextFires,
    latestRuns: runs.filter((run) => run.scheduleId === schedule.id).map((run) => ({ id: run.instanceId, state: run.state, createdAt: run.createdAt.toISOString() })),
  };
}

export type ScheduleSummary = ReturnType<typeof summary>;

export const schedulesRouter = router({
  /** The tenant's schedules, oldest first, each with its next fires and latest runs; with sequenceId, that sequence's only. */
  list: tenantProcedure.input(z.object({ sequenceId: Id.optional() })).query(async ({ ctx, input }) => {
    const now = new Date();
    const schedules = await ctx.store.listCronSchedules({ limit: CRON_LIST.max, sequenceId: input.sequenceId ?? null });
    const runs = await ctx.store.latestCronRuns(schedules.map((schedule) => schedule.id), LISTED_RUNS);
    return schedules.map((schedule) => summary(schedule, now, runs));
  }),

  create: tenantProcedure
    .input(z.object({
      sequenceId: Id, cronExpr: Expression, timezone: Zone.default("UTC"), overlapPolicy: z.enum(OVERLAP_POLICIES).default("allow"),
      enabled: z.boolean().default(true), metadata: z.json().nullable().default(null),
    }))
    .mutation(async ({ ctx, input }) => {
      const store = ctx.storeForWrite();
      const sequence = await store.getSequence(input.sequenceId);
      if (!sequence) throw notFound("sequence");
      const limit = await cronScheduleLimit(ctx.services, store.tenantId);
      const created = await createCronSchedule(store, auditOf(ctx), { ...input, namespace: sequence.namespace }, limit);
      return summary(created, new Date());
    }),

  /** Changes what is given (absent: unchanged); next_fire_at is recomputed from now. */
  update: tenantProcedure
    .input(z.object({
      id: Id, cronExpr: Expression.optional(), timezone: Zone.optional(), enabled: z.boolean().optional(),
      overlapPolicy: z.enum(OVERLAP_POLICIES).optional(), metadata: z.json().nullable().optional(),
    }))
    .mutation(async ({ ctx, input }) => {
      const { id, ...patch } = input;
      return summary(await orMissing(updateCronSchedule(ctx.storeForWrite(), auditOf(ctx), id, patch)), new Date());
    }),

  remove: tenantProcedure.input(z.object({ id: Id })).mutation(async ({ ctx, input }) => {
    await orMissing(deleteCronSchedule(ctx.storeForWrite(), auditOf(ctx), input.id));
    return { removed: true };
  }),

  /** A schedule's next fires in UTC, with its zone. */
  nextFires: tenantProcedure.input(z.object({ id: Id, n: Count })).query(async ({ ctx, input }) => {
    const schedule = await orMissing(requireCronSchedule(ctx.store, input.id));
    return { timezone: schedule.timezone, fires: previewFires(schedule, input.n).map((date) => date.toISOString()) };
  }),

  /** The next fires of an expression being typed: BAD_REQUEST with M's text when it or the zone is refused. */
  preview: tenantProcedure.input(z.object({ cronExpr: Expression, timezone: Zone, n: Count })).query(({ input }) => {
    const parsed = requireCron(input.cronExpr);
    const timezone = requireZone(input.timezone);
    return { timezone, fires: previewFires({ cronExpr: parsed.source, timezone }, input.n).map((date) => date.toISOString()) };
  }),
});
