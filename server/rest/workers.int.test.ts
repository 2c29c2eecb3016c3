// External workers over REST (E.15-E.22, wire-format H): the wire shapes, fencing answers (409),
// unknown and foreign tasks alike (404), heartbeat checkpoints (400/409/413), listing, stats and
// attempts, and that a worker key only ever sees its own tenant's tasks.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cancelWorkerTasks, reapWorkerTasks } from "../../engine/storage/worker-tasks.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { parkOnWorkerTask } from "../../test/factories.ts";
import { ROUTES } from "./routes.ts";
import { call, expectSameReply, operatorKey, tenantWithKey, type Reply } from "./testing.ts";
import { asTenantId } from "../../engine/storage/index.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
});
afterAll(() => db.drop());

const PLAIN = "text/plain; charset=utf-8";
const LEASE_CHANGED = { error: "conflict: worker task lease changed" };
const TASK_NOT_FOUND = { error: "not found: worker task not found" };

/** A handler name of its own per test, so tests never see each other's tasks. */
const handler = () => `h-${randomUUID().slice(0, 8)}`;

const park = (tenantId: string, handlerName: string, options: { queue?: string; blockId?: string; ageMs?: number } = {}) =>
  parkOnWorkerTask(db, tenantId, handlerName, { ...options, params: { invoice: 7 }, context: { data: { customer: "c1" }, config: null } });

type Tenant = { id: string; key: string };

