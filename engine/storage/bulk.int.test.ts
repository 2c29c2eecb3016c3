// Bulk state changes and reschedules (wire-format K) against a real PostgreSQL: the F.2 check per
// instance, the filter, terminal targets (late signals, waiting parents), due times kept, batches
// walking past BATCH_SIZE, and the plan each batch's pick reads.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainAnalyze, scansOf } from "../../test/explain.ts";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { insertDueInstances } from "../../test/factories.ts";
import { BATCH_SIZE } from "./batches.ts";
import { bulkReschedule, bulkSetState, statesLeadingTo } from "./bulk.ts";
import type { BulkFilter } from "./bulk-filter.ts";
import { asTenantId, type TenantId } from "./ids.ts";
import { INSTANCE_STATES, type InstanceState } from "./instances.ts";
import { TRANSITIONS } from "./instance-state.ts";
import { claimDueInstances } from "./claim.ts";
import { renewLeases } from "./leases.ts";
import { enqueueSignalIfActive } from "./signals.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

let tenants = 0;
const newTenant = () => asTenantId(`bulk-${++tenants}-${randomUUID().slice(0, 6)}`);
const tenantDb = (tenantId: TenantId) => db.storage.backends.primary.forTenant(tenantId);

interface Made {
  state?: InstanceState;
  namespace?: string;
  sequenceId?: string;
  metadata?: unknown;
  nextFireAt?: Date | null;
  parentId?: string | null;
}

