// Rate limits against a real PostgreSQL: exact sliding windows, shared by separate connections.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { listRateLimitPolicies, removeRateLimitPolicy, setRateLimitPolicy, tryConsumeRateLimit } from "./rate-limits.ts";
import { asTenantId } from "./index.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const T0 = Date.parse("2026-11-30T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms);

async function windowRows(tenantId: string, key: string) {
  const { rows } = await db.sql.query<{ slot: number; window_start: Date }>(
    "SELECT slot, window_start FROM rate_limit_windows WHERE tenant_id = $1 AND key = $2 ORDER BY window_start, slot",
    [tenantId, key],
  );
  return rows;
}

/** `attempts` tries on each of `connections` separate connections, all at once; the times that won. */
async function race(tenantId: string, key: string, connections: number, attempts: number, when: (attempt: number) => Date) {
  const clients = Array.from({ length: connections }, () => new pg.Client({ connectionString: db.url }));
  await Promise.all(clients.map((client) => client.connect()));
  try {
    const won = await Promise.all(
      clients.map(async (client) => {
        const times: number[] = [];
        for (let attempt = 0; attempt < attempts; attempt++) {
          const now = when(attempt);
          if ((await tryConsumeRateLimit(client, asTenantId(tenantId), key, now)).ok) times.push(now.getTime());
        }
        return times;
      }),
    );
    return won.flat().sort((a, b) => a - b);
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

describe("tryConsumeRateLimit", () => {
  it("allows max_count per window, then defers to when the oldest unit leaves the window", async () => {
    await setRateLimitPolicy(db.sql, asTenantId("acme"), "sms", 3, 1000);
    expect(await tryConsumeRateLimit(db.sql, asTenantId("acme"), "sms", at(0))).toEqual({ ok: true });
    expect(await tryConsumeRateLimit(db.sql, asTenantId("acme"), "sms", at(100))).toEqual({ ok: true });
    expect(await tryConsumeRateLimit(db.sql, asTenantId("acme"), "sms", at(200))).toEqual({ ok: true });
    expect(await tryConsumeRateLimit(db.sql, asTenantId("acme"), "sms", at(300))).toEqual({ ok: false, retryAt: at(1000) });
    // A refusal writes nothing: the window is as the three units left it.
    expect((await windowRows("acme", "sms")).map((row) => row.window_start)).toEqual([at(0), at(100), at(200)]);
  });

  it("slides: each unit frees exactly one window after it was taken, not at a fixed boundary", async () => {
    await setRateLimitPolicy(db.sql, asTenantId("acme"), "slide", 2, 1000);
    expect((await tryConsumeRateLimit(db.sql, asTenantId("acme"), "slide", at(0))).ok).toBe(true);
    expect((await tryConsumeRateLimit(db.sql, asTenantId("acme"), "slide", at(600))).ok).toBe(true);
    expect(await tryConsumeRateLimit(db.sql, asTenantId("acme"), "slide", at(999))).toEqual({ ok: false, retryAt: at(1000) });
    expect((await tryConsumeRateLimit(db.sql, asTenantId("acme"), "slide", at(1000))).ok).toBe(true);
    // A fixed window starting at 1000 would allow a second unit here; the sliding one still
    // holds the unit taken at 600.
    expect(await tryConsumeRateLimit(db.sql, asTenantId("acme"), "slide", at(1200))).toEqual({ ok: false, retryAt: at(1600) });
    expect((await tryConsumeRateLimit(db.sql, asTenantId("acme"), "slide", at(1600))).ok).toBe(true);
  });

  it("keeps tenants and keys apart", async () => {
    await setRateLimitPolicy(db.sql, asTenantId("acme"), "email", 1, 60_000);
    await setRateLimitPolicy(db.sql, asTenantId("globex"), "email", 1, 60_000);
    expect((await tryConsumeRateLimit(db.sql, asTenantId("acme"), "email", at(0))).ok).toBe(true);
    expect((await tryConsumeRateLimit(db.sql, asTenantId("acme"), "email", at(1))).ok).toBe(false);
    expect((await tryConsumeRateLimit(db.sql, asTenantId("globex"), "email", at(1))).ok).toBe(true);
    expect((await tryConsumeRateLimit(db.sql, asTenantId("acme"), "other-key", at(1))).ok).toBe(true);
  });

  it("without a policy is unlimited and writes nothing", async () => {
    for (let i = 0; i < 50; i++) expect(await tryConsumeRateLimit(db.sql, asTenantId("initech"), "calls", at(i))).toEqual({ ok: true });
    const { rows } = await db.sql.query("SELECT 1 FROM rate_limit_windows WHERE tenant_id = 'initech'");
    expect(rows).toHaveLength(0);
  });

  it("8 connections x 50 attempts at one instant against 20 per window: exactly 20 succeed", async () => {
    await setRateLimitPolicy(db.sql, asTenantId("acme"), "burst", 20, 60_000);
    const won = await race("acme", "burst", 8, 50, () => at(0));
    expect(won).toHaveLength(20);
    expect((await windowRows("acme", "burst")).every((row) => row.window_start.getTime() === T0)).toBe(true);
  });

  it("concurrent consumers over time never exceed the limit in any window", async () => {
    const max = 5;
    const windowMs = 100;
    await setRateLimitPolicy(db.sql, asTenantId("acme"), "stream", max, windowMs);
    // Time runs 0..490 ms in 10 ms steps on every connection, so each instant is contested.
    const won = await race("acme", "stream", 8, 50, (attempt) => at(attempt * 10));
    for (const start of won) {
      expect(won.filter((t) => t >= start && t < start + windowMs).length).toBeLessThanOrEqual(max);
    }
    // Slots free again as time moves on (the exact count depends on how the connections interleave).
    expect(won.length).toBeGreaterThan(max);
  });
});

describe("rate-limit policies", () => {
  it("lists policies with the units in the current window, and removes them with their slots", async () => {
    await setRateLimitPolicy(db.sql, asTenantId("umbrella"), "a", 2, 1000);
    await setRateLimitPolicy(db.sql, asTenantId("umbrella"), "b", 7, 5000);
    await tryConsumeRateLimit(db.sql, asTenantId("umbrella"), "a", at(0));
    expect(await listRateLimitPolicies(db.sql, asTenantId("umbrella"), at(500))).toEqual([
      { key: "a", maxCount: 2, windowMs: 1000, inWindow: 1 },
      { key: "b", maxCount: 7, windowMs: 5000, inWindow: 0 },
    ]);
    expect(await removeRateLimitPolicy(db.sql, asTenantId("umbrella"), "a")).toBe(true);
    expect(await removeRateLimitPolicy(db.sql, asTenantId("umbrella"), "a")).toBe(false);
    expect(await windowRows("umbrella", "a")).toEqual([]);
    expect(await tryConsumeRateLimit(db.sql, asTenantId("umbrella"), "a", at(1))).toEqual({ ok: true });
  });

  it("shrinking keeps the latest uses, so the new limit holds from the change on", async () => {
    await setRateLimitPolicy(db.sql, asTenantId("umbrella"), "shrink", 4, 1000);
    for (const t of [0, 100, 200, 300]) expect((await tryConsumeRateLimit(db.sql, asTenantId("umbrella"), "shrink", at(t))).ok).toBe(true);
    await setRateLimitPolicy(db.sql, asTenantId("umbrella"), "shrink", 2, 1000);
    expect((await windowRows("umbrella", "shrink")).map((row) => row.window_start)).toEqual([at(200), at(300)]);
    // The next unit frees when the unit of 200 leaves, by then every dropped use has left too.
    expect(await tryConsumeRateLimit(db.sql, asTenantId("umbrella"), "shrink", at(1100))).toEqual({ ok: false, retryAt: at(1200) });

    await setRateLimitPolicy(db.sql, asTenantId("umbrella"), "shrink", 3, 1000);
    expect(await windowRows("umbrella", "shrink")).toHaveLength(3);
    expect((await tryConsumeRateLimit(db.sql, asTenantId("umbrella"), "shrink", at(1100))).ok).toBe(true);
    expect((await tryConsumeRateLimit(db.sql, asTenantId("umbrella"), "shrink", at(1100))).ok).toBe(false);
  });

  it("refuses sizes it cannot hold", async () => {
    await expect(setRateLimitPolicy(db.sql, asTenantId("umbrella"), "x", 0, 1000)).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(setRateLimitPolicy(db.sql, asTenantId("umbrella"), "x", 100_001, 1000)).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(setRateLimitPolicy(db.sql, asTenantId("umbrella"), "x", 5, 0)).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(setRateLimitPolicy(db.sql, asTenantId("umbrella"), "", 5, 10)).rejects.toMatchObject({ code: "invalid_argument" });
  });
});