const poll = (tenant: Tenant, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(db, "POST", "/workers/tasks/poll", { key: tenant.key, body: { worker_id: "w1", ...body }, headers });

/** Polls one task of `handlerName` for worker w1 and returns it. */
async function claim(tenant: Tenant, handlerName: string, workerId = "w1") {
  const reply = await poll(tenant, { handler_name: handlerName, worker_id: workerId });
  expect(reply.status).toBe(200);
  const [task] = reply.json() as { id: string; claim_epoch: number }[];
  expect(task).toBeDefined();
  return task!;
}

const report = (tenant: Tenant, taskId: string, action: "complete" | "fail" | "heartbeat", body: Record<string, unknown>, headers = {}) =>
  call(db, "POST", `/workers/tasks/${taskId}/${action}`, { key: tenant.key, body, headers });

async function instanceState(id: string) {
  const { rows } = await db.sql.query<{ state: string; due: boolean }>("SELECT state, next_fire_at <= now() AS due FROM task_instances WHERE id = $1", [id]);
  return rows[0]!;
}

async function attempts(tenant: Tenant, taskId: string) {
  const reply = await call(db, "GET", `/workers/tasks/${taskId}/attempts`, { key: tenant.key });
  expect(reply.status).toBe(200);
  return reply.json() as { event: string; worker_id?: string; claim_epoch: number; reason?: string }[];
}

function expectJson(reply: Reply, status: number, body: unknown) {
  expect({ status: reply.status, body: reply.json() }).toEqual({ status, body });
}

describe("POST /workers/tasks/poll", () => {
  it("claims the oldest pending task of the handler and answers it as a <WorkerTask>", async () => {
    const h = handler();
    const older = await park(acme.id, h, { ageMs: 2_000 });
    await park(acme.id, h);
    const reply = await poll(acme, { handler_name: h });
    expect(reply.status).toBe(200);
    const [task] = reply.json() as Record<string, unknown>[];
    expect(task).toEqual({
      id: older.taskId,
      instance_id: older.instanceId,
      block_id: "ext",
      handler_name: h,
      params: { invoice: 7 },
      context: { data: { customer: "c1" }, config: null },
      attempt: 0,
      timeout_ms: null,
      state: "claimed",
      worker_id: "w1",
      claimed_at: expect.stringMatching(/Z$/),
      heartbeat_at: expect.stringMatching(/Z$/),
      claim_epoch: 1,
      checkpoint_seq: 0,
      completed_at: null,
      output: null,
      error_message: null,
      error_retryable: null,
      created_at: expect.stringMatching(/Z$/),
    });
    // queue_name and resume_checkpoint are omitted when unset.
    expect(Object.keys(task!)).not.toContain("queue_name");
    expect(Object.keys(task!)).not.toContain("resume_checkpoint");
  });

  it("claims one task by default, up to `limit`, and answers [] when none is pending", async () => {
    const h = handler();
    for (let i = 0; i < 4; i++) await park(acme.id, h, { ageMs: 4_000 - i * 1000 });
    expect((await poll(acme, { handler_name: h })).json()).toHaveLength(1);
    expect((await poll(acme, { handler_name: h, limit: 2 })).json()).toHaveLength(2);
    expect((await poll(acme, { handler_name: h, limit: 1000 })).json()).toHaveLength(1);
    expectJson(await poll(acme, { handler_name: h, limit: 5000 }), 200, []);
    expectJson(await poll(acme, { handler_name: "nobody-serves-this" }), 200, []);
  });

  it("refuses a malformed body with a plain-text 422", async () => {
    for (const body of [
      { worker_id: "w1" }, // handler_name missing
      { handler_name: "x", worker_id: undefined },
      { handler_name: "x", worker_id: " " },
      { handler_name: "x", limit: -1 },
      { handler_name: "x", limit: 1.5 },
      { handler_name: 7 },
    ]) {
      const reply = await call(db, "POST", "/workers/tasks/poll", { key: acme.key, body });
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.contentType).toBe(PLAIN);
    }
  });

  it("never hands a tenant's key another tenant's tasks, even older ones of the same handler", async () => {
    const h = handler();
    const theirs = await park(globex.id, h, { ageMs: 3_600_000 });
    const ours = await park(acme.id, h);
    const reply = await poll(acme, { handler_name: h, limit: 10 });
    expect((reply.json() as { id: string }[]).map((t) => t.id)).toEqual([ours.taskId]);
    expectJson(await poll(acme, { handler_name: h, limit: 10 }), 200, []);
    // Asking in the other tenant's name is a 404, as for a missing tenant.
    for (const headers of [{ "x-tenant-id": globex.id }, { "x-tenant-id": "no-such-tenant" }]) {
      expectJson(await poll(acme, { handler_name: h }, headers), 404, { error: "not found: tenant not found" });
    }
    expectJson(await poll(acme, { handler_name: h, tenant_id: globex.id }), 404, { error: "not found: tenant not found" });
    const { rows } = await db.sql.query("SELECT state FROM worker_tasks WHERE id = $1", [theirs.taskId]);
    expect(rows[0].state).toBe("pending");
    expect((await claim(globex, h)).id).toBe(theirs.taskId);
  });

  // An operator key that names no tenant is the fleet: see workers-fleet.int.test.ts.
  it("lets an operator key poll for the tenant it names, and that tenant only", async () => {
    const key = await operatorKey(db);
    const h = handler();
    const ours = await park(acme.id, h);
    await park(globex.id, h, { ageMs: 60_000 });
    const reply = await call(db, "POST", "/workers/tasks/poll", { key, body: { handler_name: h, worker_id: "ops" }, headers: { "x-tenant-id": acme.id } });
    expect((reply.json() as { id: string }[]).map((t) => t.id)).toEqual([ours.taskId]);
    // The body may name the tenant instead.
    const second = await park(acme.id, h);
    const named = await call(db, "POST", "/workers/tasks/poll", { key, body: { handler_name: h, worker_id: "ops", tenant_id: acme.id } });
    expect((named.json() as { id: string }[]).map((t) => t.id)).toEqual([second.taskId]);
    const done = await call(db, "POST", `/workers/tasks/${ours.taskId}/complete`, {
      key, body: { worker_id: "ops", claim_epoch: 1, output: {} }, headers: { "x-tenant-id": acme.id },
    });
    expect(done.status).toBe(200);
  });
});

describe("POST /workers/tasks/poll/queue", () => {
  it("claims only tasks of the queue named (and the handler), oldest first", async () => {
    const h = handler();
    const billing = await park(acme.id, h, { queue: "billing", ageMs: 3_000 });
    const mail = await park(acme.id, h, { queue: "mail", ageMs: 2_000 });
    const billingNewer = await park(acme.id, h, { queue: "billing" });
    await park(acme.id, handler(), { queue: "billing", ageMs: 10_000 });
    const reply = await call(db, "POST", "/workers/tasks/poll/queue", {
      key: acme.key, body: { queue_name: "billing", handler_name: h, worker_id: "w1", limit: 10 },
    });
    expect(reply.status).toBe(200);
    const tasks = reply.json() as { id: string; queue_name: string; claim_epoch: number }[];
    expect(tasks.map((t) => t.id)).toEqual([billing.taskId, billingNewer.taskId]);
    expect(tasks.map((t) => [t.queue_name, t.claim_epoch])).toEqual([["billing", 1], ["billing", 1]]);
    // The plain poll takes any queue.
    expect(((await poll(acme, { handler_name: h, limit: 10 })).json() as { id: string }[]).map((t) => t.id)).toEqual([mail.taskId]);
  });

  it("requires queue_name and handler_name (422)", async () => {
    for (const body of [{ handler_name: "x", worker_id: "w" }, { queue_name: "q", worker_id: "w" }]) {
      const reply = await call(db, "POST", "/workers/tasks/poll/queue", { key: acme.key, body });
      expect(reply.status).toBe(422);
      expect(reply.contentType).toBe(PLAIN);
    }
  });
});