/** One instance as the engine or the API would have left it (a running one holds a lease at epoch 3). */
async function make(tenantId: string, m: Made = {}): Promise<string> {
  const state = m.state ?? "scheduled";
  const nextFireAt = m.nextFireAt === undefined ? (state === "scheduled" ? new Date(Date.now() + 3_600_000) : null) : m.nextFireAt;
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, metadata, next_fire_at, parent_instance_id,
                                 lease_owner, lease_expires_at, lease_epoch, completed_at)
     VALUES (gen_random_uuid(), $1, $2, $3, $4::text, $5, $6, $7,
             CASE WHEN $4 = 'running' THEN 'engine-a' END, CASE WHEN $4 = 'running' THEN now() + interval '30 seconds' END, 3,
             CASE WHEN $4 IN ('completed', 'failed', 'cancelled') THEN now() END)
     RETURNING id`,
    [tenantId, m.namespace ?? "default", m.sequenceId ?? randomUUID(), state, m.metadata === undefined ? null : JSON.stringify(m.metadata), nextFireAt, m.parentId ?? null],
  );
  return rows[0]!.id;
}

async function row(id: string) {
  const { rows } = await db.sql.query<{
    state: InstanceState; next_fire_at: Date | null; lease_owner: string | null; lease_expires_at: Date | null; lease_epoch: number;
    completed_at: Date | null; updated_at: Date;
  }>("SELECT state, next_fire_at, lease_owner, lease_expires_at, lease_epoch, completed_at, updated_at FROM task_instances WHERE id = $1", [id]);
  return rows[0]!;
}

const statesOf = async (tenantId: string) =>
  Object.fromEntries(
    (await db.sql.query<{ state: string; n: number }>("SELECT state, count(*)::int AS n FROM task_instances WHERE tenant_id = $1 GROUP BY state", [tenantId])).rows.map(
      (r) => [r.state, r.n],
    ),
  );

describe("bulkSetState", () => {
  it("moves exactly the instances F.2 lets go to the target, skipping and not counting the rest", async () => {
    for (const to of INSTANCE_STATES) {
      const tenantId = newTenant();
      const ids = Object.fromEntries(await Promise.all(INSTANCE_STATES.map(async (state) => [state, await make(tenantId, { state })] as const)));
      const count = await bulkSetState(tenantDb(tenantId), tenantId, {}, to);
      const legal = INSTANCE_STATES.filter((from) => TRANSITIONS[from].includes(to));
      expect(count, to).toBe(legal.length);
      expect(statesLeadingTo(to).sort()).toEqual([...legal].sort());
      for (const from of INSTANCE_STATES) expect((await row(ids[from]!)).state, `${from} → ${to}`).toBe(legal.includes(from) ? to : from);
    }
  });

  it("answers 0 for a tenant with no instances, and for a filter nothing matches", async () => {
    const tenantId = newTenant();
    expect(await bulkSetState(tenantDb(tenantId), tenantId, {}, "paused")).toBe(0);
    await make(tenantId);
    expect(await bulkSetState(tenantDb(tenantId), tenantId, { namespace: "nowhere" }, "paused")).toBe(0);
    expect(await bulkSetState(tenantDb(tenantId), tenantId, { states: ["completed"] }, "paused")).toBe(0);
  });

  it("ANDs namespace, sequence, states and metadata, and never touches another tenant", async () => {
    const tenantId = newTenant();
    const other = newTenant();
    const sequenceId = randomUUID();
    const hit = await make(tenantId, { namespace: "eu", sequenceId, metadata: { campaign: "spring", tier: "gold" } });
    const misses = [
      await make(tenantId, { namespace: "us", sequenceId, metadata: { campaign: "spring", tier: "gold" } }),
      await make(tenantId, { namespace: "eu", metadata: { campaign: "spring", tier: "gold" } }),
      await make(tenantId, { namespace: "eu", sequenceId, metadata: { campaign: "autumn", tier: "gold" } }),
      await make(tenantId, { namespace: "eu", sequenceId, metadata: { campaign: "spring" } }),
      await make(tenantId, { namespace: "eu", sequenceId, state: "waiting", metadata: { campaign: "spring", tier: "gold" } }),
      await make(other, { namespace: "eu", sequenceId, metadata: { campaign: "spring", tier: "gold" } }),
    ];
    const filter: BulkFilter = { namespace: "eu", sequenceId, states: ["scheduled", "running"], metadata: { campaign: "spring", tier: "gold" } };
    expect(await bulkSetState(tenantDb(tenantId), tenantId, filter, "paused")).toBe(1);
    expect((await row(hit)).state).toBe("paused");
    for (const id of misses) expect((await row(id)).state).not.toBe("paused");
  });

  it("keeps next_fire_at (a scheduled target without one is due now) and fences out the lease holder", async () => {
    const tenantId = newTenant();
    const later = new Date(Date.now() + 7_200_000);
    const scheduled = await make(tenantId, { state: "scheduled", nextFireAt: later });
    const running = await make(tenantId, { state: "running", nextFireAt: later });
    expect(await bulkSetState(tenantDb(tenantId), tenantId, {}, "paused")).toBe(2);
    expect(await row(scheduled)).toMatchObject({ state: "paused", next_fire_at: later, lease_epoch: 3 });
    expect(await row(running)).toMatchObject({ state: "paused", next_fire_at: later, lease_owner: null, lease_expires_at: null, lease_epoch: 4 });

    const pausedWithoutDueTime = await make(tenantId, { state: "paused", nextFireAt: null });
    expect(await bulkSetState(tenantDb(tenantId), tenantId, { states: ["paused"] }, "scheduled")).toBe(3);
    expect((await row(scheduled)).next_fire_at).toEqual(later);
    const woken = await row(pausedWithoutDueTime);
    expect(woken.state).toBe("scheduled");
    expect(Math.abs(woken.next_fire_at!.getTime() - Date.now())).toBeLessThan(5_000);
  });

  it("ends instances as PATCH state does: finished, late signals taken, waiting parents woken", async () => {
    const tenantId = newTenant();
    const parent = await make(tenantId, { state: "waiting", namespace: "parents" });
    const child = await make(tenantId, { state: "running", parentId: parent });
    await enqueueSignalIfActive(db.sql, tenantId, child, { type: "pause", payload: null });
    expect(await bulkSetState(tenantDb(tenantId), tenantId, { namespace: "default" }, "cancelled")).toBe(1);
    expect(await row(child)).toMatchObject({ state: "cancelled", completed_at: expect.any(Date) });
    expect((await row(parent)).state).toBe("scheduled");
    const { rows } = await db.sql.query("SELECT delivered FROM signals WHERE instance_id = $1", [child]);
    expect(rows).toEqual([{ delivered: true }]);
  });

  it("changes a waiting parent and its child in one batch without waking the parent it ends", async () => {
    const tenantId = newTenant();
    const parent = await make(tenantId, { state: "waiting" });
    const child = await make(tenantId, { state: "running", parentId: parent });
    expect(await bulkSetState(tenantDb(tenantId), tenantId, {}, "cancelled")).toBe(2);
    expect([(await row(parent)).state, (await row(child)).state]).toEqual(["cancelled", "cancelled"]);
  });

  it("includes an instance created just before it, whatever the sub-millisecond clock (200 rounds)", async () => {
    // created_at is stored rounded to the millisecond: a start cut to the millisecond missed
    // a row created in the same millisecond's second half.
    const tenantId = newTenant();
    const missed: number[] = [];
    for (let round = 0; round < 200; round++) {
      await make(tenantId, { state: "waiting" });
      if ((await bulkSetState(tenantDb(tenantId), tenantId, { states: ["waiting"] }, "cancelled")) !== 1) missed.push(round);
    }
    expect(missed).toEqual([]);
  });

  it(`walks past one batch (${BATCH_SIZE} rows) to the last matching instance`, async () => {
    const tenantId = newTenant();
    await db.sql.query(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, created_at)
       SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), CASE WHEN i % 5 = 0 THEN 'completed' ELSE 'scheduled' END,
              now() + interval '1 hour', now() - interval '1 hour' + (i / 7) * interval '1 millisecond'
         FROM generate_series(1, $2) AS i`,
      [tenantId, BATCH_SIZE * 2 + 500],
    );
    const count = await bulkSetState(tenantDb(tenantId), tenantId, {}, "paused");
    expect(count).toBe(((BATCH_SIZE * 2 + 500) * 4) / 5);
    expect(await statesOf(tenantId)).toEqual({ paused: count, completed: (BATCH_SIZE * 2 + 500) / 5 });
  });

  it("picks each batch from the tenant's (tenant_id, created_at, id) index, reading one batch of rows", async () => {
    const tenantId = newTenant();
    await db.sql.query(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at)
       SELECT gen_random_uuid(), t, 'default', gen_random_uuid(), 'scheduled', now() + interval '1 hour'
         FROM generate_series(1, 5000) AS i, unnest(ARRAY[$1, 'bulk-neighbour']) AS t`,
      [tenantId],
    );
    await db.sql.query("ANALYZE task_instances");
    // One state (reschedule), and the several a state change may start from (pause: scheduled or running).
    for (const states of [["scheduled"], statesLeadingTo("paused")]) {
      const explained = await explainAnalyze(
        db.sql,
        `SELECT id, created_at FROM task_instances
          WHERE tenant_id = $1 AND created_at <= now() AND (created_at, id) > ($2::timestamptz, $3::uuid) AND task_instances.state = ANY($4::text[])
          ORDER BY created_at, id LIMIT $5`,
        [tenantId, "-infinity", "00000000-0000-0000-0000-000000000000", states, BATCH_SIZE],
      );
      const [scan] = scansOf(explained, "task_instances");
      expect(scan?.["Node Type"], states.join()).toMatch(/Index/);
      expect(scan?.["Index Name"], states.join()).toMatch(/^task_instances_tenant_id_(state_)?created_at_id_idx$/);
      expect(scan?.["Actual Rows"], states.join()).toBeLessThanOrEqual(BATCH_SIZE);
    }
  });
});

describe("bulkSetState beside the engine's multi-row statements", () => {
  it("never deadlocks with lease renewals over the same running instances (both lock in id order)", async () => {
    const tenantId = newTenant();
    // Created in an order unrelated to their ids (random v4 ids), so a walk by creation that
    // locked as it went would cross the renewals' id order.
    await insertDueInstances(db, tenantId, 600);
    const claimed = await claimDueInstances(db.sql, { now: new Date(), limit: 600, maxPerTenant: 0, leaseOwner: "t", leaseMs: 600_000 });
    const pool = testPool(db.url, 8);
    try {
      const until = new Date(Date.now() + 600_000);
      const shuffled = () => [...claimed].sort(() => Math.random() - 0.5).map((c) => ({ id: c.id, leaseEpoch: c.leaseEpoch }));
      const renewals = Array.from({ length: 6 }, async () => {
        for (let i = 0; i < 5; i++) await renewLeases(pool, shuffled(), until);
      });
      const [count] = await Promise.all([bulkSetState(tenantDb(tenantId), tenantId, {}, "paused"), ...renewals]);
      expect(count).toBe(600);
    } finally {
      await pool.end();
    }
  });
});

describe("bulkReschedule", () => {
  it("shifts only scheduled instances, either way, counts them, and leaves a null due time null", async () => {
    const tenantId = newTenant();
    const at = new Date(Date.now() + 3_600_000);
    const scheduled = await make(tenantId, { state: "scheduled", nextFireAt: at });
    const others = await Promise.all((["running", "waiting", "paused", "completed", "failed", "cancelled"] as const).map((state) => make(tenantId, { state, nextFireAt: at })));
    const undated = await make(tenantId, { state: "paused", nextFireAt: null });
    expect(await bulkReschedule(tenantDb(tenantId), tenantId, {}, 600)).toBe(1);
    expect((await row(scheduled)).next_fire_at).toEqual(new Date(at.getTime() + 600_000));
    for (const id of others) expect((await row(id)).next_fire_at).toEqual(at);
    expect((await row(undated)).next_fire_at).toBeNull();
    // A state filter naming the undated one still only moves scheduled instances.
    expect(await bulkReschedule(tenantDb(tenantId), tenantId, { states: ["scheduled", "paused"] }, -7_200)).toBe(1);
    expect((await row(scheduled)).next_fire_at).toEqual(new Date(at.getTime() + 600_000 - 7_200_000));
    expect((await row(undated)).next_fire_at).toBeNull();
  });

  it("matches nothing when the states filter leaves out scheduled, and honours the rest of the filter", async () => {
    const tenantId = newTenant();
    const at = new Date(Date.now() + 3_600_000);
    const eu = await make(tenantId, { namespace: "eu", nextFireAt: at });
    const us = await make(tenantId, { namespace: "us", nextFireAt: at });
    expect(await bulkReschedule(tenantDb(tenantId), tenantId, { states: ["paused", "running"] }, 60)).toBe(0);
    expect(await bulkReschedule(tenantDb(tenantId), tenantId, { states: ["scheduled", "paused"], namespace: "eu" }, 60)).toBe(1);
    expect((await row(eu)).next_fire_at).toEqual(new Date(at.getTime() + 60_000));
    expect((await row(us)).next_fire_at).toEqual(at);
  });
});
