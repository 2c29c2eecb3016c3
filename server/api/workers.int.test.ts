// The Workers page's procedures and the operator's fleet view against two real PostgreSQL
// backends (tenant A on `primary`, B on `eu-1`), with workers polling through REST as real ones
// do: a tenant's workers with their handlers, queues, version and claims, task counts, claimed
// tasks and the stale ones (no heartbeat for STALE_HEARTBEAT_MS), paged; the fleet view across
// every tenant keeps each tenant's rows only from the backend it is placed on now, and the
// fleet's own (operator keys naming no tenant) only from the primary.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STALE_HEARTBEAT_MS } from "../../engine/storage/index.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeUser, parkOnWorkerTask } from "../../test/factories.ts";
import { call, operatorKey, tenantWithKey } from "../rest/testing.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let second: TestDatabase; // `eu-1`
let db: TestDatabase; // primary
let a: { id: string; key: string };
let b: { id: string; key: string };
let memberA: { id: string };
let memberB: { id: string };
let operator: { id: string };
let opKey: string;

beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  a = await tenantWithKey(db);
  b = await tenantWithKey(db);
  await db.storage.advanceTenantPlacement(b.id, "eu-1", 2); // before B has any data
  memberA = await makeUser(db, { memberOf: [[a.id, "member"]] });
  memberB = await makeUser(db, { memberOf: [[b.id, "member"]] });
  operator = await makeUser(db, { isOperator: true });
  opKey = await operatorKey(db);
});
afterAll(async () => {
  await db.drop();
  await second.drop();
});

const as = (user: { id: string }) => createCaller(createContext(db, user.id));
type Claimed = { id: string; claim_epoch: number };

async function poll(key: string, body: Record<string, unknown>, path = "/workers/tasks/poll"): Promise<Claimed[]> {
  const reply = await call(db, "POST", path, { key, body });
  expect(reply.status, reply.text).toBe(200);
  return reply.json() as Claimed[];
}

/** The task's last heartbeat `ms` ago, on the backend `on`. */
const heartbeatAgo = (on: TestDatabase, taskId: string, ms: number) =>
  on.sql.query("UPDATE worker_tasks SET heartbeat_at = now() - $2 * interval '1 millisecond' WHERE id = $1", [taskId, ms]);