describe("POST /workers/tasks/{id}/complete", () => {
  it("completes the task with an empty 200 and wakes the waiting instance, due now", async () => {
    const h = handler();
    const { instanceId, taskId } = await park(acme.id, h);
    const task = await claim(acme, h);
    const reply = await report(acme, taskId, "complete", { worker_id: "w1", claim_epoch: task.claim_epoch, output: { total: 3 }, logs: ["ok"] });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
    expect(await instanceState(instanceId)).toEqual({ state: "scheduled", due: true });
    const listed = await call(db, "GET", `/workers/tasks?handler_name=${h}`, { key: acme.key });
    expect(listed.json()).toEqual([expect.objectContaining({ id: taskId, state: "completed", output: { total: 3 }, completed_at: expect.any(String) })]);
    expect((await attempts(acme, taskId)).map((a) => a.event)).toEqual(["claimed", "completed"]);
  });

  it("accepts a JSON null output, and refuses a missing one (422)", async () => {
    const h = handler();
    const { taskId } = await park(acme.id, h);
    await claim(acme, h);
    const missing = await report(acme, taskId, "complete", { worker_id: "w1", claim_epoch: 1 });
    expect(missing.status).toBe(422);
    expect(missing.text).toMatch(/output/);
    expect((await report(acme, taskId, "complete", { worker_id: "w1", claim_epoch: 1, output: null })).status).toBe(200);
  });

  it("answers 409 for a stale claim_epoch or another worker, and records stale_mutation_rejected", async () => {
    const h = handler();
    const { instanceId, taskId } = await park(acme.id, h);
    await claim(acme, h);
    expectJson(await report(acme, taskId, "complete", { worker_id: "w1", claim_epoch: 2, output: {} }), 409, LEASE_CHANGED);
    expectJson(await report(acme, taskId, "complete", { worker_id: "intruder", claim_epoch: 1, output: {} }), 409, LEASE_CHANGED);
    expect(await instanceState(instanceId)).toMatchObject({ state: "waiting" });
    expect((await attempts(acme, taskId)).map((a) => [a.event, a.worker_id, a.claim_epoch, a.reason])).toEqual([
      ["claimed", "w1", 1, undefined],
      ["stale_mutation_rejected", "w1", 2, "complete: worker task lease changed"],
      ["stale_mutation_rejected", "intruder", 1, "complete: worker task lease changed"],
    ]);
  });

  it("accepts a late completion for a terminal instance (200) and leaves the instance as it was", async () => {
    const h = handler();
    const { instanceId, taskId } = await park(acme.id, h);
    await db.sql.query("UPDATE task_instances SET state = 'cancelled', next_fire_at = NULL WHERE id = $1", [instanceId]);
    await claim(acme, h);
    expect((await report(acme, taskId, "complete", { worker_id: "w1", claim_epoch: 1, output: { late: true } })).status).toBe(200);
    expect(await instanceState(instanceId)).toEqual({ state: "cancelled", due: null });
  });
});

