// The in-memory side of tenant metrics: bucket bounds, minutes, draining and restoring.
import { describe, expect, it } from "vitest";
import { LAG_BUCKETS_MS, lagBucket, TenantMetrics } from "./tenant-metrics.ts";

describe("lagBucket", () => {
  it("puts a lag in the first bucket whose bound it does not exceed, and anything over a minute in the last", () => {
    expect([0, 10, 11, 50, 2_500, 2_501, 60_000, 60_001, 3_600_000].map(lagBucket)).toEqual([0, 0, 1, 1, 6, 7, 10, 11, 11]);
    expect(LAG_BUCKETS_MS).toHaveLength(11);
  });
});

describe("TenantMetrics", () => {
  const at = Date.UTC(2026, 10, 29, 12, 0, 30);

  it("counts per tenant and minute, ignores deferrals that are the workflow's own, and starts over after drain", () => {
    const metrics = new TenantMetrics();
    metrics.claimed("a", 5, at);
    metrics.claimed("a", 70_000, at + 40_000); // the next minute
    metrics.ended("a", "completed", at);
    metrics.deferred("a", "breaker", at);
    metrics.deferred("a", "delay", at);
    metrics.backlog("b", 7, at);
    metrics.step("b", 3, false, at);
    metrics.step("b", 5, true, at);
    metrics.step("b", 2, true, at);
    metrics.waited("b", "outbound_per_host", at);
    metrics.waited("b", "outbound_per_host", at);
    const rows = metrics.drain();
    expect(rows).toEqual([
      { tenantId: "a", minute: new Date(Date.UTC(2026, 10, 29, 12, 0)), claimed: 1, completed: 1, failed: 0, deferred: { breaker: 1 }, lagBuckets: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], backlogSamples: [], stepsPeak: 0, stepsWaited: 0, resourceWaits: {} },
      {
        tenantId: "b", minute: new Date(Date.UTC(2026, 10, 29, 12, 0)), claimed: 0, completed: 0, failed: 0, deferred: {}, lagBuckets: Array(12).fill(0), backlogSamples: [7],
        stepsPeak: 5, stepsWaited: 2, resourceWaits: { outbound_per_host: 2 },
      },
      { tenantId: "a", minute: new Date(Date.UTC(2026, 10, 29, 12, 1)), claimed: 1, completed: 0, failed: 0, deferred: {}, lagBuckets: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], backlogSamples: [], stepsPeak: 0, stepsWaited: 0, resourceWaits: {} },
    ]);
    expect(metrics.drain()).toEqual([]);
  });

  it("tells which tenants were active in a minute, for the backlog's zero samples", () => {
    const metrics = new TenantMetrics();
    metrics.claimed("a", 5, at);
    metrics.ended("b", "completed", at + 60_000);
    expect(metrics.tenantsInMinute(at)).toEqual(["a"]);
    expect(metrics.tenantsInMinute(at + 60_000)).toEqual(["b"]);
    expect(metrics.tenantsInMinute(at + 120_000)).toEqual([]);
  });

  it("adds restored rows to what was counted since, so a failed write loses nothing", () => {
    const metrics = new TenantMetrics();
    metrics.claimed("a", 5, at);
    const rows = metrics.drain();
    metrics.claimed("a", 5, at);
    metrics.restore(rows);
    expect(metrics.drain()).toMatchObject([{ tenantId: "a", claimed: 2, lagBuckets: [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] }]);
  });
});