describe("a tenant's workers", () => {
  let resize: string;
  let render: string;
  beforeAll(async () => {
    resize = (await parkOnWorkerTask(db, a.id, "resize")).taskId;
    render = (await parkOnWorkerTask(db, a.id, "render", { queue: "gpu" })).taskId;
    expect((await poll(a.key, { handler_name: "resize", worker_id: "w-a1", version: "1.2.0" })).map((t) => t.id)).toEqual([resize]);
    expect((await poll(a.key, { handler_name: "render", queue_name: "gpu", worker_id: "w-a1" }, "/workers/tasks/poll/queue")).map((t) => t.id)).toEqual([render]);
  });

  it("lists each worker with its handlers, queues, version and in-flight claims, and counts its tasks", async () => {
    const { workers, hasMore, staleAfterSecs } = await as(memberA).workers.list({ tenantId: a.id });
    expect(staleAfterSecs).toBe(STALE_HEARTBEAT_MS / 1000);
    expect(hasMore).toBe(false);
    expect(workers).toEqual([{
      workerId: "w-a1", handlers: ["render", "resize"], queues: ["gpu"], version: "1.2.0", lastSeenAt: expect.any(String), alive: true, inFlight: 2, stale: 0,
    }]);
    const stats = await as(memberA).workers.stats({ tenantId: a.id });
    expect(stats).toMatchObject({
      byState: { pending: 0, claimed: 2, completed: 0, failed: 0 },
      byHandler: [
        { handler: "render", counts: { pending: 0, claimed: 1, completed: 0, failed: 0 } },
        { handler: "resize", counts: { pending: 0, claimed: 1, completed: 0, failed: 0 } },
      ],
      activeWorkers: ["w-a1"],
      stale: 0,
    });
    const claimed = await as(memberA).workers.claimed({ tenantId: a.id });
    expect(claimed.tasks.map((t) => [t.id, t.handlerName, t.queueName, t.workerId, t.stale])).toEqual(
      expect.arrayContaining([[resize, "resize", null, "w-a1", false], [render, "render", "gpu", "w-a1", false]]),
    );
    expect((await as(memberA).workers.claimed({ tenantId: a.id, staleOnly: true })).tasks).toEqual([]);
  });

  it("calls a claim stale after STALE_HEARTBEAT_MS without a heartbeat, until the worker sends one", async () => {
    await heartbeatAgo(db, resize, STALE_HEARTBEAT_MS - 5_000);
    expect((await as(memberA).workers.claimed({ tenantId: a.id, staleOnly: true })).tasks).toEqual([]);
    await heartbeatAgo(db, resize, STALE_HEARTBEAT_MS + 5_000);
    const stale = await as(memberA).workers.claimed({ tenantId: a.id, staleOnly: true });
    expect(stale.tasks.map((t) => [t.id, t.stale, t.workerId])).toEqual([[resize, true, "w-a1"]]);
    expect((await as(memberA).workers.stats({ tenantId: a.id })).stale).toBe(1);
    expect((await as(memberA).workers.list({ tenantId: a.id })).workers[0]).toMatchObject({ workerId: "w-a1", inFlight: 2, stale: 1 });

    const epoch = (await db.sql.query("SELECT claim_epoch FROM worker_tasks WHERE id = $1", [resize])).rows[0].claim_epoch as number;
    const beat = await call(db, "POST", `/workers/tasks/${resize}/heartbeat`, { key: a.key, body: { worker_id: "w-a1", claim_epoch: Number(epoch) } });
    expect(beat.status, beat.text).toBe(200);
    expect((await as(memberA).workers.stats({ tenantId: a.id })).stale).toBe(0);
  });

  it("pages the workers, most recently seen first, and leaves out those not seen lately when asked", async () => {
    for (const worker of ["w-a2", "w-a3", "w-a4"]) await poll(a.key, { handler_name: "idle", worker_id: worker });
    await db.sql.query("UPDATE worker_registrations SET last_seen_at = now() - interval '5 minutes' WHERE tenant_id = $1 AND worker_id = 'w-a2'", [a.id]);
    const first = await as(memberA).workers.list({ tenantId: a.id, limit: 2 });
    const rest = await as(memberA).workers.list({ tenantId: a.id, limit: 2, offset: 2 });
    expect(first.hasMore).toBe(true);
    expect(rest.hasMore).toBe(false);
    const ids = [...first.workers, ...rest.workers].map((w) => w.workerId);
    expect(ids).toHaveLength(4);
    expect(ids.at(-1)).toBe("w-a2");
    expect(rest.workers.at(-1)).toMatchObject({ workerId: "w-a2", alive: false });
    const alive = await as(memberA).workers.list({ tenantId: a.id, aliveOnly: true });
    expect(alive.workers.map((w) => w.workerId).sort()).toEqual(["w-a1", "w-a3", "w-a4"]);
  });

  it("shows a tenant only its own workers and tasks, read from the backend it is placed on", async () => {
    const theirs = (await parkOnWorkerTask(second, b.id, "resize")).taskId;
    expect((await poll(b.key, { handler_name: "resize", worker_id: "w-b1" })).map((t) => t.id)).toEqual([theirs]);
    expect((await as(memberB).workers.list({ tenantId: b.id })).workers.map((w) => [w.workerId, w.inFlight])).toEqual([["w-b1", 1]]);
    expect((await as(memberB).workers.claimed({ tenantId: b.id })).tasks.map((t) => t.id)).toEqual([theirs]);
    const mine = await as(memberA).workers.list({ tenantId: a.id });
    expect(mine.workers.map((w) => w.workerId)).not.toContain("w-b1");
    expect((await as(memberA).workers.claimed({ tenantId: a.id })).tasks.map((t) => t.id)).not.toContain(theirs);
    await expect(as(memberA).workers.list({ tenantId: b.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("the operator's fleet view", () => {
  const FLEET = ["fleet-1", "w-c1", "w-d1", "ghost-a", "ghost-b", "ghost-fleet"];
  let c: { id: string; key: string };
  let d: { id: string; key: string };
  beforeAll(async () => {
    c = await tenantWithKey(db);
    d = await tenantWithKey(db);
    await db.storage.advanceTenantPlacement(d.id, "eu-1", 2);
    // The fleet claims a task of C (primary) and one of D (eu-1); each tenant's own worker one more.
    await parkOnWorkerTask(db, c.id, "ship");
    await parkOnWorkerTask(second, d.id, "ship");
    expect(await poll(opKey, { handler_name: "ship", worker_id: "fleet-1", limit: 10 })).toHaveLength(2);
    const cTask = (await parkOnWorkerTask(db, c.id, "pack")).taskId;
    await parkOnWorkerTask(second, d.id, "pack");
    expect(await poll(c.key, { handler_name: "pack", worker_id: "w-c1" })).toHaveLength(1);
    expect(await poll(d.key, { handler_name: "pack", worker_id: "w-d1" })).toHaveLength(1);
    await heartbeatAgo(db, cTask, STALE_HEARTBEAT_MS + 5_000);
    // Copies no placement backs: D's rows left on the primary (as a move leaves them), C's on
    // eu-1, and a fleet registration on eu-1 (the fleet's live on the primary only).
    await db.sql.query("INSERT INTO worker_registrations (tenant_id, worker_id, handler_name) VALUES ($1, 'ghost-b', 'pack')", [d.id]);
    await db.sql.query(
      `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, state, worker_id, claimed_at, heartbeat_at)
       VALUES (gen_random_uuid(), $1, gen_random_uuid(), 'x', 'pack', 'claimed', 'w-d1', now(), now())`, [d.id],
    );
    await second.sql.query("INSERT INTO worker_registrations (tenant_id, worker_id, handler_name) VALUES ($1, 'ghost-a', 'pack')", [c.id]);
    await second.sql.query("INSERT INTO worker_registrations (tenant_id, worker_id, handler_name) VALUES ('', 'ghost-fleet', 'ship')");
  });

  it("lists the fleet's workers and each tenant's, only from where each tenant is placed, with claims and stale claims", async () => {
    const { workers, limit } = await as(operator).workers.ops.fleet();
    expect(limit).toBe(100);
    const rows = workers.filter((w) => FLEET.includes(w.workerId)).map((w) => ({ tenantId: w.tenantId, workerId: w.workerId, handlers: w.handlers, claimed: w.claimed, stale: w.stale, alive: w.alive }));
    expect(rows).toEqual(expect.arrayContaining([
      { tenantId: "", workerId: "fleet-1", handlers: ["ship"], claimed: 2, stale: 0, alive: true },
      { tenantId: c.id, workerId: "w-c1", handlers: ["pack"], claimed: 1, stale: 1, alive: true },
      { tenantId: d.id, workerId: "w-d1", handlers: ["pack"], claimed: 1, stale: 0, alive: true },
    ]));
    expect(rows).toHaveLength(3);
    // Every tenant's, newest seen first, each naming its tenant.
    const seen = workers.map((w) => Date.parse(w.lastSeenAt));
    expect(seen).toEqual([...seen].sort((x, y) => y - x));
    expect(workers.map((w) => w.tenantId)).toEqual(expect.arrayContaining([a.id, b.id, c.id, d.id, ""]));
  });

  it("is bounded: the most recently seen first, at most `limit`", async () => {
    await poll(c.key, { handler_name: "pack", worker_id: "w-c-newest" });
    const { workers } = await as(operator).workers.ops.fleet({ limit: 1 });
    expect(workers.map((w) => [w.tenantId, w.workerId])).toEqual([[c.id, "w-c-newest"]]);
    await expect(as(operator).workers.ops.fleet({ limit: 501 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("does not exist for anyone but operators", async () => {
    for (const user of [memberA, memberB]) await expect(as(user).workers.ops.fleet()).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