describe("POST /workers/tasks/{id}/fail", () => {
  it("fails the task (retryable false by default) and wakes the instance", async () => {
    const h = handler();
    const { instanceId, taskId } = await park(acme.id, h);
    await claim(acme, h);
    const reply = await report(acme, taskId, "fail", { worker_id: "w1", claim_epoch: 1, message: "card declined" });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
    expect(await instanceState(instanceId)).toEqual({ state: "scheduled", due: true });
    const [task] = (await call(db, "GET", `/workers/tasks?handler_name=${h}`, { key: acme.key })).json() as Record<string, unknown>[];
    expect(task).toMatchObject({ state: "failed", error_message: "card declined", error_retryable: false, output: null });
    expect((await attempts(acme, taskId)).at(-1)).toMatchObject({ event: "failed", reason: "card declined" });
  });

  it("keeps retryable: true, and answers 409 to a second report", async () => {
    const h = handler();
    const { taskId } = await park(acme.id, h);
    await claim(acme, h);
    expect((await report(acme, taskId, "fail", { worker_id: "w1", claim_epoch: 1, message: "busy", retryable: true })).status).toBe(200);
    expectJson(await report(acme, taskId, "fail", { worker_id: "w1", claim_epoch: 1, message: "again" }), 409, LEASE_CHANGED);
    const [task] = (await call(db, "GET", `/workers/tasks?handler_name=${h}`, { key: acme.key })).json() as Record<string, unknown>[];
    expect(task).toMatchObject({ error_message: "busy", error_retryable: true });
  });

  it("refuses a missing message or a wrong-typed field (422)", async () => {
    const id = randomUUID();
    for (const body of [{ worker_id: "w1", claim_epoch: 1 }, { worker_id: "w1", claim_epoch: "1", message: "m" }, { worker_id: "w1", claim_epoch: 1, message: "m", retryable: "yes" }]) {
      expect((await report(acme, id, "fail", body)).status, JSON.stringify(body)).toBe(422);
    }
  });
});

describe("POST /workers/tasks/{id}/heartbeat", () => {
  it("answers the current checkpoint_seq; with a checkpoint it is a compare-and-set that answers old + 1", async () => {
    const h = handler();
    const { taskId } = await park(acme.id, h);
    await claim(acme, h);
    expectJson(await report(acme, taskId, "heartbeat", { worker_id: "w1", claim_epoch: 1 }), 200, { checkpoint_seq: 0 });
    expectJson(await report(acme, taskId, "heartbeat", { worker_id: "w1", claim_epoch: 1, checkpoint: { page: 1 }, checkpoint_seq: 0 }), 200, { checkpoint_seq: 1 });
    // A null checkpoint is no checkpoint.
    expectJson(await report(acme, taskId, "heartbeat", { worker_id: "w1", claim_epoch: 1, checkpoint: null, checkpoint_seq: 9 }), 200, { checkpoint_seq: 1 });
    expectJson(await report(acme, taskId, "heartbeat", { worker_id: "w1", claim_epoch: 1, checkpoint: { page: 0 }, checkpoint_seq: 0 }), 409, {
      error: "conflict: worker task checkpoint changed: checkpoint_seq is 1, not 0",
    });
    const [task] = (await call(db, "GET", `/workers/tasks?handler_name=${h}`, { key: acme.key })).json() as Record<string, unknown>[];
    expect(task).toMatchObject({ resume_checkpoint: { page: 1 }, checkpoint_seq: 1 });
    expect((await attempts(acme, taskId)).map((a) => a.event)).toEqual(["claimed", "stale_mutation_rejected"]);
  });

  it("400 for a checkpoint without checkpoint_seq, 413 for one over 256 KiB, 409 for another lease", async () => {
    const h = handler();
    const { taskId } = await park(acme.id, h);
    await claim(acme, h);
    expectJson(await report(acme, taskId, "heartbeat", { worker_id: "w1", claim_epoch: 1, checkpoint: { a: 1 } }), 400, {
      error: "invalid argument: checkpoint requires checkpoint_seq",
    });
    const big = await report(acme, taskId, "heartbeat", { worker_id: "w1", claim_epoch: 1, checkpoint: "x".repeat(256 * 1024), checkpoint_seq: 0 });
    expect(big.status).toBe(413);
    expect((big.json() as { error: string }).error).toMatch(/^payload too large: checkpoint is 262146 bytes/);
    expectJson(await report(acme, taskId, "heartbeat", { worker_id: "w2", claim_epoch: 1 }), 409, LEASE_CHANGED);
    expectJson(await report(acme, taskId, "heartbeat", { worker_id: "w1", claim_epoch: 0, checkpoint: 1, checkpoint_seq: 0 }), 409, LEASE_CHANGED);
    expectJson(await report(acme, taskId, "heartbeat", { worker_id: "w1", claim_epoch: 1, checkpoint: 1, checkpoint_seq: 0 }), 200, { checkpoint_seq: 1 });
  });
});

