// Leases and fencing: a claimer that lost its lease can neither renew nor release, and the reaper
// hands abandoned instances to the next claimer with a new epoch.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertDueInstances } from "../../test/factories.ts";
import { claimDueInstances } from "./claim.ts";
import { reapExpiredLeases, releaseLeases, renewLease } from "./leases.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.sql.query("TRUNCATE task_instances");
});

const claimOne = async (leaseMs = 30_000, now = new Date()) =>
  (await claimDueInstances(db.sql, { now, limit: 1, maxPerTenant: 0, leaseOwner: "t", leaseMs }))[0]!;

describe("leases", () => {
  it("renew and release only under the current epoch", async () => {
    await insertDueInstances(db, "a", 1);
    const claimed = await claimOne();
    expect(await renewLease(db.sql, claimed.id, claimed.leaseEpoch + 1, new Date(Date.now() + 60_000))).toBe(false);
    expect(await renewLease(db.sql, claimed.id, claimed.leaseEpoch, new Date(Date.now() + 60_000))).toBe(true);
    const lease = (epoch: number) => [{ id: claimed.id, leaseEpoch: epoch }];
    expect(await releaseLeases(db.sql, lease(claimed.leaseEpoch - 1), new Date())).toEqual(new Set());
    expect(await releaseLeases(db.sql, lease(claimed.leaseEpoch), new Date(Date.now() + 5_000), "rate_limit")).toEqual(new Set([claimed.id]));
    const { rows } = await db.sql.query("SELECT state, defer_reason, lease_owner FROM task_instances");
    expect(rows).toEqual([{ state: "scheduled", defer_reason: "rate_limit", lease_owner: null }]);
  });

  it("an expired lease is reaped, reclaimed with a new epoch, and the old holder is fenced out", async () => {
    await insertDueInstances(db, "a", 3, new Date(Date.now() - 600_000));
    const past = new Date(Date.now() - 120_000);
    const stale = await claimDueInstances(db.sql, { now: past, limit: 3, maxPerTenant: 0, leaseOwner: "dead", leaseMs: 1_000 });
    // Claimed two minutes ago with a one-second lease: all expired by now.
    expect(await reapExpiredLeases(db.sql, new Date(), 100)).toBe(3);
    const fresh = await claimDueInstances(db.sql, { now: new Date(), limit: 3, maxPerTenant: 0, leaseOwner: "alive", leaseMs: 30_000 });
    expect(fresh.map((c) => c.leaseEpoch)).toEqual([2, 2, 2]);

    for (const old of stale) expect(await renewLease(db.sql, old.id, old.leaseEpoch, new Date(Date.now() + 60_000))).toBe(false);
    // One statement for several, each fenced by its own epoch.
    expect(await releaseLeases(db.sql, [...stale, fresh[0]!], new Date())).toEqual(new Set([fresh[0]!.id]));
    const { rows } = await db.sql.query("SELECT state, lease_owner, id = $1 AS released FROM task_instances ORDER BY released, id", [fresh[0]!.id]);
    expect(rows).toEqual([
      { state: "running", lease_owner: "alive", released: false },
      { state: "running", lease_owner: "alive", released: false },
      { state: "scheduled", lease_owner: null, released: true },
    ]);
  });

  it("the reaper leaves live leases alone and sweeps in bounded batches", async () => {
    await insertDueInstances(db, "a", 5, new Date(Date.now() - 600_000));
    await claimDueInstances(db.sql, { now: new Date(Date.now() - 120_000), limit: 4, maxPerTenant: 0, leaseOwner: "dead", leaseMs: 1_000 });
    await claimOne(30_000);
    expect(await reapExpiredLeases(db.sql, new Date(), 3)).toBe(3);
    expect(await reapExpiredLeases(db.sql, new Date(), 3)).toBe(1);
    expect(await reapExpiredLeases(db.sql, new Date(), 3)).toBe(0);
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE state = 'running'");
    expect(rows[0].n).toBe(1);
  });
});
