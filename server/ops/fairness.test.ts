// The fairness page's figures on hand-made rollups: Jain's index and lag percentiles, the
// objective rule (the p99's bucket past the objective), the ledger's reasons, the largest share,
// which tenants are listed, and the top tenants' series with the rest summed as "others".
import { describe, expect, it } from "vitest";
import type { BackendMinute, PlacedTenant, TenantMinuteLine } from "../../engine/storage/index.ts";
import {
  chooseTenants, fairnessWindow, inBreach, jainIndex, jainOfSums, lagPercentile, largestShare, objectiveBucket, overObjective, reasonsOf, seriesMinutes,
} from "./fairness.ts";

/** A histogram: `n` claims in the bucket whose upper bound is `ms` (60_001: past the last). */
const lag = (...counts: [ms: number, n: number][]) => {
  const bounds = [10, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 60_001];
  const buckets = new Array<number>(12).fill(0);
  for (const [ms, n] of counts) buckets[bounds.indexOf(ms)]! += n;
  return buckets;
};

describe("jainIndex and lagPercentile", () => {
  it("is 1 for equal shares and 1/n when one takes everything; from sums the same, null without demand", () => {
    expect(jainIndex([0.5, 0.5, 0.5])).toBe(1);
    expect(jainIndex([1, 0, 0, 0])).toBe(0.25);
    expect(jainIndex([])).toBeNull();
    expect(jainOfSums(4, 1, 1)).toBe(0.25);
    expect(jainOfSums(0, 0, 0)).toBeNull();
    // Sums kept by deltas may round a hair past 1.
    expect(jainOfSums(3, 3.0000000001, 3)).toBe(1);
  });

  it("answers the upper bound of the bucket that reaches the percentile, or 'over the last bound'", () => {
    expect(lagPercentile([50, 49, 1], 0.5)).toEqual({ ms: 10, over: false });
    expect(lagPercentile([50, 49, 1], 0.99)).toEqual({ ms: 50, over: false });
    expect(lagPercentile([...Array(11).fill(0), 3], 0.5)).toEqual({ ms: 60_000, over: true });
    expect(lagPercentile([], 0.5)).toBeNull();
  });
});

describe("the lag objective", () => {
  it("is breached when the p99's bucket lies past it, whatever the tenant's share", () => {
    expect(objectiveBucket(1_000)).toBe(6);
    expect(objectiveBucket(1_500)).toBe(6);
    expect(objectiveBucket(5)).toBe(0);
    // 99 of 100 within 1 s: the p99 is ≤ 1 s, on the objective.
    expect(inBreach(lag([100, 99], [2_500, 1]), 1_000)).toBe(false);
    // 2 of 100 slower: the p99 is ≤ 2.5 s, over 1 s but not over an objective of 2.5 s.
    expect(inBreach(lag([100, 98], [2_500, 2]), 1_000)).toBe(true);
    expect(lagPercentile(lag([100, 98], [2_500, 2]), 0.99)).toEqual({ ms: 2_500, over: false });
    expect(inBreach(lag([100, 98], [2_500, 2]), 2_500)).toBe(false);
    // An objective between two bounds: the bucket ≤ 2.5 s is past 1.5 s.
    expect(inBreach(lag([100, 98], [2_500, 2]), 1_500)).toBe(true);
    expect(inBreach([], 1_000)).toBe(false);
    expect(overObjective(lag([100, 90], [5_000, 10]), 1_000)).toBeCloseTo(0.1, 10);
  });
});

describe("reasonsOf", () => {
  it("names the ledger's resources, largest count first, with the Open breakers now ahead of them", () => {
    const reasons = reasonsOf({ deferred: { breaker: 3, rate_limit: 40, budget: 0, cap: 7 }, stepsWaited: 120, resourceWaits: { db_connections: 5, worker_queue: 0 } }, 2);
    expect(reasons.map((r) => [r.key, r.ledgerId, r.label, r.count])).toEqual([
      ["open_breakers", "handler_failures", "handler failures", 2],
      ["step_slots", "step_slots", "step slots", 120],
      ["rate_limit", "rate_limits_budgets", "rate limits and budgets", 40],
      ["cap", "instances_in_flight", "instances in flight", 7],
      ["db_connections", "db_connections", "database connections", 5],
      ["breaker", "handler_failures", "handler failures", 3],
    ]);
    // The full words are the ledger's own.
    expect(reasons[1]!.resource).toBe("step slots (handler calls and worker dispatches, fan-out included), per engine process");
    expect(reasons[1]!.what).toBe("steps waited for a step slot");
    expect(reasonsOf({ deferred: {}, stepsWaited: 0, resourceWaits: {} })).toEqual([]);
  });
});