describe("404: unknown and foreign tasks answer alike", () => {
  const bodies = {
    complete: { worker_id: "w1", claim_epoch: 1, output: {} },
    fail: { worker_id: "w1", claim_epoch: 1, message: "m" },
    heartbeat: { worker_id: "w1", claim_epoch: 1 },
  } as const;

  it("on every worker route that takes an id, byte for byte, and the foreign task is untouched", async () => {
    const h = handler();
    const theirs = await park(globex.id, h);
    await claim(globex, h);
    const idRoutes = ROUTES.filter((route) => route.path.startsWith("/workers/") && route.path.includes("{id}"));
    expect(idRoutes.map((route) => `${route.method} ${route.path}`)).toEqual([
      "POST /workers/tasks/{id}/complete", "POST /workers/tasks/{id}/fail", "POST /workers/tasks/{id}/heartbeat", "GET /workers/tasks/{id}/attempts",
    ]);
    for (const route of idRoutes) {
      expect(route.notFound).toBe("worker task");
      const action = route.path.split("/").at(-1) as keyof typeof bodies | "attempts";
      const body = action === "attempts" ? undefined : bodies[action];
      const path = (id: string) => route.path.replace("{id}", id);
      const missing = await call(db, route.method, path(randomUUID()), { key: acme.key, body });
      expectJson(missing, 404, TASK_NOT_FOUND);
      for (const reply of await Promise.all([
        call(db, route.method, path(theirs.taskId), { key: acme.key, body }),
        call(db, route.method, path(theirs.taskId), { key: acme.key, body, headers: { "x-tenant-id": globex.id } }),
        call(db, route.method, `${path(theirs.taskId)}?tenant_id=${globex.id}`, { key: acme.key, body }),
      ])) {
        expectSameReply(reply, missing);
      }
    }
    const { rows } = await db.sql.query("SELECT state FROM worker_tasks WHERE id = $1", [theirs.taskId]);
    expect(rows[0].state).toBe("claimed");
    expect((await attempts(globex, theirs.taskId)).map((a) => a.event)).toEqual(["claimed"]);
  });

  it("a path id that is not a UUID is a plain-text 400", async () => {
    const reply = await report(acme, "not-a-uuid", "complete", bodies.complete);
    expect(reply.status).toBe(400);
    expect(reply.contentType).toBe(PLAIN);
  });
});

describe("the reaper and cancellation, seen by workers", () => {
  it("a reclaimed task goes to the next poller with epoch 2; the old worker's completion is 409", async () => {
    const h = handler();
    const { taskId } = await park(acme.id, h);
    await claim(acme, h, "old");
    await db.sql.query("UPDATE worker_tasks SET heartbeat_at = now() - interval '2 minutes' WHERE id = $1", [taskId]);
    expect((await reapWorkerTasks(db.sql, new Date(), { staleMs: 60_000, limit: 100 })).reclaimed).toBe(1);
    const again = await claim(acme, h, "new");
    expect(again).toMatchObject({ id: taskId, claim_epoch: 2, worker_id: "new" });
    expectJson(await report(acme, taskId, "complete", { worker_id: "old", claim_epoch: 1, output: {} }), 409, LEASE_CHANGED);
    expect((await report(acme, taskId, "complete", { worker_id: "new", claim_epoch: 2, output: {} })).status).toBe(200);
    expect((await attempts(acme, taskId)).map((a) => a.event)).toEqual(["claimed", "reclaimed", "claimed", "stale_mutation_rejected", "completed"]);
  });

  it("a cancelled task is never polled again, a report on it is 404, and its attempts end with `cancelled`", async () => {
    const h = handler();
    const claimed = await park(acme.id, h, { ageMs: 2_000 });
    const pending = await park(acme.id, h);
    await claim(acme, h);
    expect(await cancelWorkerTasks(db.sql, asTenantId(acme.id), claimed.instanceId, ["ext"])).toBe(1);
    expect(await cancelWorkerTasks(db.sql, asTenantId(acme.id), pending.instanceId, ["ext"])).toBe(1);
    expectJson(await poll(acme, { handler_name: h, limit: 10 }), 200, []);
    expectJson(await report(acme, claimed.taskId, "complete", { worker_id: "w1", claim_epoch: 1, output: {} }), 404, TASK_NOT_FOUND);
    expectJson(await report(acme, claimed.taskId, "heartbeat", { worker_id: "w1", claim_epoch: 1 }), 404, TASK_NOT_FOUND);
    expect((await attempts(acme, claimed.taskId)).map((a) => a.event)).toEqual(["claimed", "cancelled"]);
  });
});

