// The request-rate token buckets with a fake clock: refill, Retry-After, eviction of idle buckets,
// the cap, and the per-minute refusal counts. The REST and tRPC entries are in request-rate.int.test.ts.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../engine/config.ts";
import { RequestRate, TokenBuckets } from "./request-rate.ts";

function clock(start = Date.UTC(2026, 0, 1, 12, 0, 0)) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe("TokenBuckets", () => {
  it("lets a burst through, refuses the next with the whole seconds to wait, and refills at the rate", () => {
    const c = clock();
    const buckets = new TokenBuckets({ ratePerSec: 1, burst: 3, now: c.now });
    expect([1, 2, 3].map(() => buckets.take("a"))).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    expect(buckets.take("a")).toEqual({ ok: false, retryAfterSecs: 1 });
    c.t += 999;
    expect(buckets.take("a")).toEqual({ ok: false, retryAfterSecs: 1 });
    c.t += 1;
    expect(buckets.take("a")).toEqual({ ok: true });
    expect(buckets.take("a").ok).toBe(false);
    // Another key is another bucket.
    expect(buckets.take("b")).toEqual({ ok: true });
  });

  // With whole-number rates (the settings) a refused bucket waits for at most one token: 1 s or less.
  it("rounds the wait up to whole seconds, and never says less than 1", () => {
    const c = clock();
    const slow = new TokenBuckets({ ratePerSec: 1, burst: 1, now: c.now });
    slow.take("a");
    c.t += 100;
    expect(slow.take("a")).toEqual({ ok: false, retryAfterSecs: 1 });
    const fast = new TokenBuckets({ ratePerSec: 50, burst: 1, now: c.now });
    fast.take("a");
    expect(fast.take("a")).toEqual({ ok: false, retryAfterSecs: 1 });
  });

  it("never holds more than the burst, however long a bucket is left alone", () => {
    const c = clock();
    const buckets = new TokenBuckets({ ratePerSec: 10, burst: 2, now: c.now });
    buckets.take("a");
    c.t += 3_600_000;
    expect([1, 2, 3].map(() => buckets.take("a").ok)).toEqual([true, true, false]);
  });

  it("drops buckets idle long enough to have refilled, and keeps the others", () => {
    const c = clock();
    // Refill from empty: 4 tokens at 2/s, 2 s.
    const buckets = new TokenBuckets({ ratePerSec: 2, burst: 4, now: c.now });
    for (let i = 0; i < 100; i++) for (let n = 0; n < 4; n++) buckets.take(`idle-${i}`);
    c.t += 1000;
    for (let n = 0; n < 4; n++) buckets.take("busy");
    expect(buckets.size).toBe(101);
    c.t += 1000; // the idle ones have refilled; "busy" has not (1 s of 2)
    buckets.take("other");
    expect(buckets.size).toBe(2);
    // What was dropped was full: it starts again full.
    expect([1, 2, 3, 4, 5].map(() => buckets.take("idle-0").ok)).toEqual([true, true, true, true, false]);
  });

  it("holds at most maxBuckets, dropping the least recently used", () => {
    const c = clock();
    const buckets = new TokenBuckets({ ratePerSec: 1, burst: 2, now: c.now, maxBuckets: 3 });
    buckets.take("a");
    buckets.take("a");
    buckets.take("b");
    buckets.take("c");
    buckets.take("a"); // refused, but used: b is now the least recently used
    buckets.take("d");
    expect(buckets.size).toBe(3);
    expect(buckets.take("a").ok).toBe(false); // a was kept, still empty
    for (let i = 0; i < 1000; i++) buckets.take(`k-${i}`);
    expect(buckets.size).toBe(3);
  });
});

describe("RequestRate", () => {
  const user = (id: string) => ({ kind: "user" as const, id });

  it("counts refusals per (principal, tenant) in the current minute, marking the first of each minute", () => {
    const c = clock();
    const rate = new RequestRate({ ratePerSec: 1, burst: 1, now: c.now });
    expect(rate.take(user("u1"), "acme")).toBeNull();
    const refusals = [1, 2, 3].map(() => rate.take(user("u1"), "acme"));
    expect(refusals.map((r) => r?.first)).toEqual([true, false, false]);
    expect(rate.take(user("u1"), null)).toBeNull(); // the user's own bucket
    expect(rate.take(user("u1"), null)?.first).toBe(true);
    expect(rate.take(user("u2"), "acme")).toBeNull();
    expect(rate.throttledLastMinute()).toEqual([
      { tenantId: "acme", principal: { kind: "user", id: "u1", name: null }, refused: 3 },
      { tenantId: null, principal: { kind: "user", id: "u1", name: null }, refused: 1 },
    ]);
    c.t += 60_000;
    expect(rate.throttledLastMinute()).toEqual([]);
    rate.take(user("u1"), "acme");
    expect(rate.take(user("u1"), "acme")?.first).toBe(true);
    expect(rate.throttledLastMinute()).toEqual([{ tenantId: "acme", principal: { kind: "user", id: "u1", name: null }, refused: 1 }]);
  });

  it("keeps an API key's buckets apart from a user's with the same id", () => {
    const rate = new RequestRate({ ratePerSec: 1, burst: 1, now: clock().now });
    expect(rate.take({ kind: "api_key", id: "x" }, "acme")).toBeNull();
    expect(rate.take({ kind: "user", id: "x" }, "acme")).toBeNull();
  });
});

describe("configuration", () => {
  const base = { DATABASE_URL: "postgresql://u:p@localhost:5432/db" };
  it("defaults to 50 requests/s with a burst of 200", () => {
    expect(loadConfig(base)).toMatchObject({ BULKHEAD_API_RATE_PER_SEC: 50, BULKHEAD_API_BURST: 200 });
    expect(loadConfig({ ...base, BULKHEAD_API_RATE_PER_SEC: "1", BULKHEAD_API_BURST: "3" })).toMatchObject({ BULKHEAD_API_RATE_PER_SEC: 1, BULKHEAD_API_BURST: 3 });
  });
  it.each([
    ["BULKHEAD_API_RATE_PER_SEC", "0"], ["BULKHEAD_API_RATE_PER_SEC", "1.5"], ["BULKHEAD_API_RATE_PER_SEC", "many"],
    ["BULKHEAD_API_BURST", "0"], ["BULKHEAD_API_BURST", "-3"],
  ])("rejects %s=%s", (name, value) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(name);
  });
});
