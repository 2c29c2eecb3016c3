// The operator console's Resources page: the resource ledger (every resource tenants share, with
// its boundary and where it is enforced); for the step slots, which tenants use the most of theirs
// right now; the API callers refused for their request rate lately; and the tenants that waited
// for another bounded resource; and the finished instances waiting for the retention pruner. Operators only; anyone else is told the procedures do not exist.
import { LEDGER } from "../../../engine/resources/ledger.ts";
import type { Services } from "../../services.ts";
import { throttledLastMinute, type PrincipalKind } from "../../request-rate.ts";
import { operatorProcedure, router } from "../trpc.ts";

const MINUTE_MS = 60_000;
/** The usage window: the current minute of tenant_metrics and the one before it. */
export const USAGE_WINDOW_MINUTES = 2;
/** Tenants shown on the step-slots card, the busiest first (and per resource on the waits card). */
export const USAGE_TOP_TENANTS = 20;
/** The throttled callers' window: the audit log's `api.throttled` rows of the last 10 minutes. */
export const THROTTLED_WINDOW_MINUTES = 10;
/** Callers shown on the throttled card, the most recently throttled first. */
export const THROTTLED_TOP_CALLERS = 20;
/**
 * The newest `api.throttled` rows read first (one per caller, tenant and minute, per web process):
 * enough to find the 20 most recent callers; their counts are read again when it was not all.
 */
const THROTTLED_SCAN_ROWS = 1_000;
/** The resources whose waits the engines count in tenant_metrics.resource_waits, in the page's order. */
export const WAITED_RESOURCES = ["db_connections", "outbound_per_host", "event_fan_out"] as const;

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

/** One caller refused for its request rate in the window (the audit log's rows of it and its tenant). */
export interface ThrottledCaller {
  /** The tenant its requests acted for; null: an operator key (or user) acting for no tenant. */
  tenantId: string | null;
  /** The audit log's actor: the user's email or the API key's prefix. */
  actor: string;
  kind: PrincipalKind | null;
  /** Clock minutes in the window with a refusal (its audit rows, one per minute and web process). */
  minutes: number;
  /** The latest row's time: its first refusal of that minute. */
  lastThrottledAt: string;
  /** The rate and burst it was held to, from the latest row. */
  ratePerSec: number | null;
  burst: number | null;
  /** Requests this web process refused it in the current minute; null: none here. */
  refusedThisMinute: number | null;
}

/** A tenant that waited for a bounded resource in the window. */
export interface ResourceWait {
  /** The ledger id (db_connections, outbound_per_host, event_fan_out). */
  resourceId: string;
  /** The ledger row's resource, in words. */
  resource: string;
  tenantId: string;
  /** Its waits for the resource, over the window (every engine process's). */
  waits: number;
  /** The bound it waited at, in words: the ledger's default, or the tenant's own value. */
  limit: string;
  /** The tenant's own value, where it has one (outbound per host). */
  ownLimit: number | null;
  /** Waiting means it hit the bound. */
  atLimit: boolean;
}

/** The usage window of tenant_metrics: the current minute and the one before it. */
function usageWindow(): { from: Date; to: Date } {
  const now = Date.now();
  const currentMinute = now - (now % MINUTE_MS);
  return {
    from: new Date(currentMinute - (USAGE_WINDOW_MINUTES - 1) * MINUTE_MS),
    // To the end of the current minute: an engine whose clock runs a little ahead may have started the next one.
    to: new Date(currentMinute + 2 * MINUTE_MS),
  };
}

const callerKey = (tenantId: string | null, actor: string) => `${tenantId ?? ""}\u0000${actor}`;

function detailsOf(details: unknown): { kind: PrincipalKind | null; ratePerSec: number | null; burst: number | null } {
  const d = (details !== null && typeof details === "object" && !Array.isArray(details) ? details : {}) as Record<string, unknown>;
  const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : null);
  return {
    kind: d.principal === "api_key" || d.principal === "user" ? d.principal : null,
    ratePerSec: num(d.rate_per_sec),
    burst: num(d.burst),
  };
}

/**
 * The callers refused for their request rate in the last 10 minutes, most recently throttled
 * first, the top 20: from the audit log (every web process writes there), with this process's
 * refusals of the current minute where it has some.
 */
async function throttledCallers(services: Services) {
  const { prisma } = services;
  const from = new Date(Date.now() - THROTTLED_WINDOW_MINUTES * MINUTE_MS);
  const where = { action: "api.throttled", at: { gte: from } };
  // Newest first along the index on `at`.
  const rows = await prisma.auditLog.findMany({
    where, orderBy: [{ at: "desc" }, { id: "desc" }], take: THROTTLED_SCAN_ROWS, select: { tenantId: true, actor: true, at: true, details: true },
  });

  type Group = { tenantId: string | null; actor: string; latest: (typeof rows)[number]; minutes: Set<number> };
  const groups = new Map<string, Group>();
  for (const row of rows) {
    const key = callerKey(row.tenantId, row.actor);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { tenantId: row.tenantId, actor: row.actor, latest: row, minutes: new Set() }));
    group.minutes.add(Math.floor(row.at.getTime() / MINUTE_MS));
  }
  const top = [...groups.values()].slice(0, THROTTLED_TOP_CALLERS);
  const complete = rows.length < THROTTLED_SCAN_ROWS;
  if (!complete && top.length > 0) {
    // The scan stopped short of the window's start: the shown callers' minutes, all of them.
    const theirs = await prisma.auditLog.findMany({
      where: { ...where, OR: top.map((g) => ({ tenantId: g.tenantId, actor: g.actor })) }, select: { tenantId: true, actor: true, at: true },
    });
    for (const row of theirs) groups.get(callerKey(row.tenantId, row.actor))?.minutes.add(Math.floor(row.at.getTime() / MINUTE_MS));
  }

  const refused = new Map<string, number>();
  for (const t of throttledLastMinute(services)) {
    if (t.principal.name === null) continue;
    const key = callerKey(t.tenantId, t.principal.name);
    refused.set(key, (refused.get(key) ?? 0) + t.refused);
  }

  const callers: ThrottledCaller[] = top.map((g) => {
    const { kind, ratePerSec, burst } = detailsOf(g.latest.details);
    return {
      tenantId: g.tenantId, actor: g.actor, kind, minutes: g.minutes.size, lastThrottledAt: g.latest.at.toISOString(),
      ratePerSec, burst, refusedThisMinute: refused.get(callerKey(g.tenantId, g.actor)) ?? null,
    };
  });
  return {
    from: from.toISOString(),
    windowMinutes: THROTTLED_WINDOW_MINUTES,
    /** Callers throttled in the window (at least this many when `complete` is false; the list shows at most 20). */
    throttledCallers: groups.size,
    complete,
    callers,
  };
}

