// One tenant's page of the fairness view: its minutes over the range (its own rows only, from the
// backend it is placed on), each against every backend's minute totals for its share, with its
// lag against its objective, its deferrals by reason, its Open breakers and its limits.
import { COUNTED_DEFERRALS, type MetricRow } from "../../engine/metrics/tenant-metrics.ts";
import { spansOfMinutes, type BackendMinute, type TenantStore } from "../../engine/storage/index.ts";
import type { Services } from "../services.ts";
import { fairnessWindow, inBreach, lagPercentile, overObjective, reasonsOf, type FairnessRange, type LagBound } from "./fairness.ts";
import { limitDefaults } from "./tenant-directory.ts";

const CLOCK_SLACK_MS = 2 * 60_000;

export interface TenantFairnessMinute {
  minute: string;
  claimed: number;
  demand: number;
  claimShare: number;
  demandShare: number;
  lagP50: LagBound | null;
  lagP99: LagBound | null;
  /** By counted reason (COUNTED_DEFERRALS), 0 for none. */
  deferred: Record<string, number>;
  stepsWaited: number;
  resourceWaits: Record<string, number>;
}

const share = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);
const leftWaiting = (row: MetricRow) => row.backlogSamples.at(-1) ?? 0;

/** The tenant's minutes against the totals of the same minutes. */
export function tenantMinutes(rows: readonly MetricRow[], totals: readonly BackendMinute[]): TenantFairnessMinute[] {
  const totalAt = new Map(totals.map((t) => [t.minute.getTime(), t]));
  return rows.map((row) => {
    const total = totalAt.get(row.minute.getTime());
    const demand = row.claimed + leftWaiting(row);
    const deferred = Object.fromEntries(COUNTED_DEFERRALS.map((reason) => [reason, row.deferred[reason] ?? 0]));
    return {
      minute: row.minute.toISOString(), claimed: row.claimed, demand,
      claimShare: share(row.claimed, total?.claimed ?? 0), demandShare: share(demand, total?.demand ?? 0),
      lagP50: lagPercentile(row.lagBuckets, 0.5), lagP99: lagPercentile(row.lagBuckets, 0.99),
      deferred, stepsWaited: row.stepsWaited, resourceWaits: row.resourceWaits,
    };
  });
}

/** The drill-down of one tenant (the store routed to where it is placed) over the range. */
export async function tenantFairnessOf(services: Services, store: Pick<TenantStore, "tenantId" | "backendId" | "listOpenBreakers">, range: FairnessRange, now = Date.now()) {
  const { storage, prisma, config } = services;
  const window = fairnessWindow(range, now);
  const readTo = new Date(now + CLOCK_SLACK_MS);
  const [rows, totals, breakers, own] = await Promise.all([
    storage.fairness.minutesOf(store.backendId, store.tenantId, window.from, readTo),
    storage.fairness.backendMinutes(window.from, readTo),
    store.listOpenBreakers(),
    prisma.tenantLimit.findUnique({ where: { tenantId: store.tenantId } }),
  ]);
  const defaults = limitDefaults(config);
  const objectiveMs = own?.lagObjectiveMs ?? defaults.lagObjectiveMs;
  const sum = spansOfMinutes(store.tenantId, rows);
  const allClaimed = totals.reduce((n, t) => n + t.claimed, 0);
  const allDemand = totals.reduce((n, t) => n + t.demand, 0);
  return {
    tenantId: store.tenantId,
    backendId: store.backendId,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    objectiveMs,
    ownObjective: own?.lagObjectiveMs != null,
    summary: {
      claimed: sum.claimed, completed: sum.completed, failed: sum.failed,
      claimShare: share(sum.claimed, allClaimed), demandShare: share(sum.demand, allDemand),
      lagP50: lagPercentile(sum.lagBuckets, 0.5), lagP99: lagPercentile(sum.lagBuckets, 0.99),
      breach: inBreach(sum.lagBuckets, objectiveMs), overObjective: overObjective(sum.lagBuckets, objectiveMs),
      reasons: reasonsOf(sum, breakers.length),
    },
    minutes: tenantMinutes(rows, totals),
    openBreakers: breakers.map((b) => ({ handler: b.handler, failureCount: b.failureCount, openedAt: b.openedAt.toISOString() })),
    limits: {
      own: {
        claimCap: own?.claimCap ?? null, maxConcurrency: own?.maxConcurrency ?? null, maxSteps: own?.maxSteps ?? null,
        outboundPerHost: own?.outboundPerHost ?? null, apiRatePerSec: own?.apiRatePerSec ?? null, lagObjectiveMs: own?.lagObjectiveMs ?? null,
      },
      defaults: {
        claimCap: defaults.claimCap, maxConcurrency: defaults.maxConcurrency, maxSteps: defaults.maxSteps,
        outboundPerHost: defaults.outboundPerHost, apiRatePerSec: defaults.apiRatePerSec, lagObjectiveMs: defaults.lagObjectiveMs,
      },
    },
  };
}
