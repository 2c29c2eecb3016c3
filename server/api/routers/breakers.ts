// Circuit breakers for the web app: a tenant's breakers page (members read, admins reset) and the
// operator's all-tenants view. State is read from the rows engines share (see
// server/rest/handlers/breakers.ts): only Open breakers are visible outside an engine, so a
// closed breaker's failure count is not shown anywhere here.
import { z } from "zod";
import type { BreakerBounds, BreakerReset, BreakerSettingsRow, OpenBreakerRow, TenantStore } from "../../../engine/storage/index.ts";
import { recordAudit } from "../../control/audit.ts";
import { breakerStatus } from "../../rest/handlers/breakers.ts";
import type { Services } from "../../services.ts";
import { operatorProcedure, operatorTenantProcedure, router, tenantAdminProcedure, tenantProcedure } from "../trpc.ts";

const RESET_LIMIT = { default: 20, max: 100 };

/** Handler names are free text on the wire (not trimmed: " x" is another handler); this only bounds a form's input. */
const handlerName = z.string().min(1).max(256);

function listed(services: Services, rows: readonly OpenBreakerRow[], own: readonly BreakerSettingsRow[] = []) {
  const now = Date.now();
  return rows.map((row) => {
    // A handler's own settings (a tenant admin's) decide its threshold and cooldown.
    const mine = own.find((s) => s.handler === row.handler);
    const config = mine
      ? { ...services.config, BULKHEAD_BREAKER_THRESHOLD: mine.failureThreshold, BULKHEAD_BREAKER_COOLDOWN_SECS: mine.cooldownSecs }
      : services.config;
    const status = breakerStatus(row, config, now);
    return {
      tenantId: status.tenantId,
      handler: status.handler,
      state: status.state,
      failureCount: status.failureCount,
      failureThreshold: status.failureThreshold,
      secondsLeft: status.secondsLeft,
      openedAt: row.openedAt.toISOString(),
    };
  });
}

const resetEntries = (resets: readonly BreakerReset[]) =>
  resets.map((r) => ({ id: r.id, tenantId: r.tenantId, handler: r.handler, resetBy: r.resetBy, resetAt: r.resetAt.toISOString() }));

/** The settings every breaker shares, for the pages' explanations. */
const settings = (services: Services) => ({
  failureThreshold: services.config.BULKHEAD_BREAKER_THRESHOLD,
  cooldownSecs: services.config.BULKHEAD_BREAKER_COOLDOWN_SECS,
});

/** The range the operator allows tenant admins (configuration). */
const bounds = (services: Services): BreakerBounds => ({
  threshold: [services.config.BULKHEAD_BREAKER_THRESHOLD_MIN, services.config.BULKHEAD_BREAKER_THRESHOLD_MAX],
  cooldownSecs: [services.config.BULKHEAD_BREAKER_COOLDOWN_MIN_SECS, services.config.BULKHEAD_BREAKER_COOLDOWN_MAX_SECS],
});

/** Resets and records who did it: the reset row (which engines follow) and the audit log. */
async function reset(services: Services, store: TenantStore, handler: string, user: { id: string; email: string }) {
  const { wasOpen } = await store.resetBreaker(handler, user.email);
  await recordAudit(services.prisma, {
    actor: user.email,
    actorUserId: user.id,
    tenantId: store.tenantId,
    action: "breaker.reset",
    details: { handler, was_open: wasOpen },
  });
  return { wasOpen };
}

/**
 * How many open breakers the console lists at once. In a vendor's outage thousands of tenants may
 * have one open: the page lists the first of them, by tenant and handler, says how many match,
 * and the filters find the rest.
 */
export const OPS_BREAKERS_SHOWN = 100;

/**
 * Operators: every tenant's open breakers, optionally those whose tenant id and handler contain
 * `tenant` and `handler` (any case), or of the one tenant `tenantId`; the first
 * OPS_BREAKERS_SHOWN of them and how many match.
 */
const opsRouter = router({
  list: operatorProcedure
    .input(z.object({
      tenant: z.string().trim().max(64).optional(),
      tenantId: z.string().max(64).optional(),
      handler: z.string().trim().max(256).optional(),
    }).optional())
    .query(async ({ ctx, input }) => {
      const tenant = input?.tenant?.toLowerCase() ?? "";
      const handler = input?.handler?.toLowerCase() ?? "";
      const { open, resets } = await ctx.services.storage.breakersOfEveryTenant({ resets: RESET_LIMIT.max });
      const matches = (row: { tenantId: string; handler: string }) =>
        (input?.tenantId === undefined ? row.tenantId.includes(tenant) : row.tenantId === input.tenantId) && row.handler.toLowerCase().includes(handler);
      const matching = open.filter(matches);
      return {
        ...settings(ctx.services),
        breakers: listed(ctx.services, matching.slice(0, OPS_BREAKERS_SHOWN)),
        matching: matching.length,
        resets: resetEntries(resets.filter(matches).slice(0, RESET_LIMIT.default)),
      };
    }),

  // A tenant that does not exist is NOT_FOUND, from the partition router.
  reset: operatorTenantProcedure
    .input(z.object({ handler: handlerName }))
    .mutation(({ ctx, input }) => reset(ctx.services, ctx.storeForWrite(), input.handler, ctx.user)),
});

/** What a tenant's members may call. */
const tenantBreakers = {
  /** The tenant's Open and half-open breakers. */
  list: tenantProcedure.query(async ({ ctx }) => {
    const own = await ctx.store.listBreakerSettings();
    return {
      ...settings(ctx.services),
      bounds: bounds(ctx.services),
      handlerSettings: own.map((s) => ({ handler: s.handler, failureThreshold: s.failureThreshold, cooldownSecs: s.cooldownSecs })),
      breakers: listed(ctx.services, await ctx.store.listOpenBreakers(), own),
    };
  }),

  /** Tenant admins: a handler's own threshold and cooldown, within the operator's bounds. */
  setSettings: tenantAdminProcedure
    .input(z.object({ handler: handlerName, failureThreshold: z.int(), cooldownSecs: z.int() }))
    .mutation(async ({ ctx, input }) => {
      const store = ctx.storeForWrite();
      await store.setBreakerSettings(input.handler, { failureThreshold: input.failureThreshold, cooldownSecs: input.cooldownSecs }, bounds(ctx.services));
      await recordAudit(ctx.services.prisma, {
        actor: ctx.user.email, actorUserId: ctx.user.id, tenantId: store.tenantId, action: "breaker.settings",
        details: { handler: input.handler, failure_threshold: input.failureThreshold, cooldown_secs: input.cooldownSecs },
      });
    }),

  /** The tenant's latest resets, newest first: who and when. */
  resets: tenantProcedure.input(z.object({ limit: z.int().min(1).max(RESET_LIMIT.max).optional() })).query(async ({ ctx, input }) => {
    return resetEntries(await ctx.store.listBreakerResets(input.limit ?? RESET_LIMIT.default));
  }),

  /** Tenant admins. Resetting a handler without an open breaker is allowed and recorded, as in REST. */
  reset: tenantAdminProcedure
    .input(z.object({ handler: handlerName }))
    .mutation(({ ctx, input }) => reset(ctx.services, ctx.storeForWrite(), input.handler, ctx.user)),
};

export const breakersRouter = router({ ...tenantBreakers, ops: opsRouter });

/** The breakers router as anyone but an operator sees it: no `ops`. */
export const breakersMemberRouter = router(tenantBreakers);
