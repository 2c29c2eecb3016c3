// The operator's fleet poll against a real PostgreSQL (wire-format T, DESIGN.md "external worker
// queue"): round robin across tenants, oldest first within each; the per-tenant cap on claimed
// tasks of the handler, exact under concurrent polls; only the tenants it is given; never a task
// twice; and a plan that reads indexes only, whatever the size of one tenant's backlog.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { explainAnalyze, rowsRead, scansOf } from "../../test/explain.ts";
import {
  completeWorkerTask, FLEET_CLAIMED_PER_TENANT, FLEET_SQL, POLL_SQL, pollFleetWorkerTasks, pollWorkerTasks, rankFleetWorkerTasks, type FleetPollRequest,
} from "./worker-tasks.ts";
import { asTenantId } from "./index.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const handler = () => `h-${randomUUID().slice(0, 8)}`;

/** `count` bare tasks of one tenant, created 1 ms apart from `since`, oldest first. */
async function insertTasks(tenantId: string, handlerName: string, count: number, options: { queue?: string; since?: Date } = {}) {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, queue_name, created_at)
     SELECT gen_random_uuid(), $1, gen_random_uuid(), 'b' || i, $2, $3, $4::timestamptz + i * interval '1 millisecond'
       FROM generate_series(1, $5) AS i
     ORDER BY i
     RETURNING id`,
    [tenantId, handlerName, options.queue ?? null, options.since ?? new Date(Date.now() - 60_000), count],
  );
  return rows.map((row) => row.id);
}

const ago = (ms: number) => new Date(Date.now() - ms);

const fleet = (handlerName: string, tenants: string[], limit: number, extra: Partial<FleetPollRequest> = {}) =>
  pollFleetWorkerTasks(db.sql, { handlerName, queueName: null, workerId: "fleet-1", limit, tenants, ...extra });

describe("fleet poll", () => {
  it("takes round robin: every tenant's oldest, then every tenant's next, tenants by their oldest task", async () => {
    const h = handler();
    const big = await insertTasks("fl-big", h, 20, { since: ago(60_000) }); // the oldest backlog
    const small = await insertTasks("fl-small", h, 2, { since: ago(50_000) });
    const late = await insertTasks("fl-late", h, 3, { since: ago(40_000) });
    const tasks = await fleet(h, ["fl-big", "fl-small", "fl-late"], 8);
    expect(tasks.map((t) => t.id)).toEqual([big[0], small[0], late[0], big[1], small[1], late[1], big[2], late[2]]);
    expect(tasks.map((t) => [t.tenantId, t.round])).toEqual([
      ["fl-big", 1], ["fl-small", 1], ["fl-late", 1], ["fl-big", 2], ["fl-small", 2], ["fl-late", 2], ["fl-big", 3], ["fl-late", 3],
    ]);
    expect(tasks.every((t) => t.state === "claimed" && t.workerId === "fleet-1" && t.claimEpoch === 1)).toBe(true);
    // The rest: only the big tenant has tasks left, oldest first.
    expect((await fleet(h, ["fl-big", "fl-small", "fl-late"], 5)).map((t) => t.id)).toEqual(big.slice(3, 8));
    const { rows } = await db.sql.query("SELECT tenant_id, event, worker_id, claim_epoch FROM worker_task_attempts WHERE task_id = $1", [small[0]]);
    expect(rows).toEqual([{ tenant_id: "fl-small", event: "claimed", worker_id: "fleet-1", claim_epoch: 1 }]);
  });

  it("breaks ties between tenants whose oldest tasks are as old by tenant id, and within a tenant by task id", async () => {
    const h = handler();
    const since = ago(30_000);
    const b = await insertTasks("fl-tie-b", h, 2, { since });
    const a = await insertTasks("fl-tie-a", h, 2, { since });
    await db.sql.query("UPDATE worker_tasks SET created_at = $2 WHERE handler_name = $1", [h, since]);
    const [a1, a2] = [...a].sort();
    const [b1, b2] = [...b].sort();
    expect((await fleet(h, ["fl-tie-a", "fl-tie-b"], 4)).map((t) => t.id)).toEqual([a1, b1, a2, b2]);
  });

  it("claims only tasks of the tenants it is given, of the handler (and queue) asked for", async () => {
    const h = handler();
    const [mine] = await insertTasks("fl-given", h, 1);
    const [notGiven] = await insertTasks("fl-not-given", h, 1, { since: ago(3_600_000) });
    const [otherHandler] = await insertTasks("fl-given", handler(), 1, { since: ago(3_600_000) });
    expect((await fleet(h, ["fl-given"], 10)).map((t) => t.id)).toEqual([mine]);
    expect(await fleet(h, ["fl-given"], 10)).toEqual([]);
    expect(await fleet(h, [], 10)).toEqual([]);
    const { rows } = await db.sql.query("SELECT id, state FROM worker_tasks WHERE id = ANY($1) ORDER BY id", [[notGiven, otherHandler]]);
    expect(rows.map((r) => r.state)).toEqual(["pending", "pending"]);

    const q = handler();
    const [billing] = await insertTasks("fl-q1", q, 1, { queue: "billing", since: ago(20_000) });
    await insertTasks("fl-q1", q, 1, { queue: "mail", since: ago(30_000) });
    const [billing2] = await insertTasks("fl-q2", q, 1, { queue: "billing", since: ago(10_000) });
    expect((await fleet(q, ["fl-q1", "fl-q2"], 10, { queueName: "billing" })).map((t) => t.id)).toEqual([billing, billing2]);
    expect(await fleet(q, ["fl-q1", "fl-q2"], 10, { queueName: "billing" })).toEqual([]);
    expect(await fleet(q, ["fl-q1", "fl-q2"], 0)).toEqual([]);
  });

  it("gives a tenant holding `claimedCap` claimed tasks of the handler no more; a completion frees a place", async () => {
    expect(FLEET_CLAIMED_PER_TENANT).toBe(64);
    const h = handler();
    const many = await insertTasks("fl-cap", h, 10, { since: ago(60_000) });
    const [few] = await insertTasks("fl-cap-few", h, 1, { since: ago(10_000) });
    const tenants = ["fl-cap", "fl-cap-few"];
    const first = await fleet(h, tenants, 10, { claimedCap: 3 });
    expect(first.map((t) => t.id)).toEqual([many[0], few, many[1], many[2]]);
    expect(await fleet(h, tenants, 10, { claimedCap: 3 })).toEqual([]);
    // Claims by the tenant's own key count too, and are not capped.
    await insertTasks("fl-cap-few", h, 5, { since: ago(5_000) });
    expect(await pollWorkerTasks(db.sql, asTenantId("fl-cap-few"), { handlerName: h, queueName: null, workerId: "own", limit: 2 })).toHaveLength(2);
    expect((await fleet(h, tenants, 10, { claimedCap: 3 })).map((t) => t.tenantId)).toEqual([]);

    expect(await completeWorkerTask(db.sql, asTenantId("fl-cap"), many[0]!, { workerId: "fleet-1", claimEpoch: 1 }, { ok: true })).toBe("ok");
    expect((await fleet(h, tenants, 10, { claimedCap: 3 })).map((t) => t.id)).toEqual([many[3]]);
    expect(await fleet(h, tenants, 10, { claimedCap: 3 })).toEqual([]);
    // Another handler has a cap of its own.
    const other = handler();
    await insertTasks("fl-cap", other, 2);
    expect(await fleet(other, tenants, 10, { claimedCap: 3 })).toHaveLength(2);
    const { rows } = await db.sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM worker_tasks WHERE tenant_id = 'fl-cap' AND handler_name = $1 AND state = 'claimed'",
      [h],
    );
    expect(rows[0]!.n).toBe(3);
  });

  it("keeps the cap exact and never claims a task twice under concurrent fleet polls", async () => {
    const h = handler();
    const tenants = ["fl-conc-a", "fl-conc-b", "fl-conc-c"];
    for (const [index, tenant] of tenants.entries()) await insertTasks(tenant, h, 40, { since: ago(60_000 - index) });
    const pool = testPool(db.url, 6); // a connection per poller, so they really overlap
    const pollers = await Promise.all(
      Array.from({ length: 6 }, (_, index) => pollFleetWorkerTasks(pool, { handlerName: h, queueName: null, workerId: `w${index}`, limit: 7, tenants, claimedCap: 5 })),
    ).finally(() => pool.end());
    const ids = pollers.flat().map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    const { rows } = await db.sql.query<{ tenant_id: string; n: number }>(
      "SELECT tenant_id, count(*)::int AS n FROM worker_tasks WHERE handler_name = $1 AND state = 'claimed' GROUP BY tenant_id ORDER BY tenant_id",
      [h],
    );
    expect(rows).toEqual(tenants.map((tenant_id) => ({ tenant_id, n: 5 })));
    expect(ids).toHaveLength(15);
  });

  it("ranks, without claiming, exactly the tasks a poll then claims", async () => {
    const h = handler();
    await insertTasks("fl-rank-a", h, 6, { since: ago(60_000) });
    await insertTasks("fl-rank-b", h, 2, { since: ago(50_000) });
    const request = { handlerName: h, queueName: null, workerId: "r", limit: 5, tenants: ["fl-rank-a", "fl-rank-b"], claimedCap: 4 };
    const ranks = await rankFleetWorkerTasks(db.sql, request);
    expect(await rankFleetWorkerTasks(db.sql, request)).toEqual(ranks);
    const { rows } = await db.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM worker_tasks WHERE handler_name = $1 AND state = 'pending'", [h]);
    expect(rows[0]!.n).toBe(8);
    const claimed = await pollFleetWorkerTasks(db.sql, request);
    expect(claimed.map(({ tenantId, round, firstAt }) => ({ tenantId, round, firstAt }))).toEqual(ranks);
    expect(ranks.map((r) => `${r.tenantId}:${r.round}`)).toEqual(["fl-rank-a:1", "fl-rank-b:1", "fl-rank-a:2", "fl-rank-b:2", "fl-rank-a:3"]);
  });

  it("reads indexes only, a bounded number of rows, whatever one tenant's backlog (the tenant poll too)", async () => {
    const h = handler();
    // A flood of the handler, twenty tenants with a little of it, and a tenant with a backlog of a
    // handler named before it, which a walk over tenants through a tenant-first index would read.
    await db.sql.query(
      `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, state, created_at)
       SELECT gen_random_uuid(),
              CASE WHEN i <= 30000 THEN 'fl-plan-flood' WHEN i <= 50000 THEN 'fl-plan-busy' ELSE 'fl-plan-' || (i % 20) END,
              gen_random_uuid(), 'b',
              CASE WHEN i > 30000 AND i <= 50000 THEN '0-named-before' ELSE $1 END,
              CASE WHEN i % 7 = 0 THEN 'completed' ELSE 'pending' END,
              now() - interval '1 hour' + i * interval '1 millisecond'
         FROM generate_series(1, 52000) AS i`,
      [h],
    );
    await db.sql.query("ANALYZE worker_tasks");
    const tenants = ["fl-plan-flood", "fl-plan-busy", ...Array.from({ length: 20 }, (_, i) => `fl-plan-${i}`)];

    const fleetPlan = await explain(FLEET_SQL.poll, [h, tenants, 12, FLEET_CLAIMED_PER_TENANT, "plan"]); // worker id: $5
    // Not worker_tasks_poll_idx (tenant first, dropped by the fleet migration): walking tenants
    // through it read every pending task of 0-named-before (the planner chose it while it existed).
    expect(fleetPlan.indexes).toEqual(new Set(["worker_tasks_pending_idx", "worker_tasks_fleet_claimed_idx", "worker_tasks_pkey"]));
    // Rows read from worker_tasks: ~ tenants + limit, not ~ the flood's 30,000 (nor tenants * limit).
    expect(fleetPlan.rowsRead).toBeLessThan(4 * (22 + 12));
    expect(fleetPlan.claimed).toBe(12);

    const tenantPlan = await explain(POLL_SQL.plain, ["fl-plan-flood", h, "plan", 12]);
    expect(tenantPlan.indexes).toEqual(new Set(["worker_tasks_pending_idx", "worker_tasks_pkey"]));
    expect(tenantPlan.rowsRead).toBeLessThan(4 * 12);
    expect(tenantPlan.claimed).toBe(12);
  });
});

/** Runs `text` under EXPLAIN ANALYZE, rolled back: which indexes it read worker_tasks through, how many rows, how many it claimed. */
async function explain(text: string, values: unknown[]) {
  const explained = await explainAnalyze(db.sql, text, values);
  const scans = scansOf(explained, "worker_tasks");
  for (const scan of scans) expect(scan["Node Type"], JSON.stringify(scan)).toMatch(/^Index( Only)? Scan$/);
  return {
    indexes: new Set(scans.map((scan) => scan["Index Name"])),
    rowsRead: rowsRead(scans),
    claimed: explained.nodes.find((node) => node["Node Type"] === "ModifyTable" && node["Relation Name"] === "worker_tasks")?.["Actual Rows"],
  };
}
