// The overview's instance counts (tenant_instance_counts): kept by the triggers on task_instances
// through inserts, state changes, deletes, an engine's runs, merges racing writers, and a move's
// copy and cleanup, always equal to counting the instances; read without touching them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainAnalyze, rowsRead, scansOf } from "../../test/explain.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { asTenantId } from "./ids.ts";
import { mergeInstanceCounts, readInstanceCounts } from "./instance-counts.ts";
import { countInstancesByState } from "./instances.ts";
import { copyTenantRows, deleteTenantRows } from "./tenant-rows.ts";

let db: TestDatabase;
let other: TestDatabase;
beforeAll(async () => {
  [db, other] = await Promise.all([freshDatabase(), freshDatabase()]);
});
afterAll(() => Promise.all([db.drop(), other.drop()]));

/** The maintained counts, and the same counted from the instances. */
async function bothCounts(on: TestDatabase, tenantId: string) {
  const id = asTenantId(tenantId);
  return { maintained: await readInstanceCounts(on.sql, id), counted: await countInstancesByState(on.sql, id) };
}

async function expectCountsMatch(on: TestDatabase, tenantId: string) {
  const { maintained, counted } = await bothCounts(on, tenantId);
  expect(maintained).toEqual(counted);
  return maintained;
}

const unmergedRows = async (on: TestDatabase, tenantId: string) =>
  (await on.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM tenant_instance_counts WHERE tenant_id = $1 AND NOT merged", [tenantId])).rows[0]!.n;

describe("tenant_instance_counts", () => {
  it("follows inserts, changes of state and deletes, and a merge keeps the figures", async () => {
    const tenant = (await makeTenant(db)).id;
    const bystander = (await makeTenant(db)).id;
    const sequence = await insertSequence(db, tenant, [{ type: "step", id: "a", handler: "noop" }]);
    const ids = await insertInstancesOf(db, tenant, sequence, 40);
    await insertInstancesOf(db, bystander, sequence, 7);
    expect((await expectCountsMatch(db, tenant)).scheduled).toBe(40);

    await db.sql.query("UPDATE task_instances SET state = 'completed', next_fire_at = NULL, completed_at = now() WHERE id = ANY($1::uuid[])", [ids.slice(0, 25)]);
    await db.sql.query("UPDATE task_instances SET state = 'failed', next_fire_at = NULL, completed_at = now() WHERE id = ANY($1::uuid[])", [ids.slice(25, 30)]);
    // An update that changes no state (a lease renewal, say) writes no delta.
    const before = await unmergedRows(db, tenant);
    await db.sql.query("UPDATE task_instances SET updated_at = now() WHERE tenant_id = $1", [tenant]);
    expect(await unmergedRows(db, tenant)).toBe(before);
    await db.sql.query("DELETE FROM task_instances WHERE id = ANY($1::uuid[])", [ids.slice(0, 3)]);
    expect(await expectCountsMatch(db, tenant)).toMatchObject({ scheduled: 10, completed: 22, failed: 5 });

    await mergeInstanceCounts(db.sql);
    expect(await unmergedRows(db, tenant)).toBe(0);
    const { rows } = await db.sql.query("SELECT state, count(*)::int AS rows FROM tenant_instance_counts WHERE tenant_id = $1 GROUP BY state ORDER BY state", [tenant]);
    expect(rows).toEqual([{ state: "completed", rows: 1 }, { state: "failed", rows: 1 }, { state: "scheduled", rows: 1 }]);
    await expectCountsMatch(db, tenant);
    expect((await expectCountsMatch(db, bystander)).scheduled).toBe(7);
  });

  it("stays exact while merges race each other and writers", async () => {
    const tenant = (await makeTenant(db)).id;
    const sequence = await insertSequence(db, tenant, [{ type: "step", id: "a", handler: "noop" }]);
    const work = Array.from({ length: 20 }, async (_, i) => {
      const ids = await insertInstancesOf(db, tenant, sequence, 10);
      await db.sql.query("UPDATE task_instances SET state = 'running' WHERE id = ANY($1::uuid[])", [ids.slice(0, 6)]);
      if (i % 2 === 0) await db.sql.query("DELETE FROM task_instances WHERE id = ANY($1::uuid[])", [ids.slice(6, 8)]);
      await mergeInstanceCounts(db.sql);
    });
    await Promise.all([...work, mergeInstanceCounts(db.sql), mergeInstanceCounts(db.sql)]);
    expect(await expectCountsMatch(db, tenant)).toMatchObject({ running: 120, scheduled: 60 });
    await mergeInstanceCounts(db.sql);
    await expectCountsMatch(db, tenant);
  });

  it("follows an engine running the tenant's instances to the end", async () => {
    const tenant = (await makeTenant(db)).id;
    const sequence = await insertSequence(db, tenant, [{ type: "step", id: "a", handler: "noop" }, { type: "step", id: "b", handler: "noop" }]);
    await insertInstancesOf(db, tenant, sequence, 30);
    const scheduler = makeScheduler(db);
    await scheduler.start();
    try {
      await expect.poll(async () => (await bothCounts(db, tenant)).counted.completed, { timeout: 20_000 }).toBe(30);
    } finally {
      await scheduler.stop();
    }
    expect(await expectCountsMatch(db, tenant)).toMatchObject({ completed: 30, scheduled: 0, running: 0 });
  });

  it("is written again by a move's copy on the new backend and gone with the cleanup on the old", async () => {
    const tenant = (await makeTenant(db)).id;
    const sequence = await insertSequence(db, tenant, [{ type: "step", id: "a", handler: "noop" }]);
    const ids = await insertInstancesOf(db, tenant, sequence, 12);
    await db.sql.query("UPDATE task_instances SET state = 'waiting', next_fire_at = NULL WHERE id = ANY($1::uuid[])", [ids.slice(0, 4)]);
    await mergeInstanceCounts(db.sql);
    // A copy of the tenant left on the target by an earlier attempt is replaced, not added to.
    await copyTenantRows(db.sql, other.sql, asTenantId(tenant));
    await copyTenantRows(db.sql, other.sql, asTenantId(tenant));
    expect(await expectCountsMatch(other, tenant)).toMatchObject({ scheduled: 8, waiting: 4 });
    await deleteTenantRows(db.sql, asTenantId(tenant));
    expect((await db.sql.query("SELECT count(*)::int AS n FROM tenant_instance_counts WHERE tenant_id = $1", [tenant])).rows[0].n).toBe(0);
    await expectCountsMatch(db, tenant);
  });

  it("is read from the tenant's few rows, never from its instances", async () => {
    const tenant = (await makeTenant(db)).id;
    const sequence = await insertSequence(db, tenant, [{ type: "step", id: "a", handler: "noop" }]);
    await db.sql.query(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, completed_at)
       SELECT gen_random_uuid(), $1, 'default', $2, CASE WHEN i % 4 = 0 THEN 'failed' ELSE 'completed' END, NULL, now() FROM generate_series(1, 20000) i`,
      [tenant, sequence],
    );
    await mergeInstanceCounts(db.sql);
    await db.sql.query("ANALYZE tenant_instance_counts");
    const plan = await explainAnalyze(db.sql, "SELECT state, sum(n)::int AS count FROM tenant_instance_counts WHERE tenant_id = $1 GROUP BY state", [tenant]);
    expect(scansOf(plan, "task_instances")).toEqual([]);
    expect(rowsRead(scansOf(plan, "tenant_instance_counts"))).toBeLessThanOrEqual(2);
    expect(await expectCountsMatch(db, tenant)).toMatchObject({ completed: 15000, failed: 5000 });
  });
});
