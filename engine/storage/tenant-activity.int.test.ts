// The console's per-tenant hour (tenant_activity_hour): after the engine's writes of minutes (new
// and added to), as minutes leave the hour before and after a row is moved on, with writers and
// advances racing, and after a move's copy, it reads exactly what summing the hour's minutes
// gives (sumTenantActivity, the statement it replaces), from one row per tenant.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainAnalyze, rowsRead, scansOf } from "../../test/explain.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import { LAG_BUCKETS_MS, type MetricRow } from "../metrics/tenant-metrics.ts";
import { asTenantId } from "./ids.ts";
import { sumTenantActivity, writeTenantMetrics } from "./metrics.ts";
import { activityWindowFrom, advanceTenantActivity, READ_TENANT_ACTIVITY, readTenantActivity } from "./tenant-activity.ts";
import { copyTenantRows } from "./tenant-rows.ts";

let db: TestDatabase;
let other: TestDatabase;
beforeAll(async () => {
  [db, other] = await Promise.all([freshDatabase(), freshDatabase()]);
});
afterAll(() => Promise.all([db.drop(), other.drop()]));

const MINUTE = 60_000;
const minuteOf = (t: number) => new Date(t - (t % MINUTE));

function minute(tenantId: string, at: number, claimed: number, lagBucket = 0): MetricRow {
  const lagBuckets = new Array<number>(LAG_BUCKETS_MS.length + 1).fill(0);
  lagBuckets[lagBucket] = claimed;
  return {
    tenantId, minute: minuteOf(at), claimed, completed: claimed, failed: 0, deferred: {}, lagBuckets, backlogSamples: [1],
    stepsPeak: 1, stepsWaited: 0, resourceWaits: {},
  };
}

/** Both readings of the hour from `from`, by tenant, for these tenants only. */
async function bothReadings(on: TestDatabase, tenants: readonly string[], from: Date) {
  const pick = (rows: { tenantId: string; claimed: number; lagBuckets: number[] }[]) =>
    Object.fromEntries(rows.filter((r) => tenants.includes(r.tenantId) && (r.claimed > 0 || r.lagBuckets.some((n) => n > 0)))
      .map((r) => [r.tenantId, { claimed: r.claimed, lagBuckets: r.lagBuckets }]));
  const to = new Date(Date.now() + 3 * 60 * MINUTE);
  return { kept: pick(await readTenantActivity(on.sql, from)), summed: pick(await sumTenantActivity(on.sql, from, to)) };
}

/**
 * Now, at least 5 s before the minute turns: the trigger takes the hour's first minute from the
 * database's clock at the write, so a minute turning between this reading and the writes would
 * move the hour's edge under a test that writes at the edge.
 */
async function nowAwayFromMinuteEdge(): Promise<number> {
  const left = MINUTE - (Date.now() % MINUTE);
  if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
  return Date.now();
}

async function expectSameHour(on: TestDatabase, tenants: readonly string[], from: Date) {
  const { kept, summed } = await bothReadings(on, tenants, from);
  expect(kept).toEqual(summed);
  return kept;
}

