// The fairness arithmetic on hand-made minutes.
import { describe, expect, it } from "vitest";
import type { MetricRow } from "../../engine/metrics/tenant-metrics.ts";
import { fairness, jainIndex, lagPercentile } from "./fairness.ts";

const minute = (m: number) => new Date(Date.UTC(2026, 10, 29, 12, m));
const row = (tenantId: string, m: number, claimed: number, backlogSamples: number[] = [], lagBuckets: number[] = []): MetricRow => ({
  tenantId, minute: minute(m), claimed, completed: claimed, failed: 0, deferred: {}, lagBuckets, backlogSamples, stepsPeak: 0, stepsWaited: 0, resourceWaits: {},
});

describe("jainIndex", () => {
  it("is 1 for equal shares and 1/n when one takes everything", () => {
    expect(jainIndex([0.5, 0.5, 0.5])).toBe(1);
    expect(jainIndex([1, 0, 0, 0])).toBe(0.25);
    expect(jainIndex([])).toBeNull();
  });
});

describe("lagPercentile", () => {
  it("answers the upper bound of the bucket that reaches the percentile, or 'over the last bound'", () => {
    expect(lagPercentile([50, 49, 1], 0.5)).toEqual({ ms: 10, over: false });
    expect(lagPercentile([50, 49, 1], 0.99)).toEqual({ ms: 50, over: false });
    expect(lagPercentile([...Array(11).fill(0), 3], 0.5)).toEqual({ ms: 60_000, over: true });
    expect(lagPercentile([], 0.5)).toBeNull();
  });
});

describe("fairness", () => {
  it("compares each tenant's share of the claims with its share of the demand, minute by minute", () => {
    const result = fairness([
      // Minute 0: a flood (90 claimed, 1,000 still waiting at the end) beside a quiet tenant served in full.
      row("flood", 0, 90, [800, 1000], [0, 0, 0, 0, 0, 90]),
      row("quiet", 0, 10, [], [10]),
      // Minute 1: both served in full.
      row("flood", 1, 50),
      row("quiet", 1, 50),
    ]);
    expect(result.minutes.map((m) => m.minute)).toEqual([minute(0).toISOString(), minute(1).toISOString()]);
    const [first, second] = result.minutes;
    expect(first!.tenants).toEqual([
      { tenantId: "flood", claimed: 90, backlog: 1000, demand: 1090, claimShare: 0.9, demandShare: 1090 / 1100 },
      { tenantId: "quiet", claimed: 10, backlog: 0, demand: 10, claimShare: 0.1, demandShare: 10 / 1100 },
    ]);
    // Service ratios 90/1090 and 1: unequal, so well below 1.
    expect(first!.jain).toBeCloseTo(jainIndex([90 / 1090, 1])!, 10);
    expect(second!.jain).toBe(1);

    expect(result.tenants.map((t) => t.tenantId)).toEqual(["flood", "quiet"]);
    expect(result.tenants[0]).toMatchObject({ claimed: 140, demand: 1140, backlog: 900, lagP50: { ms: 1_000, over: false } });
    expect(result.tenants[1]).toMatchObject({ claimed: 60, demand: 60, lagP99: { ms: 10, over: false } });
  });
});