describe("GET /workers/tasks", () => {
  it("lists the key's tenant's tasks only, newest first, filtered by state, handler, worker and queue", async () => {
    const h = handler();
    const a = await park(acme.id, h, { queue: "q1", ageMs: 3_000 });
    const b = await park(acme.id, h, { ageMs: 2_000 });
    const c = await park(acme.id, h, { queue: "q1", ageMs: 1_000 });
    await park(globex.id, h);
    await claim(acme, h, "w7");
    const ids = async (query: string) => {
      const reply = await call(db, "GET", `/workers/tasks?handler_name=${h}${query}`, { key: acme.key });
      expect(reply.status, query).toBe(200);
      return (reply.json() as { id: string }[]).map((t) => t.id);
    };
    expect(await ids("")).toEqual([c.taskId, b.taskId, a.taskId]);
    expect(await ids("&state=pending")).toEqual([c.taskId, b.taskId]);
    expect(await ids("&state=claimed,completed")).toEqual([a.taskId]);
    expect(await ids("&state=pending&state=claimed")).toEqual([c.taskId, b.taskId, a.taskId]);
    expect(await ids("&worker_id=w7")).toEqual([a.taskId]);
    expect(await ids("&queue_name=q1")).toEqual([c.taskId, a.taskId]);
    expect(await ids("&limit=1&offset=1")).toEqual([b.taskId]);
    expect(await ids(`&tenant_id=${acme.id}`)).toEqual([c.taskId, b.taskId, a.taskId]);
  });

  it("400 for an unknown state or a malformed limit; 404 for another tenant named", async () => {
    expectJson(await call(db, "GET", "/workers/tasks?state=pending,running", { key: acme.key }), 400, { error: 'invalid argument: unknown state "running"' });
    for (const query of ["limit=0", "limit=x", "offset=-1"]) {
      const reply = await call(db, "GET", `/workers/tasks?${query}`, { key: acme.key });
      expect(reply.status, query).toBe(400);
      expect(reply.contentType).toBe(PLAIN);
    }
    expectJson(await call(db, "GET", `/workers/tasks?tenant_id=${globex.id}`, { key: acme.key }), 404, { error: "not found: tenant not found" });
  });
});

describe("GET /workers/tasks/stats", () => {
  it("counts the key's tenant's tasks by state and by handler, and names the workers holding claims", async () => {
    const tenant = await tenantWithKey(db);
    await park(tenant.id, "render", { ageMs: 2_000 });
    await park(tenant.id, "render");
    await park(tenant.id, "mail");
    await park(globex.id, "render");
    await claim(tenant, "render", "w-render");
    const reply = await call(db, "GET", "/workers/tasks/stats", { key: tenant.key });
    expectJson(reply, 200, {
      by_state: { pending: 2, claimed: 1, completed: 0, failed: 0 },
      by_handler: {
        mail: { pending: 1, claimed: 0, completed: 0, failed: 0 },
        render: { pending: 1, claimed: 1, completed: 0, failed: 0 },
      },
      active_workers: ["w-render"],
    });
    const other = await call(db, "GET", "/workers/tasks/stats", { key: tenant.key, headers: { "x-tenant-id": globex.id } });
    expectJson(other, 404, { error: "not found: tenant not found" });
  });
});

describe("GET /workers/tasks/{id}/attempts", () => {
  it("lists the events oldest first in the wire shape; an unclaimed task has none", async () => {
    const h = handler();
    const { taskId } = await park(acme.id, h);
    expectJson(await call(db, "GET", `/workers/tasks/${taskId}/attempts`, { key: acme.key }), 200, []);
    await claim(acme, h);
    await report(acme, taskId, "fail", { worker_id: "w1", claim_epoch: 1, message: "boom", retryable: true });
    const reply = await call(db, "GET", `/workers/tasks/${taskId}/attempts`, { key: acme.key });
    expect(reply.json()).toEqual([
      { id: expect.any(Number), task_id: taskId, claim_epoch: 1, worker_id: "w1", event: "claimed", created_at: expect.stringMatching(/Z$/) },
      { id: expect.any(Number), task_id: taskId, claim_epoch: 1, worker_id: "w1", event: "failed", reason: "boom", created_at: expect.stringMatching(/Z$/) },
    ]);
  });
});
