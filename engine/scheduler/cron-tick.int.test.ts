// The cron tick on a real PostgreSQL, its clock driven by the test: each overlap policy, the
// instance a fire creates, exactly once across three engine processes, and fairness.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../logger.ts";
import { ANY_CRON_DUE } from "../storage/cron-schedules.ts";
import { asTenantId, StorageBackends, type NewCronSchedule, type OverlapPolicy } from "../storage/index.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeTenant } from "../../test/factories.ts";
import { explainAnalyze, scansOf } from "../../test/explain.ts";
import { countStatements } from "../../test/statement-counts.ts";
import { CronTick, nextCronFire } from "./cron-tick.ts";

let db: TestDatabase;
const log = createLogger("cron-test", "silent");
const BLOCKS = [{ type: "step", id: "one", handler: "noop" }];
/** A fixed moment to drive the clock from (a whole minute). */
const BASE = new Date("2026-12-05T10:00:00.000Z");
const at = (seconds: number) => new Date(BASE.getTime() + seconds * 1000);

beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());
// Each test's schedules stop when it ends, so a later test's clock fires only its own.
afterEach(async () => {
  await db.sql.query("UPDATE cron_schedules SET enabled = false");
});

async function tenantWithSequence() {
  const tenant = await makeTenant(db);
  return { tenantId: tenant.id, sequenceId: await insertSequence(db, tenant.id, BLOCKS) };
}

/** A schedule due first at `firstDue` (default: BASE). */
async function schedule(
  owner: { tenantId: string; sequenceId: string }, fields: Partial<NewCronSchedule> & { firstDue?: Date } = {},
) {
  const store = await db.storage.tenant(owner.tenantId);
  const { firstDue, ...rest } = fields;
  return store.insertCronSchedule({
    namespace: "default", sequenceId: owner.sequenceId, cronExpr: "* * * * * *", timezone: "UTC", enabled: true,
    metadata: null, overlapPolicy: "allow", nextFireAt: firstDue ?? BASE, ...rest,
  }, 100_000);
}

const tick = (limits = {}) => new CronTick({ backend: db.storage.backends.primary, log, limits });

async function instancesOf(scheduleId: string) {
  const { rows } = await db.sql.query<{ id: string; state: string; idempotency_key: string; metadata: unknown; timezone: string; priority: number; context: unknown; next_fire_at: Date }>(
    "SELECT id, state, idempotency_key, metadata, timezone, priority, context, next_fire_at FROM task_instances WHERE idempotency_key LIKE $1 ORDER BY idempotency_key",
    [`cron:${scheduleId}:%`],
  );
  return rows;
}

async function row(id: string) {
  return (await db.sql.query("SELECT * FROM cron_schedules WHERE id = $1", [id])).rows[0];
}

