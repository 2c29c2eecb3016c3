// Circuit breakers for the web app: a tenant's breakers page (members read, admins reset) and the
// operator's all-tenants view. State is read from the rows engines share (see
// server/rest/handlers/breakers.ts): only Open breakers are visible outside an engine, so a
// closed breaker's failure count is not shown anywhere here.
import { z } from "zod";
import type { BreakerReset, OpenBreakerRow, TenantStore } from "../../../engine/storage/index.ts";
import { recordAudit } from "../../control/audit.ts";
import { breakerStatus } from "../../rest/handlers/breakers.ts";
import type { Services } from "../../services.ts";
import { operatorProcedure, router, tenantAdminProcedure, tenantProcedure } from "../trpc.ts";

const RESET_LIMIT = { default: 20, max: 100 };

/** Handler names are free text on the wire (not trimmed: " x" is another handler); this only bounds a form's input. */
const handlerName = z.string().min(1).max(256);

function listed(services: Services, rows: readonly OpenBreakerRow[]) {
  const now = Date.now();
  return rows.map((row) => {
    const status = breakerStatus(row, services.config, now);
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

/** Operators: every tenant, optionally those whose id contains `tenant`. */
const opsRouter = router({
  list: operatorProcedure
    .input(z.object({ tenant: z.string().trim().max(64).optional() }).optional())
    .query(async ({ ctx, input }) => {
      const filter = input?.tenant?.toLowerCase() ?? "";
      const { open, resets } = await ctx.services.storage.breakersOfEveryTenant({ resets: RESET_LIMIT.max });
      const mine = (row: { tenantId: string }) => row.tenantId.includes(filter);
      return {
        ...settings(ctx.services),
        breakers: listed(ctx.services, open.filter(mine)),
        resets: resetEntries(resets.filter(mine).slice(0, RESET_LIMIT.default)),
      };
    }),

  reset: operatorProcedure
    .input(z.object({ tenantId: z.string().max(64), handler: handlerName }))
    .mutation(async ({ ctx, input }) => {
      // A tenant that does not exist is NOT_FOUND, from the partition router.
      const store = await ctx.services.storage.tenant(input.tenantId);
      return reset(ctx.services, store, input.handler, ctx.user);
    }),
});

export const breakersRouter = router({
  /** The tenant's Open and half-open breakers. */
  list: tenantProcedure.query(async ({ ctx }) => {
    const store = await ctx.services.storage.tenant(ctx.tenant.id);
    return { ...settings(ctx.services), breakers: listed(ctx.services, await store.listOpenBreakers()) };
  }),

  /** The tenant's latest resets, newest first: who and when. */
  resets: tenantProcedure.input(z.object({ limit: z.int().min(1).max(RESET_LIMIT.max).optional() })).query(async ({ ctx, input }) => {
    const store = await ctx.services.storage.tenant(ctx.tenant.id);
    return resetEntries(await store.listBreakerResets(input.limit ?? RESET_LIMIT.default));
  }),

  /** Tenant admins. Resetting a handler without an open breaker is allowed and recorded, as in REST. */
  reset: tenantAdminProcedure.input(z.object({ handler: handlerName })).mutation(async ({ ctx, input }) => {
    const store = await ctx.services.storage.tenant(ctx.tenant.id);
    return reset(ctx.services, store, input.handler, ctx.user);
  }),

  ops: opsRouter,
});