describe("tenant_activity_hour", () => {
  it("reads what summing the hour's minutes gives, written new and added to, edges of the hour included", async () => {
    const [a, b, c] = [(await makeTenant(db)).id, (await makeTenant(db)).id, (await makeTenant(db)).id];
    const now = await nowAwayFromMinuteEdge();
    const from = activityWindowFrom(now);
    await writeTenantMetrics(db.sql, [
      minute(a, from.getTime() - MINUTE, 50), // left the hour
      minute(a, from.getTime(), 7, 3), // its first minute
      minute(a, now - 30 * MINUTE, 5),
      minute(a, now, 2),
      minute(b, from.getTime() - 5 * MINUTE, 9), // only before the hour: no figure
      minute(c, now, 4, 8),
    ]);
    // The same minutes again, as a second engine adds to them.
    await writeTenantMetrics(db.sql, [minute(a, now, 3, 1), minute(c, now, 1, 8)]);
    const hour = await expectSameHour(db, [a, b, c], from);
    expect(Object.keys(hour).sort()).toEqual([a, c].sort());
    expect(hour[a]!.claimed).toBe(17);
    expect(hour[c]!.lagBuckets[8]).toBe(5);
  });

  it("takes out the minutes that left the hour, before the row is moved on and after", async () => {
    const tenant = (await makeTenant(db)).id;
    const now = await nowAwayFromMinuteEdge();
    const from = activityWindowFrom(now);
    await writeTenantMetrics(db.sql, [
      minute(tenant, from.getTime(), 10, 2), minute(tenant, from.getTime() + 10 * MINUTE, 20, 4), minute(tenant, now, 1),
    ]);
    // Read 11 minutes later: the first two minutes have left the hour.
    const later = now + 11 * MINUTE;
    const laterFrom = activityWindowFrom(later);
    expect((await expectSameHour(db, [tenant], laterFrom))[tenant]!.claimed).toBe(1);
    expect(await advanceTenantActivity(db.sql, new Date(later))).toBeGreaterThanOrEqual(1);
    const { rows } = await db.sql.query("SELECT window_from FROM tenant_activity_hour WHERE tenant_id = $1", [tenant]);
    expect(rows[0].window_from).toEqual(laterFrom);
    expect((await expectSameHour(db, [tenant], laterFrom))[tenant]!.claimed).toBe(1);
    // Moved on across an hour of the clock, the row is summed again from its minutes.
    const muchLater = now + 75 * MINUTE;
    await writeTenantMetrics(db.sql, [minute(tenant, now + 74 * MINUTE, 6, 7)]);
    await advanceTenantActivity(db.sql, new Date(muchLater));
    const muchLaterFrom = activityWindowFrom(muchLater);
    expect((await db.sql.query("SELECT window_from FROM tenant_activity_hour WHERE tenant_id = $1", [tenant])).rows[0].window_from).toEqual(muchLaterFrom);
    expect((await expectSameHour(db, [tenant], muchLaterFrom))[tenant]!.claimed).toBe(6);
    await advanceTenantActivity(db.sql, new Date(later));
    // Moved on, the row is read as it is: no minute is read.
    const plan = await explainAnalyze(db.sql, READ_TENANT_ACTIVITY, [muchLaterFrom]);
    expect(rowsRead(scansOf(plan, "tenant_metrics"))).toBe(0);
  });

  it("takes out only the minutes that left the hour when it moves a row on within an hour of the clock", async () => {
    const tenant = (await makeTenant(db)).id;
    // A row as it stood when its hour began on a whole hour H of the clock: every minute from H on.
    const hour = Math.floor(activityWindowFrom(Date.now()).getTime() / (60 * MINUTE)) * 60 * MINUTE;
    await db.sql.query(
      `INSERT INTO tenant_metrics (tenant_id, minute, claimed, lag_buckets)
       SELECT $1, $2::timestamptz + m * interval '1 minute', 10 + m, ARRAY[m, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] FROM generate_series(0, 12) m`,
      [tenant, new Date(hour)],
    );
    const { summed } = await bothReadings(db, [tenant], new Date(hour));
    await db.sql.query(
      "INSERT INTO tenant_activity_hour (tenant_id, window_from, claimed, lag_buckets) VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id) DO UPDATE SET window_from = $2, claimed = $3, lag_buckets = $4",
      [tenant, new Date(hour), summed[tenant]!.claimed, summed[tenant]!.lagBuckets],
    );
    // Five minutes later in the same hour of the clock: H to H + 4 have left.
    const at = hour + 64 * MINUTE;
    expect(await advanceTenantActivity(db.sql, new Date(at))).toBeGreaterThanOrEqual(1);
    const moved = (await expectSameHour(db, [tenant], activityWindowFrom(at)))[tenant]!;
    expect(moved.claimed).toBe([15, 16, 17, 18, 19, 20, 21, 22].reduce((a, b) => a + b, 0));
    expect(moved.lagBuckets[1]).toBe(8);
  });

  it("drops a row whose hour has emptied when it moves it on, and the next minute written makes it again", async () => {
    const [idle, busy] = [(await makeTenant(db)).id, (await makeTenant(db)).id];
    const now = await nowAwayFromMinuteEdge();
    const from = activityWindowFrom(now);
    // Both were active two hours ago only (written past the triggers, which count the hour's minutes).
    const old = new Date(from.getTime() - 60 * MINUTE);
    for (const tenant of [idle, busy]) {
      await db.sql.query("INSERT INTO tenant_metrics (tenant_id, minute, claimed, lag_buckets) VALUES ($1, $2, 4, ARRAY[4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])", [tenant, old]);
      await db.sql.query("INSERT INTO tenant_activity_hour (tenant_id, window_from, claimed, lag_buckets) VALUES ($1, $2, 4, ARRAY[4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])", [tenant, old]);
    }
    await writeTenantMetrics(db.sql, [minute(busy, now, 2, 1)]);
    expect(await advanceTenantActivity(db.sql, new Date(now))).toBeGreaterThanOrEqual(2);
    const kept = async () => (await db.sql.query<{ tenant_id: string }>("SELECT tenant_id FROM tenant_activity_hour WHERE tenant_id = ANY($1)", [[idle, busy]])).rows.map((r) => r.tenant_id);
    expect(await kept()).toEqual([busy]);
    expect(await expectSameHour(db, [idle, busy], from)).toEqual({ [busy]: { claimed: 2, lagBuckets: [0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] } });
    // Gone, a minute later's move leaves it gone.
    await advanceTenantActivity(db.sql, new Date(now + MINUTE));
    expect(await kept()).toEqual([busy]);

    await writeTenantMetrics(db.sql, [minute(idle, now, 3, 5)]);
    expect((await kept()).sort()).toEqual([idle, busy].sort());
    expect((await expectSameHour(db, [idle], from))[idle]).toEqual({ claimed: 3, lagBuckets: [0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0] });
  });

  it("keeps a minute whose write waited on a row that the move then dropped", async () => {
    const tenant = (await makeTenant(db)).id;
    const now = await nowAwayFromMinuteEdge();
    await db.sql.query("INSERT INTO tenant_activity_hour (tenant_id, window_from, claimed, lag_buckets) VALUES ($1, $2, 0, '{}')", [tenant, activityWindowFrom(now)]);
    // The move's transaction holds the row (as its first statement locks it) and drops it.
    const mover = await db.sql.connect();
    try {
      await mover.query("BEGIN");
      await mover.query("SELECT 1 FROM tenant_activity_hour WHERE tenant_id = $1 FOR UPDATE", [tenant]);
      const write = writeTenantMetrics(db.sql, [minute(tenant, now, 5)]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await mover.query("DELETE FROM tenant_activity_hour WHERE tenant_id = $1", [tenant]);
      await mover.query("COMMIT");
      await write;
    } finally {
      mover.release();
    }
    expect((await expectSameHour(db, [tenant], activityWindowFrom(now)))[tenant]!.claimed).toBe(5);
  });

  it("stays exact while engines write the same minutes and move rows on at once", async () => {
    const tenants = [(await makeTenant(db)).id, (await makeTenant(db)).id];
    const from = activityWindowFrom(Date.now());
    const writers = Array.from({ length: 6 }, async (_, w) => {
      for (let i = 0; i < 15; i++) {
        await writeTenantMetrics(db.sql, tenants.map((t) => minute(t, Date.now() - ((w + i) % 3) * MINUTE, 1 + (i % 4), i % 5)));
        if (i % 5 === 0) await advanceTenantActivity(db.sql, new Date());
      }
    });
    await Promise.all(writers);
    const hour = await expectSameHour(db, tenants, from);
    // Each writer wrote 1 + i % 4 for i < 15 (36) for each tenant.
    expect(hour[tenants[0]!]!.claimed).toBe(6 * 36);
  });

  it("is written again on the new backend by a move's copy", async () => {
    const tenant = (await makeTenant(db)).id;
    const now = Date.now();
    await writeTenantMetrics(db.sql, [minute(tenant, now - 20 * MINUTE, 8, 2), minute(tenant, now, 3)]);
    await copyTenantRows(db.sql, other.sql, asTenantId(tenant));
    await copyTenantRows(db.sql, other.sql, asTenantId(tenant));
    expect((await expectSameHour(other, [tenant], activityWindowFrom(now)))[tenant]!.claimed).toBe(11);
  });

  it("orders 3,000 active tenants from one row each, not their 177,000 minutes", async () => {
    const now = Date.now();
    const from = activityWindowFrom(now);
    // Not the hour's first minute: should the minute turn meanwhile, it is out of the hour either way.
    await db.sql.query(
      `INSERT INTO tenant_metrics (tenant_id, minute, claimed, lag_buckets)
       SELECT 'busy-' || t, $1::timestamptz + m * interval '1 minute', 1 + t % 7, ARRAY[1 + t % 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
         FROM generate_series(1, 3000) t, generate_series(1, 59) m`,
      [from],
    );
    await advanceTenantActivity(db.sql, new Date(now));
    await db.sql.query("ANALYZE tenant_activity_hour");
    const busy = Array.from({ length: 3000 }, (_, i) => `busy-${i + 1}`);
    const hour = await expectSameHour(db, busy, from);
    expect(Object.keys(hour)).toHaveLength(3000);
    const plan = await explainAnalyze(db.sql, READ_TENANT_ACTIVITY, [from]);
    expect(rowsRead(scansOf(plan, "tenant_metrics"))).toBe(0);
    expect(rowsRead(scansOf(plan, "tenant_activity_hour"))).toBeLessThan(3100);
  });
});