/**
 * Per waited resource (in the ledger's words), the tenants that waited for it in the usage
 * window, most waits first, the top 20 of each; each with the bound it waited at.
 */
async function resourceWaits(services: Services) {
  const { storage, prisma } = services;
  const { from, to } = usageWindow();
  const rows = await storage.metricsOfEveryTenant(from, to);

  const byResource = new Map<string, Map<string, number>>();
  for (const row of rows) {
    for (const [resourceId, n] of Object.entries(row.resourceWaits ?? {})) {
      if (!(typeof n === "number" && n > 0)) continue;
      let tenants = byResource.get(resourceId);
      if (!tenants) byResource.set(resourceId, (tenants = new Map()));
      tenants.set(row.tenantId, (tenants.get(row.tenantId) ?? 0) + n);
    }
  }
  // The known resources in the page's order, any other the engine counts after them.
  const order = (id: string) => {
    const i = (WAITED_RESOURCES as readonly string[]).indexOf(id);
    return i === -1 ? WAITED_RESOURCES.length : i;
  };
  const resourceIds = [...byResource.keys()].sort((a, b) => order(a) - order(b) || (a < b ? -1 : a > b ? 1 : 0));
  const tops = resourceIds.map((resourceId) => {
    const top = [...byResource.get(resourceId)!]
      .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, USAGE_TOP_TENANTS);
    return { resourceId, top };
  });

  const outbound = tops.find((r) => r.resourceId === "outbound_per_host")?.top.map(([tenantId]) => tenantId) ?? [];
  const own = outbound.length === 0
    ? []
    : await prisma.tenantLimit.findMany({ where: { tenantId: { in: outbound }, outboundPerHost: { not: null } }, select: { tenantId: true, outboundPerHost: true } });
  const ownOutbound = new Map(own.map((l) => [l.tenantId, l.outboundPerHost]));

  const waits: ResourceWait[] = tops.flatMap(({ resourceId, top }) => {
    const entry = LEDGER.find((e) => e.id === resourceId);
    return top.map(([tenantId, n]) => {
      const mine = resourceId === "outbound_per_host" ? (ownOutbound.get(tenantId) ?? null) : null;
      return {
        resourceId, resource: entry?.resource ?? resourceId, tenantId, waits: n,
        limit: mine !== null ? `${mine.toLocaleString("en-US")} open at once (its own)` : (entry?.default ?? "—"),
        ownLimit: mine, atLimit: n > 0,
      };
    });
  });
  return {
    from: from.toISOString(),
    windowMinutes: USAGE_WINDOW_MINUTES,
    /** Per resource with waits, the tenants that waited (each shows at most the top 20). */
    resources: resourceIds.map((resourceId) => ({
      resourceId, resource: LEDGER.find((e) => e.id === resourceId)?.resource ?? resourceId, waitingTenants: byResource.get(resourceId)!.size,
    })),
    waits,
  };
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
    const { from, to } = usageWindow();
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

  /**
   * Who got 429s: the callers refused for their request rate in the last 10 minutes (the audit
   * log's `api.throttled` rows, one per caller, tenant and minute), most recently first, the top
   * 20, with the rate they were held to and this web process's refusals of the current minute.
   */
  throttled: operatorProcedure.query(({ ctx }) => throttledCallers(ctx.services)),

  /**
   * The tenants that waited for a connection, an outbound slot or their event minute in the last
   * two minutes of tenant_metrics, per resource the top 20 by waits, each at its limit.
   */
  waits: operatorProcedure.query(({ ctx }) => resourceWaits(ctx.services)),

  /**
   * Retention: per tenant, the finished instances past its retention that the pruner counted
   * last (at most its count cap) and how many it has pruned, the most pending first, the top 20.
   */
  retention: operatorProcedure.query(async ({ ctx }) => {
    const { config, storage, prisma } = ctx.services;
    const rows = await storage.retentionOfEveryTenant(USAGE_TOP_TENANTS);
    const own = rows.length === 0
      ? []
      : await prisma.tenantLimit.findMany({ where: { tenantId: { in: rows.map((r) => r.tenantId) } }, select: { tenantId: true, retentionDays: true } });
    const days = new Map(own.map((l) => [l.tenantId, l.retentionDays]));
    return {
      defaultDays: config.BULKHEAD_RETENTION_DAYS,
      tenants: rows.map((r) => ({
        tenantId: r.tenantId, retentionDays: days.get(r.tenantId) ?? null, pending: r.pending, pendingCapped: r.pendingCapped,
        prunedTotal: r.prunedTotal, countedAt: r.countedAt.toISOString(), lastPrunedAt: r.lastPrunedAt?.toISOString() ?? null,
      })),
    };
  }),
});