describe("a fire", () => {
  it("creates one scheduled instance due now, stamped with the schedule, and advances past now without catching up", async () => {
    const owner = await tenantWithSequence();
    const created = await schedule(owner, { cronExpr: "0 * * * * *", timezone: "America/New_York", metadata: { team: "ops" } });
    // 150 s late: two more occurrences were missed, and are not caught up.
    const result = await tick().tick(at(150));
    expect(result.fired).toHaveLength(1);
    const [instance] = await instancesOf(created.id);
    expect(instance).toMatchObject({
      state: "scheduled", idempotency_key: `cron:${created.id}:2026-12-05T10:00:00Z`, timezone: "America/New_York", priority: 1,
      metadata: { team: "ops", cron_schedule_id: created.id }, context: { data: null, config: null, audit: [] },
    });
    const after = await row(created.id);
    expect(after.next_fire_at).toEqual(at(180));
    expect(after.last_triggered_at).toEqual(at(150));
    // Nothing is due until then.
    expect((await tick().tick(at(179))).fired).toHaveLength(0);
    expect((await tick().tick(at(180))).fired).toHaveLength(1);
  });

  it("stamps null metadata as {cron_schedule_id} and passes metadata that is not an object through unstamped", async () => {
    const owner = await tenantWithSequence();
    const bare = await schedule(owner);
    const listed = await schedule(owner, { metadata: ["a", "b"] });
    await tick().tick(at(0.5));
    expect((await instancesOf(bare.id))[0]!.metadata).toEqual({ cron_schedule_id: bare.id });
    expect((await instancesOf(listed.id))[0]!.metadata).toEqual(["a", "b"]);
  });

  it("never fires a disabled schedule", async () => {
    const owner = await tenantWithSequence();
    const off = await schedule(owner, { enabled: false });
    await tick().tick(at(10));
    expect(await instancesOf(off.id)).toHaveLength(0);
  });

  it("logs a failed create (the sequence vanished) and still advances", async () => {
    const owner = await tenantWithSequence();
    const orphan = await schedule(owner);
    await db.sql.query("DELETE FROM sequences WHERE id = $1", [owner.sequenceId]);
    const result = await tick().tick(at(0.5));
    expect(result.failed).toBe(1);
    expect(await instancesOf(orphan.id)).toHaveLength(0);
    expect((await row(orphan.id)).next_fire_at).toEqual(at(1));
  });

  it("is a no-op for an occurrence that already has its instance (same idempotency key)", async () => {
    const owner = await tenantWithSequence();
    const s = await schedule(owner);
    await tick().tick(at(0.5));
    // Put the schedule back on the same occurrence, as a crashed claimer's would be.
    await db.sql.query("UPDATE cron_schedules SET next_fire_at = $2 WHERE id = $1", [s.id, BASE]);
    await tick().tick(at(0.6));
    expect(await instancesOf(s.id)).toHaveLength(1);
  });
});

describe("overlap policies", () => {
  /** A schedule with one fired run still active (scheduled), and the tick at the next occurrence. */
  async function withActiveRun(policy: OverlapPolicy) {
    const owner = await tenantWithSequence();
    const s = await schedule(owner, { overlapPolicy: policy });
    await tick().tick(at(0.5));
    const [first] = await instancesOf(s.id);
    return { s, first: first!, second: await tick().tick(at(1.5)) };
  }

  it("allow fires anyway", async () => {
    const { s, second } = await withActiveRun("allow");
    expect(second.fired).toHaveLength(1);
    expect(await instancesOf(s.id)).toHaveLength(2);
  });

  it("skip does not fire, counts the skip and advances", async () => {
    const { s, second } = await withActiveRun("skip");
    expect(second.skipped).toBe(1);
    expect(await instancesOf(s.id)).toHaveLength(1);
    const after = await row(s.id);
    expect(after).toMatchObject({ skipped_fires: 1, last_skipped_at: at(1.5), next_fire_at: at(2) });
  });

  it("buffer_one re-arms 5 s later until the previous run is done, then fires once for the missed occurrences", async () => {
    const { s, first, second } = await withActiveRun("buffer_one");
    expect(second.rearmed).toBe(1);
    expect((await row(s.id)).next_fire_at).toEqual(at(6.5));
    expect((await tick().tick(at(6.5))).rearmed).toBe(1);
    await db.sql.query("UPDATE task_instances SET state = 'completed' WHERE id = $1", [first.id]);
    const fired = await tick().tick(at(11.5));
    expect(fired.fired).toHaveLength(1);
    expect(fired.fired[0]!.dueAt).toEqual(at(11.5));
    expect(await instancesOf(s.id)).toHaveLength(2);
    expect((await row(s.id)).next_fire_at).toEqual(at(12));
  });

  it("cancel_previous sends cancel to the active runs, then fires", async () => {
    const { s, first, second } = await withActiveRun("cancel_previous");
    expect(second.fired).toHaveLength(1);
    const { rows: signals } = await db.sql.query("SELECT signal_type FROM signals WHERE instance_id = $1", [first.id]);
    expect(signals).toEqual([{ signal_type: "cancel" }]);
    expect(await instancesOf(s.id)).toHaveLength(2);
  });

  it("counts only this schedule's runs in active states", async () => {
    const owner = await tenantWithSequence();
    const s = await schedule(owner, { overlapPolicy: "skip" });
    const other = await schedule(owner, { overlapPolicy: "allow" });
    await tick().tick(at(0.5));
    // The other schedule's run is active, this one's is done: this one fires.
    await db.sql.query("UPDATE task_instances SET state = 'failed' WHERE idempotency_key LIKE $1", [`cron:${s.id}:%`]);
    expect((await tick().tick(at(1.5))).skipped).toBe(0);
    expect(await instancesOf(s.id)).toHaveLength(2);
    expect(await instancesOf(other.id)).toHaveLength(2);
  });
});