const placed = (tenantId: string, claimed: number, buckets: number[] = lag([10, claimed])): PlacedTenant =>
  ({ tenantId, backendId: "primary", claimed, demand: claimed, lagBuckets: buckets });

describe("which tenants are listed", () => {
  it("puts those over their objective first, worst first, then the most claims, each once", () => {
    const objectives = { defaultMs: 1_000, own: new Map([["strict", 100]]) };
    const hog = placed("hog", 800);
    const slow = placed("slow", 50, lag([10, 40], [5_000, 10]));
    const slower = placed("slower", 20, lag([10, 10], [30_000, 10]));
    // Its own 100 ms objective: ≤ 250 ms is over it.
    const strict = placed("strict", 30, lag([250, 30]));
    const chosen = chooseTenants({ top: [hog, slow, placed("small", 5), strict], breached: [slow, strict, slower] }, objectives, { top: 3, breaches: 10 });
    expect(chosen.breached.map((t) => t.tenantId)).toEqual(["strict", "slower", "slow"]);
    expect(chosen.top.map((t) => t.tenantId)).toEqual(["hog", "slow", "strict"]);
    expect(chosen.listed.map((t) => t.tenantId)).toEqual(["strict", "slower", "slow", "hog"]);
  });

  it("reports the largest tenant's share of all claims: 80% even when Jain's index reads 1", () => {
    expect(largestShare([placed("b", 150), placed("a", 800), placed("c", 50)], 1_000)).toEqual({ tenantId: "a", claimShare: 0.8 });
    expect(largestShare([], 0)).toBeNull();
    // Everyone served in full (service ratio 1 each): Jain's index is 1 all the same.
    expect(jainIndex([800 / 800, 150 / 150, 50 / 50])).toBe(1);
  });
});

describe("seriesMinutes", () => {
  it("draws the top tenants on their own and sums the rest as others from the backend totals", () => {
    const at = (m: number) => new Date(Date.UTC(2026, 10, 30, 12, m));
    const totals: BackendMinute[] = [
      { minute: at(0), claimed: 100, demand: 200, backlog: 100, servedTenants: 3, servedSum: 1.5, servedSquares: 1 },
      { minute: at(1), claimed: 10, demand: 10, backlog: 0, servedTenants: 2, servedSum: 2, servedSquares: 2 },
    ];
    const lines: TenantMinuteLine[] = [
      { tenantId: "a", minute: at(0), claimed: 60, leftWaiting: 90 },
      { tenantId: "b", minute: at(0), claimed: 30, leftWaiting: 0 },
      { tenantId: "b", minute: at(1), claimed: 4, leftWaiting: 0 },
    ];
    const { series, minutes } = seriesMinutes(["a", "b"], 40, lines, totals);
    expect(series).toEqual([
      { key: "s0", tenantId: "a", name: "a" },
      { key: "s1", tenantId: "b", name: "b" },
      { key: "others", tenantId: null, name: "others (40)" },
    ]);
    expect(minutes[0]).toEqual({
      minute: at(0).toISOString(), jain: 1.5 ** 2 / 3, claimed: 100, demand: 200,
      series: {
        s0: { claimShare: 0.6, demandShare: 150 / 200, backlog: 90 },
        s1: { claimShare: 0.3, demandShare: 30 / 200, backlog: 0 },
        others: { claimShare: 0.1, demandShare: 20 / 200, backlog: 10 },
      },
    });
    // A minute without the first tenant: it reads 0, the others get the rest.
    expect(minutes[1]!.series).toEqual({
      s0: { claimShare: 0, demandShare: 0, backlog: 0 },
      s1: { claimShare: 0.4, demandShare: 0.4, backlog: 0 },
      others: { claimShare: 0.6, demandShare: 0.6, backlog: 0 },
    });
    expect(minutes[1]!.jain).toBe(1);
  });

  it("reads the hour as its 60 minutes, and whole spans beyond: 5 minutes for 15, hourly for 6 and 24 hours", () => {
    const now = Date.UTC(2026, 10, 30, 12, 3, 30);
    expect(fairnessWindow("1h", now)).toEqual({ span: 1, from: new Date(Date.UTC(2026, 10, 30, 11, 4)), to: new Date(now) });
    expect(fairnessWindow("15m", now)).toMatchObject({ span: 5, from: new Date(Date.UTC(2026, 10, 30, 11, 45)) });
    expect(fairnessWindow("24h", now)).toMatchObject({ span: 60, from: new Date(Date.UTC(2026, 10, 29, 12, 0)) });
  });
});
