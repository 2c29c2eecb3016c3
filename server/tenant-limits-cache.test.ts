// The web process's copy of tenant_limits: read once before the first answer, then again at most
// once a second in the background (requests use the copy meanwhile), at once after invalidate, and
// a failed read keeps the last copy.
import { describe, expect, it } from "vitest";
import type { TenantLimits } from "../engine/storage/index.ts";
import { LIMITS_MAX_AGE_MS, TenantLimitsCache } from "./tenant-limits-cache.ts";

const limits = (apiRatePerSec: number): TenantLimits => ({ claimCap: null, maxConcurrency: null, maxSteps: null, outboundPerHost: null, apiRatePerSec, cronSchedules: null, webhookRatePerSec: null, lagObjectiveMs: null, retentionDays: null });

describe("TenantLimitsCache", () => {
  it("reads before the first answer, refreshes a stale copy in the background, and rereads at once after invalidate", async () => {
    let t = 0;
    let reads = 0;
    let rate = 5;
    let fail = false;
    const errors: unknown[] = [];
    const cache = new TenantLimitsCache(async () => {
      reads++;
      if (fail) throw new Error("database down");
      return new Map([["vip", limits(rate)]]);
    }, (error) => errors.push(error), () => t);

    expect((await cache.of("vip"))?.apiRatePerSec).toBe(5);
    expect(await cache.of("other")).toBeUndefined();
    expect(reads).toBe(1);

    rate = 7;
    t += LIMITS_MAX_AGE_MS - 1;
    expect((await cache.of("vip"))?.apiRatePerSec).toBe(5);
    expect(reads).toBe(1);
    t += 1;
    expect((await cache.of("vip"))?.apiRatePerSec).toBe(5); // stale answer; the refresh has started
    await Promise.resolve();
    await Promise.resolve();
    expect((await cache.of("vip"))?.apiRatePerSec).toBe(7);
    expect(reads).toBe(2);

    rate = 9;
    cache.invalidate();
    expect((await cache.of("vip"))?.apiRatePerSec).toBe(9);

    fail = true;
    cache.invalidate();
    expect((await cache.of("vip"))?.apiRatePerSec).toBe(9);
    expect(errors).toHaveLength(1);
  });
});