describe("exactly once", () => {
  it("three engine processes ticking together over 60 occurrences of per-second schedules: 0 duplicates, 0 missed", async () => {
    const owner = await tenantWithSequence();
    const schedules = await Promise.all([0, 1, 2, 3, 4].map(() => schedule(owner, { firstDue: at(1000) })));
    // Each process has its own pools, as separate engines do.
    const engines = [0, 1, 2].map(() => new StorageBackends(db.config.backends, { poolSize: 4 }));
    try {
      const ticks = engines.map((backends) => new CronTick({ backend: backends.primary, log }));
      let fires = 0;
      for (let second = 0; second < 60; second += 1) {
        const results = await Promise.all(ticks.map((t) => t.tick(at(1000 + second + 0.25))));
        fires += results.reduce((sum, r) => sum + r.fired.length, 0);
      }
      // Every claim created its instance: none was a repeat the idempotency key had to absorb.
      expect(fires).toBe(5 * 60);
      for (const s of schedules) {
        const keys = (await instancesOf(s.id)).map((i) => i.idempotency_key);
        const expected = Array.from({ length: 60 }, (_, n) => `cron:${s.id}:${at(1000 + n).toISOString().replace(".000Z", "Z")}`);
        expect(keys).toEqual(expected);
      }
    } finally {
      await Promise.all(engines.map((backends) => backends.close()));
    }
  });
});

describe("fairness", () => {
  it("10,000 schedules of one tenant due together: another tenant's single schedule fires in the first tick", async () => {
    const noisy = await tenantWithSequence();
    const quiet = await tenantWithSequence();
    // The noisy tenant's are due earlier than the quiet one's: a FIFO claim would take 10,000 first.
    await db.sql.query(
      `INSERT INTO cron_schedules (id, tenant_id, namespace, sequence_id, cron_expr, timezone, next_fire_at)
       SELECT gen_random_uuid(), $1, 'default', $2, '* * * * * *', 'UTC', $3 FROM generate_series(1, 10000)`,
      [noisy.tenantId, noisy.sequenceId, at(2000)],
    );
    const lone = await schedule(quiet, { firstDue: at(2000.5) });
    const result = await tick().tick(at(2001));
    expect(result.fired.filter((f) => f.scheduleId === lone.id)).toHaveLength(1);
    // The noisy tenant got its fire rate for the tick, no more.
    expect(result.fired.filter((f) => f.tenantId === noisy.tenantId)).toHaveLength(100);
    // ...and the rest stay due for the next ticks.
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM cron_schedules WHERE tenant_id = $1 AND next_fire_at <= $2", [noisy.tenantId, at(2000)]);
    expect(rows[0].n).toBe(9_900);
  });

  it("fires only for the tenants placed here and not being moved", async () => {
    const owner = await tenantWithSequence();
    const s = await schedule(owner, { firstDue: at(4000) });
    const elsewhere = new CronTick({ backend: db.storage.backends.primary, log, tenants: { claimable: () => ["someone-else"] } });
    expect((await elsewhere.tick(at(4000.5))).fired.some((f) => f.scheduleId === s.id)).toBe(false);
    const here = new CronTick({ backend: db.storage.backends.primary, log, tenants: { claimable: () => [owner.tenantId] } });
    expect((await here.tick(at(4000.5))).fired.map((f) => f.scheduleId)).toEqual([s.id]);
  });
});

