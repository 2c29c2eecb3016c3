// The operator console's Resources page: the resource ledger (every resource tenants share, with
// its boundary and where it is enforced) and, for the step slots, which tenants use the most of
// theirs right now. Operators only; anyone else is told the procedures do not exist.
import { LEDGER } from "../../../engine/resources/ledger.ts";
import { operatorProcedure, router } from "../trpc.ts";

const MINUTE_MS = 60_000;
/** The usage window: the current minute of tenant_metrics and the one before it. */
export const USAGE_WINDOW_MINUTES = 2;
/** Tenants shown on the step-slots card, the busiest first. */
export const USAGE_TOP_TENANTS = 20;

export interface StepSlotUse {
  tenantId: string;
  /** The tenant's step limit per engine process: its own (`ownLimit`) or the engine default. */
  limit: number;
  /** The tenant's own step limit (tenant_limits.max_steps); null: the engine default. */
  ownLimit: number | null;
  /** The most steps it held at once in one engine process, over the window. */
  peak: number;
  /** Its steps that had to wait for a slot, over the window. */
  waited: number;
  atLimit: boolean;
}

export const resourcesRouter = router({
  /** The ledger's rows, as the README's table shows them. */
  ledger: operatorProcedure.query(() => LEDGER.map((entry) => ({ ...entry }))),

  /**
   * The step slots now: per tenant that ran steps in the last two minutes of tenant_metrics, its
   * peak and waited steps and its limit, busiest (highest peak) first, the top 20; and the engine
   * defaults. One metrics read and one read of the shown tenants' own limits.
   */
  usage: operatorProcedure.query(async ({ ctx }) => {
    const { config, storage, prisma } = ctx.services;
    const now = Date.now();
    const currentMinute = now - (now % MINUTE_MS);
    const from = new Date(currentMinute - (USAGE_WINDOW_MINUTES - 1) * MINUTE_MS);
    // To the end of the current minute: an engine whose clock runs a little ahead may have started the next one.
    const to = new Date(currentMinute + 2 * MINUTE_MS);
    const rows = await storage.metricsOfEveryTenant(from, to);

    const byTenant = new Map<string, { peak: number; waited: number }>();
    for (const row of rows) {
      if (row.stepsPeak === 0 && row.stepsWaited === 0) continue;
      const use = byTenant.get(row.tenantId) ?? { peak: 0, waited: 0 };
      use.peak = Math.max(use.peak, row.stepsPeak);
      use.waited += row.stepsWaited;
      byTenant.set(row.tenantId, use);
    }
    const top = [...byTenant]
      .sort(([a, x], [b, y]) => y.peak - x.peak || y.waited - x.waited || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, USAGE_TOP_TENANTS);
    const own = top.length === 0
      ? []
      : await prisma.tenantLimit.findMany({ where: { tenantId: { in: top.map(([tenantId]) => tenantId) } }, select: { tenantId: true, maxSteps: true } });
    const ownLimit = new Map(own.map((l) => [l.tenantId, l.maxSteps]));

    const defaultLimit = config.BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT;
    const tenants: StepSlotUse[] = top.map(([tenantId, use]) => {
      const mine = ownLimit.get(tenantId) ?? null;
      const limit = mine ?? defaultLimit;
      return { tenantId, limit, ownLimit: mine, peak: use.peak, waited: use.waited, atLimit: use.peak >= limit };
    });
    return {
      from: from.toISOString(),
      windowMinutes: USAGE_WINDOW_MINUTES,
      /** Tenants that ran steps in the window (the list shows at most the top 20 of them). */
      activeTenants: byTenant.size,
      tenants,
      defaults: {
        maxStepsPerTenant: defaultLimit,
        maxSteps: config.BULKHEAD_MAX_CONCURRENT_STEPS,
        maxInstancesInFlightPerTenant: config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT,
        maxInstancesInFlight: config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT,
        claimCap: config.BULKHEAD_MAX_INSTANCES_PER_TENANT,
      },
    };
  }),
});
