// claimDueInstances against a real PostgreSQL: concurrent claimers never share a row, the
// per-tenant cap serves every tenant with due work, leases are fenced by epoch, and each claim
// comes back with what its run starts from.
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { insertDueInstances, insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { CLAIM_SQL, claimDueInstances } from "./claim.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.sql.query("TRUNCATE task_instances");
});

const claim = (pool: pg.Pool, limit: number, maxPerTenant = 0, leaseOwner = "test") =>
  claimDueInstances(pool, { now: new Date(), limit, maxPerTenant, leaseOwner, leaseMs: 30_000 });

function perTenant(claimed: { tenantId: string }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of claimed) counts.set(c.tenantId, (counts.get(c.tenantId) ?? 0) + 1);
  return counts;
}

describe.each([
  ["cap off", 0],
  ["cap 50", 50],
])("four concurrent claimers (%s)", (_name, cap) => {
  it("claim each of 10,000 due instances of 20 tenants exactly once", async () => {
    for (let t = 0; t < 20; t++) await insertDueInstances(db, `tenant-${t}`, 500);
    const pools = Array.from({ length: 4 }, () => testPool(db.url, 1));
    try {
      const claimedBy = await Promise.all(
        pools.map(async (pool, worker) => {
          const ids: string[] = [];
          for (;;) {
            const batch = await claim(pool, 256, cap, `worker-${worker}`);
            if (batch.length === 0) {
              // Another claimer may hold rows locked right now: only stop once none are scheduled.
              const { rows } = await pool.query("SELECT count(*)::int AS n FROM task_instances WHERE state = 'scheduled'");
              if (rows[0].n === 0) return ids;
              continue;
            }
            ids.push(...batch.map((c) => c.id));
          }
        }),
      );
      const all = claimedBy.flat();
      expect(all).toHaveLength(10_000);
      expect(new Set(all).size).toBe(10_000);
      expect(claimedBy.filter((ids) => ids.length > 0).length).toBeGreaterThan(1);
      const { rows } = await db.sql.query("SELECT state, lease_epoch, count(*)::int AS n FROM task_instances GROUP BY 1, 2");
      expect(rows).toEqual([{ state: "running", lease_epoch: 1, n: 10_000 }]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});

describe("the per-tenant cap", () => {
  it("serves every small tenant even when a flooding tenant's backlog is older", async () => {
    const long_ago = new Date(Date.now() - 3_600_000);
    await insertDueInstances(db, "flood", 10_000, long_ago);
    for (let t = 0; t < 9; t++) await insertDueInstances(db, `small-${t}`, 10);

    const claimed = await claim(db.sql, 100, 10);
    const counts = perTenant(claimed);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(10);
    for (let t = 0; t < 9; t++) expect(counts.get(`small-${t}`)).toBe(10);
    expect(counts.get("flood")).toBe(10);
    expect(claimed).toHaveLength(100);
  });

  it("is off at 0: claim order alone decides, so the older flood takes the whole batch", async () => {
    await insertDueInstances(db, "flood", 1_000, new Date(Date.now() - 3_600_000));
    await insertDueInstances(db, "small", 10);
    const counts = perTenant(await claim(db.sql, 100, 0));
    expect([...counts]).toEqual([["flood", 100]]);
  });

  it("with the cap off the plan has no window aggregate", async () => {
    const { rows } = await db.sql.query(`EXPLAIN ${CLAIM_SQL.plain}`, [new Date(), 10, "x", 1000, [], ["acme"], []]);
    const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
    expect(plan).not.toMatch(/WindowAgg/);
    expect(plan).toMatch(/task_instances_claim_idx/);
  });
});

describe("what is claimed", () => {
  it.each([0, 5])("skips the tenants it is told to (cap %i)", async (cap) => {
    await insertDueInstances(db, "busy", 5);
    await insertDueInstances(db, "idle", 5);
    const claimed = await claimDueInstances(db.sql, {
      now: new Date(), limit: 100, maxPerTenant: cap, leaseOwner: "t", leaseMs: 1000, excludeTenants: ["busy"],
    });
    expect([...perTenant(claimed)]).toEqual([["idle", 5]]);
  });

  it.each([0, 5])("claims only the tenants it is limited to, none when the list is empty (cap %i)", async (cap) => {
    await insertDueInstances(db, "placed-here", 3);
    await insertDueInstances(db, "placed-elsewhere", 3);
    const only = (tenants: string[]) =>
      claimDueInstances(db.sql, { now: new Date(), limit: 100, maxPerTenant: cap, leaseOwner: "t", leaseMs: 1000, onlyTenants: tenants });
    expect(await only([])).toEqual([]);
    expect([...perTenant(await only(["placed-here", "unknown"]))]).toEqual([["placed-here", 3]]);
  });

  it("gives a tenant with a cap of its own that cap, with the default cap off or on", async () => {
    await insertDueInstances(db, "capped", 10);
    await insertDueInstances(db, "vip", 10);
    await insertDueInstances(db, "plain", 10);
    const claim = (maxPerTenant: number) =>
      claimDueInstances(db.sql, { now: new Date(), limit: 100, maxPerTenant, leaseOwner: "t", leaseMs: 1000, capOverrides: [["capped", 2], ["vip", 8]] });
    expect(Object.fromEntries(perTenant(await claim(0)))).toEqual({ capped: 2, vip: 8, plain: 10 });
    await db.sql.query("UPDATE task_instances SET state = 'scheduled'");
    expect(Object.fromEntries(perTenant(await claim(5)))).toEqual({ capped: 2, vip: 8, plain: 5 });
  });

  it("with the cap on, a claim of few slots goes to the tenant least served here, not to a flood's older rows", async () => {
    await insertDueInstances(db, "flood", 100, new Date(Date.now() - 60_000));
    await insertDueInstances(db, "quiet", 1, new Date(Date.now() - 1_000));
    const claimOne = (inFlight: [string, number][]) =>
      claimDueInstances(db.sql, { now: new Date(), limit: 1, maxPerTenant: 8, leaseOwner: "t", leaseMs: 1000, inFlight });
    // The flood holds 31 slots here, the quiet tenant none: its newer row wins the freed slot.
    expect([...perTenant(await claimOne([["flood", 31]]))]).toEqual([["quiet", 1]]);
    // Equally served, the older row wins, as in claim order.
    await insertDueInstances(db, "quiet", 1, new Date(Date.now() - 1_000));
    expect([...perTenant(await claimOne([["flood", 0]]))]).toEqual([["flood", 1]]);
    // Within a tenant, its own rows go in claim order: the rank counts as served.
    const two = await claimDueInstances(db.sql, { now: new Date(), limit: 2, maxPerTenant: 8, leaseOwner: "t", leaseMs: 1000, inFlight: [["flood", 0]] });
    expect(Object.fromEntries(perTenant(two))).toEqual({ flood: 1, quiet: 1 });
  });

  it("with the cap on, takes no more of a tenant than the room it has in this process", async () => {
    await insertDueInstances(db, "flood", 20);
    await insertDueInstances(db, "quiet", 3);
    const claimed = await claimDueInstances(db.sql, {
      now: new Date(), limit: 100, maxPerTenant: 8, leaseOwner: "t", leaseMs: 1000, room: [["flood", 2], ["quiet", 0]],
    });
    // quiet has no room: the scheduler excludes such a tenant, but the claim holds it to 0 too.
    expect(Object.fromEntries(perTenant(claimed))).toEqual({ flood: 2 });
  });

  it("only due, scheduled instances, in priority then due order, with a new lease", async () => {
    await insertDueInstances(db, "a", 3);
    await db.sql.query("UPDATE task_instances SET priority = 3 WHERE next_fire_at = (SELECT max(next_fire_at) FROM task_instances)");
    await insertDueInstances(db, "a", 2, new Date(Date.now() + 60_000)); // not due yet
    await db.sql.query(
      "INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at) VALUES (gen_random_uuid(), 'a', 'default', gen_random_uuid(), 'paused', now() - interval '1 hour')",
    );

    const claimed = await claim(db.sql, 10, 0, "engine-7");
    expect(claimed).toHaveLength(3);
    const { rows } = await db.sql.query(
      "SELECT id, priority, lease_owner, lease_epoch, lease_expires_at > now() AS leased FROM task_instances WHERE state = 'running'",
    );
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.lease_owner === "engine-7" && r.lease_epoch === 1 && r.leased)).toBe(true);
    expect(claimed[0]!.id).toBe(rows.find((r) => r.priority === 3).id);
  });

  it("bumps the lease epoch each time an instance is claimed again", async () => {
    await insertDueInstances(db, "a", 1);
    expect((await claim(db.sql, 1))[0]!.leaseEpoch).toBe(1);
    await db.sql.query("UPDATE task_instances SET state = 'scheduled'");
    expect((await claim(db.sql, 1))[0]!.leaseEpoch).toBe(2);
  });
});

describe("what a claim returns to run with", () => {
  it("each instance's context, facts and its own tenant's sequence; never another tenant's", async () => {
    const blocks = [{ type: "step", id: "s", handler: "noop" }];
    const own = await insertSequence(db, "acme", blocks, "own");
    const foreign = await insertSequence(db, "globex", blocks, "theirs");
    const mine = (await insertInstancesOf(db, "acme", own, 1, { data: { order: "A-1" }, config: null }))[0]!;
    // A sequence_id naming another tenant's sequence (forged, or left by a bug) reads as missing.
    const forged = (await insertInstancesOf(db, "acme", foreign, 1))[0]!;
    await db.sql.query("INSERT INTO signals (id, tenant_id, instance_id, signal_type) VALUES (gen_random_uuid(), 'acme', $1, 'pause')", [mine]);

    const claimed = await claim(db.sql, 10);
    const byId = new Map(claimed.map((c) => [c.id, c.row]));
    expect(byId.get(mine)).toMatchObject({
      id: mine, tenantId: "acme", sequenceId: own, context: { data: { order: "A-1" }, config: null }, cursor: null, timezone: "UTC", hasSignals: true,
      definition: { id: own, name: "own", blocks }, facts: { startedAt: null, currentStep: null, attempt: 0, stepsExecuted: 0, failure: null },
    });
    expect(byId.get(forged)).toMatchObject({ id: forged, sequenceId: foreign, definition: null, hasSignals: false });
  });

  it("leaves out the definitions of sequences the claimer names as known, its own tenant's only", async () => {
    const blocks = [{ type: "step", id: "s", handler: "noop" }];
    const own = await insertSequence(db, "acme", blocks, "known-one");
    const other = await insertSequence(db, "acme", blocks, "unknown-one");
    const foreign = await insertSequence(db, "globex", blocks, "theirs-known");
    const known = (await insertInstancesOf(db, "acme", own, 1))[0]!;
    const unknown = (await insertInstancesOf(db, "acme", other, 1))[0]!;
    // Known as globex's: an acme instance naming that id still gets no definition of globex's.
    const forged = (await insertInstancesOf(db, "acme", foreign, 1))[0]!;
    const claimed = await claimDueInstances(db.sql, {
      now: new Date(), limit: 10, maxPerTenant: 0, leaseOwner: "t", leaseMs: 30_000, knownSequences: [`acme ${own}`, `globex ${foreign}`],
    });
    const definitions = new Map(claimed.map((c) => [c.id, (c.row.definition as { name?: string } | null)?.name ?? null]));
    expect(Object.fromEntries([known, unknown, forged].map((id) => [id, definitions.get(id)]))).toEqual({ [known]: null, [unknown]: "unknown-one", [forged]: null });
    // The capped path reads the same list.
    await db.sql.query("UPDATE task_instances SET state = 'scheduled', lease_owner = NULL, lease_expires_at = NULL");
    const capped = await claimDueInstances(db.sql, {
      now: new Date(), limit: 10, maxPerTenant: 5, leaseOwner: "t", leaseMs: 30_000, knownSequences: [`acme ${own}`],
    });
    expect(new Map(capped.map((c) => [c.id, c.row.definition === null])).get(known)).toBe(true);
    expect(new Map(capped.map((c) => [c.id, c.row.definition === null])).get(unknown)).toBe(false);
  });
});