describe("storage", () => {
  it("deleting a sequence deletes its schedules", async () => {
    const owner = await tenantWithSequence();
    const s = await schedule(owner, { enabled: false });
    const store = await db.storage.tenant(owner.tenantId);
    expect(await store.deleteSequence(owner.sequenceId)).toEqual({ deleted: true });
    expect(await store.getCronSchedule(s.id)).toBeNull();
  });

  it("recomputes next_fire_at from now on every update, enabled or not", async () => {
    const owner = await tenantWithSequence();
    const s = await schedule(owner, { cronExpr: "0 0 * * * *" });
    const store = await db.storage.tenant(owner.tenantId);
    const updated = await store.updateCronSchedule(s.id, { enabled: false, metadata: { x: 1 } }, nextCronFire, at(5000));
    expect(updated).toMatchObject({ enabled: false, metadata: { x: 1 }, nextFireAt: new Date("2026-12-05T12:00:00.000Z") });
    const zoned = await store.updateCronSchedule(s.id, { timezone: "Asia/Kolkata" }, nextCronFire, at(5000));
    expect(zoned!.nextFireAt).toEqual(new Date("2026-12-05T11:30:00.000Z"));
    expect(await store.updateCronSchedule(crypto.randomUUID(), {}, nextCronFire, at(5000))).toBeNull();
  });

  it("refuses a schedule of another tenant's sequence as a missing one, and past the tenant's limit", async () => {
    const owner = await tenantWithSequence();
    const other = await tenantWithSequence();
    const store = await db.storage.tenant(owner.tenantId);
    const fields = { namespace: "default", cronExpr: "* * * * *", timezone: "UTC", enabled: true, metadata: null, overlapPolicy: "allow" as const, nextFireAt: null };
    await expect(store.insertCronSchedule({ ...fields, sequenceId: other.sequenceId }, 10)).rejects.toThrow(`sequence ${other.sequenceId}`);
    await store.insertCronSchedule({ ...fields, sequenceId: owner.sequenceId }, 1);
    await expect(store.insertCronSchedule({ ...fields, sequenceId: owner.sequenceId }, 1)).rejects.toMatchObject({ code: "conflict" });
    expect(await store.countCronSchedules()).toBe(1);
    expect(asTenantId(owner.tenantId)).toBe(store.tenantId);
  });
});

describe("an idle tick", () => {
  it("with every schedule due later, asks one index probe and runs no claim; once one is due, it fires", async () => {
    const owners = [];
    for (let i = 0; i < 5; i++) owners.push(await tenantWithSequence());
    for (const owner of owners) await schedule(owner, { cronExpr: "0 0 * * * *", firstDue: at(3_600) });
    // And 2,000 more, due in the days after, so the planner sees a table worth an index.
    await db.sql.query(
      `INSERT INTO cron_schedules (id, tenant_id, namespace, sequence_id, cron_expr, timezone, enabled, overlap_policy, next_fire_at, created_at, updated_at)
       SELECT gen_random_uuid(), c.tenant_id, c.namespace, c.sequence_id, c.cron_expr, c.timezone, true, c.overlap_policy, c.next_fire_at + i * interval '1 hour', now(), now()
         FROM cron_schedules c CROSS JOIN generate_series(1, 400) i WHERE c.enabled`,
    );
    await db.sql.query("ANALYZE cron_schedules");
    const backends = new StorageBackends(db.config.backends, { poolSize: 2 });
    try {
      const counts = countStatements(backends.primary.pool);
      const idle = new CronTick({ backend: backends.primary, log, limits: {} });
      expect((await idle.tick(at(0))).fired).toEqual([]);
      expect({ probes: counts.get("any_cron_due"), claims: counts.get("claim_due_cron_schedules") ?? 0 }).toEqual({ probes: 1, claims: 0 });
      const probe = await explainAnalyze(db.sql, ANY_CRON_DUE, [at(0)]);
      expect(scansOf(probe, "cron_schedules").map((scan) => scan["Index Name"])).toEqual(["cron_schedules_next_fire_idx"]);

      const fired = await idle.tick(at(3_600));
      expect(fired.fired.map((f) => f.tenantId).sort()).toEqual(owners.map((o) => o.tenantId).sort());
      expect(counts.get("claim_due_cron_schedules")).toBeGreaterThanOrEqual(1);
    } finally {
      await backends.close();
    }
  });
});
