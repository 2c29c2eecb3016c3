// A tenant's limits for operators: its own values of the resource ledger's tiered limits (control
// plane, read by every engine and web process within a second), its step budget and its rate limits (on its backend, through
// the router). Every change is in the audit log.
import { z } from "zod";
import { recordAudit } from "../../control/audit.ts";
import { applyBudget, applyRateLimit } from "../../limits.ts";
import { tenantLimitsCache } from "../../tenant-limits-cache.ts";
import { operatorTenantProcedure, router } from "../trpc.ts";

/** 0 or empty: the engine default. */
const override = z.int().min(1).max(2_147_483_647).nullable();
/** A retention in days: a day to a hundred years. */
export const retentionDays = z.int().min(1).max(36_500);

export const opsLimitsRouter = router({
  // Each procedure routes the tenant first: NOT_FOUND for a tenant that does not exist.
  get: operatorTenantProcedure.query(async ({ ctx, input }) => {
    const now = new Date();
    const [own, budget, rateLimits] = await Promise.all([
      ctx.services.prisma.tenantLimit.findUnique({ where: { tenantId: input.tenantId } }),
      ctx.store.readBudget(now),
      ctx.store.listRateLimitPolicies(now),
    ]);
    const { config } = ctx.services;
    return {
      claimCap: own?.claimCap ?? null,
      maxConcurrency: own?.maxConcurrency ?? null,
      maxSteps: own?.maxSteps ?? null,
      outboundPerHost: own?.outboundPerHost ?? null,
      apiRatePerSec: own?.apiRatePerSec ?? null,
      cronSchedules: own?.cronSchedules ?? null,
      webhookRatePerSec: own?.webhookRatePerSec ?? null,
      lagObjectiveMs: own?.lagObjectiveMs ?? null,
      retentionDays: own?.retentionDays ?? null,
      defaults: {
        claimCap: config.BULKHEAD_MAX_INSTANCES_PER_TENANT, maxConcurrency: config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT,
        maxSteps: config.BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT, outboundPerHost: config.BULKHEAD_OUTBOUND_PER_HOST,
        apiRatePerSec: config.BULKHEAD_API_RATE_PER_SEC, cronSchedules: config.BULKHEAD_CRON_SCHEDULES_PER_TENANT,
        webhookRatePerSec: config.BULKHEAD_WEBHOOK_RATE_PER_SEC, lagObjectiveMs: config.BULKHEAD_LAG_OBJECTIVE_MS,
        retentionDays: config.BULKHEAD_RETENTION_DAYS,
      },
      budget: budget && { stepsPerPeriod: budget.stepsPerPeriod, periodSecs: budget.periodSecs, used: budget.used, periodStart: budget.periodStart.toISOString() },
      rateLimits: rateLimits.map((p) => ({ key: p.key, maxCount: p.maxCount, windowMs: p.windowMs, inWindow: p.inWindow })),
    };
  }),

  /**
   * The tenant's own claim cap, in-flight limit, step limit, outbound bound per host, API
   * request rate, cron schedule count and webhook rate: null returns one to the default, an absent one is kept. Answers them all
   * (control plane: not held up by a move).
   */
  set: operatorTenantProcedure
    .input(z.object({
      claimCap: override.optional(), maxConcurrency: override.optional(), maxSteps: override.optional(),
      outboundPerHost: override.optional(), apiRatePerSec: override.optional(), cronSchedules: override.optional(),
      webhookRatePerSec: override.optional(), lagObjectiveMs: override.optional(), retentionDays: retentionDays.nullable().optional(),
    }))
    .mutation(async ({ ctx, input }) => {
      const { tenantId, ...changes } = input;
      const limits = await ctx.services.storage.setTenantLimits(tenantId, changes);
      tenantLimitsCache(ctx.services).invalidate();
      await recordAudit(ctx.services.prisma, {
        actor: ctx.user.email, actorUserId: ctx.user.id, tenantId, action: "limits.set",
        details: {
          claim_cap: limits.claimCap, max_concurrency: limits.maxConcurrency, max_steps: limits.maxSteps,
          outbound_per_host: limits.outboundPerHost, api_rate_per_sec: limits.apiRatePerSec, cron_schedules: limits.cronSchedules,
          webhook_rate_per_sec: limits.webhookRatePerSec, lag_objective_ms: limits.lagObjectiveMs, retention_days: limits.retentionDays,
        },
      });
      return limits;
    }),

  /** Steps per period; 0 removes the budget. */
  setBudget: operatorTenantProcedure
    .input(z.object({ stepsPerPeriod: z.int().min(0), periodSecs: z.int().min(1).max(31_536_000) }))
    .mutation(async ({ ctx, input }) => {
      const change = await applyBudget(ctx.services.prisma, ctx.storeForWrite(), { actor: ctx.user.email, actorUserId: ctx.user.id }, input);
      return { removed: change !== "set" };
    }),

  /** At most `maxCount` steps with the rate-limit key per `windowMs`; 0 removes the limit. */
  setRateLimit: operatorTenantProcedure
    .input(z.object({ key: z.string().trim().min(1, "name the key").max(256), maxCount: z.int().min(0), windowMs: z.int().min(1).max(86_400_000) }))
    .mutation(async ({ ctx, input }) => {
      const change = await applyRateLimit(ctx.services.prisma, ctx.storeForWrite(), { actor: ctx.user.email, actorUserId: ctx.user.id }, input);
      return { removed: change !== "set" };
    }),
});
