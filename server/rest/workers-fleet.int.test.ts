// The worker fleet over REST (wire-format T, DESIGN.md "external worker queue"): an operator key
// that names no tenant polls every tenant round robin, placed where it is placed now and not
// while it is being moved, and reports on any tenant's task under the same fence as a tenant key;
// a tenant key still sees its own tasks only, foreign ids answering as missing ones. A worker's
// output gets the context's cap (413), since the engine merges it into context.data.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { parkOnWorkerTask } from "../../test/factories.ts";
import { call, createSequence, expectSameReply, operatorKey, tenantWithKey, type Reply } from "./testing.ts";

let second: TestDatabase; // the `eu-1` backend
let db: TestDatabase; // primary: the control plane, and tenant data placed on it
let operator: string;
beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  operator = await operatorKey(db);
});
afterAll(async () => {
  await db.drop();
  await second.drop();
});

type Tenant = { id: string; key: string };
type WireTask = { id: string; tenant_id?: string; claim_epoch: number; state: string; worker_id: string } & Record<string, unknown>;

const LEASE_CHANGED = { error: "conflict: worker task lease changed" };
const TASK_NOT_FOUND = { error: "not found: worker task not found" };

/** A handler name of its own per test: the fleet spans every tenant of the file. */
const handler = () => `h-${randomUUID().slice(0, 8)}`;

/** A tenant with a key, on `primary` or moved (before it has data) to `eu-1`. */
async function tenantOn(backend: "primary" | "eu-1" = "primary"): Promise<Tenant> {
  const tenant = await tenantWithKey(db);
  if (backend === "eu-1") await db.storage.advanceTenantPlacement(tenant.id, "eu-1", 2);
  return tenant;
}

/** `count` bare tasks of a tenant in `on`'s database, 1 ms apart from `since`, oldest first. */
async function insertTasks(on: TestDatabase, tenantId: string, handlerName: string, count: number, since: Date, queue: string | null = null) {
  const { rows } = await on.sql.query<{ id: string }>(
    `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, queue_name, created_at)
     SELECT gen_random_uuid(), $1, gen_random_uuid(), 'b' || i, $2, $5, $3::timestamptz + i * interval '1 millisecond'
       FROM generate_series(1, $4) AS i
     ORDER BY i
     RETURNING id`,
    [tenantId, handlerName, since, count, queue],
  );
  return rows.map((row) => row.id);
}

const ago = (ms: number) => new Date(Date.now() - ms);

const fleetPoll = (body: Record<string, unknown>, path = "/workers/tasks/poll") =>
  call(db, "POST", path, { key: operator, body: { worker_id: "fleet-1", ...body } });

async function fleetTasks(body: Record<string, unknown>, path?: string): Promise<WireTask[]> {
  const reply = await fleetPoll(body, path);
  expect(reply.status, reply.text).toBe(200);
  return reply.json() as WireTask[];
}

const report = (key: string, taskId: string, action: "complete" | "fail" | "heartbeat", body: Record<string, unknown>, headers = {}) =>
  call(db, "POST", `/workers/tasks/${taskId}/${action}`, { key, body, headers });

function expectJson(reply: Reply, status: number, body: unknown) {
  expect({ status: reply.status, body: reply.json() }).toEqual({ status, body });
}

async function taskRow(on: TestDatabase, id: string) {
  const { rows } = await on.sql.query("SELECT tenant_id, state, worker_id, claim_epoch, output, resume_checkpoint, checkpoint_seq FROM worker_tasks WHERE id = $1", [id]);
  return rows[0];
}

async function events(on: TestDatabase, taskId: string) {
  const { rows } = await on.sql.query("SELECT event, worker_id, claim_epoch FROM worker_task_attempts WHERE task_id = $1 ORDER BY id", [taskId]);
  return rows.map((r) => [r.event, r.worker_id, r.claim_epoch]);
}

describe("the fleet poll: an operator key without a tenant", () => {
  it("is fair: a 50-task backlog does not hold back two tenants of 5, all served within two polls of 12", async () => {
    const h = handler();
    const [big, small1, small2] = [await tenantOn(), await tenantOn(), await tenantOn()];
    // The backlog is the oldest: an oldest-first poll would hand out nothing else for four polls.
    await insertTasks(db, big.id, h, 50, ago(60_000));
    await insertTasks(db, small1.id, h, 5, ago(30_000));
    await insertTasks(db, small2.id, h, 5, ago(20_000));
    const small = new Set([small1.id, small2.id]);

    const poll1 = await fleetTasks({ handler_name: h, limit: 12 });
    expect(poll1).toHaveLength(12);
    expect(new Set(poll1.map((t) => t.tenant_id))).toEqual(new Set([big.id, small1.id, small2.id]));
    const poll2 = await fleetTasks({ handler_name: h, limit: 12 });
    expect(poll2).toHaveLength(12);
    expect([...poll1, ...poll2].filter((t) => small.has(t.tenant_id!))).toHaveLength(10);
    // Round robin, tenants in the order of their oldest task: big, small1, small2, big, …
    expect(poll1.map((t) => t.tenant_id)).toEqual([1, 2, 3, 4].flatMap(() => [big.id, small1.id, small2.id]));
    expect(poll2.map((t) => t.tenant_id)).toEqual([big.id, small1.id, small2.id, ...Array(9).fill(big.id)]);
    expect(await fleetTasks({ handler_name: h, limit: 12 })).toSatisfy((tasks: WireTask[]) => tasks.every((t) => t.tenant_id === big.id));
  });

  it("answers each task as a <WorkerTask> plus its tenant_id, claimed under a lease like a tenant's poll", async () => {
    const h = handler();
    const acme = await tenantOn();
    const { instanceId, taskId } = await parkOnWorkerTask(db, acme.id, h, { params: { invoice: 7 }, context: { data: { customer: "c1" }, config: null } });
    const [task] = await fleetTasks({ handler_name: h });
    expect(task).toEqual({
      id: taskId, instance_id: instanceId, block_id: "ext", handler_name: h, params: { invoice: 7 }, context: { data: { customer: "c1" }, config: null },
      attempt: 0, timeout_ms: null, state: "claimed", worker_id: "fleet-1", claimed_at: expect.stringMatching(/Z$/), heartbeat_at: expect.stringMatching(/Z$/),
      claim_epoch: 1, checkpoint_seq: 0, completed_at: null, output: null, error_message: null, error_retryable: null, created_at: expect.stringMatching(/Z$/),
      tenant_id: acme.id,
    });
    expect(await events(db, taskId)).toEqual([["claimed", "fleet-1", 1]]);
    expect(await fleetTasks({ handler_name: h, limit: 0 })).toEqual([]);
  });

  it("merges backends round robin too, and serves the queue poll by queue", async () => {
    const h = handler();
    const [here, there] = [await tenantOn(), await tenantOn("eu-1")];
    const mine = await insertTasks(db, here.id, h, 6, ago(60_000));
    const theirs = await insertTasks(second, there.id, h, 2, ago(50_000));
    const tasks = await fleetTasks({ handler_name: h, limit: 5 });
    expect(tasks.map((t) => t.id)).toEqual([mine[0], theirs[0], mine[1], theirs[1], mine[2]]);
    expect((await taskRow(second, theirs[0]!)).state).toBe("claimed");
    expect((await taskRow(db, mine[3]!)).state).toBe("pending"); // each backend claimed only its share

    const q = handler();
    const [billingHere] = await insertTasks(db, here.id, q, 1, ago(40_000), "billing");
    await insertTasks(db, here.id, q, 1, ago(50_000), "mail");
    const [billingThere] = await insertTasks(second, there.id, q, 1, ago(30_000), "billing");
    const queued = await fleetTasks({ handler_name: q, queue_name: "billing", limit: 10 }, "/workers/tasks/poll/queue");
    expect(queued.map((t) => [t.id, t.tenant_id, t.queue_name])).toEqual([[billingHere, here.id, "billing"], [billingThere, there.id, "billing"]]);
  });

  it("never returns a task of a tenant placed on another backend, or quiesced for a move", async () => {
    const h = handler();
    const [moved, unserved, moving, plain] = [await tenantOn("eu-1"), await tenantOn(), await tenantOn(), await tenantOn()];
    // Rows a move left on the old backend, older than anything else.
    const [leftBehind] = await insertTasks(db, moved.id, h, 1, ago(3_600_000));
    const [current] = await insertTasks(second, moved.id, h, 1, ago(10_000));
    // A placement on a backend this process does not serve: its rows here are nobody's to hand out.
    await db.sql.query("UPDATE tenant_storage_placements SET backend_id = 'eu-9', epoch = epoch + 1 WHERE tenant_id = $1", [unserved.id]);
    const [unservedTask] = await insertTasks(db, unserved.id, h, 1, ago(3_600_000));
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [moving.id]);
    const [movingTask] = await insertTasks(db, moving.id, h, 1, ago(3_600_000));
    const [plainTask] = await insertTasks(db, plain.id, h, 1, ago(5_000));

    const tasks = await fleetTasks({ handler_name: h, limit: 100 });
    expect(tasks.map((t) => [t.id, t.tenant_id])).toEqual([[current, moved.id], [plainTask, plain.id]]);
    expect(await fleetTasks({ handler_name: h, limit: 100 })).toEqual([]);
    for (const id of [leftBehind!, unservedTask!, movingTask!]) expect((await taskRow(db, id)).state, id).toBe("pending");

    // Once the move is over (resumed), its tasks are served again.
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = NULL WHERE tenant_id = $1", [moving.id]);
    expect((await fleetTasks({ handler_name: h, limit: 100 })).map((t) => t.id)).toEqual([movingTask]);
  });

  it("leaves a tenant's key and an operator naming a tenant on the tenant's own poll, wire shape unchanged", async () => {
    const h = handler();
    const [acme, globex] = [await tenantOn(), await tenantOn()];
    const [theirs] = await insertTasks(db, globex.id, h, 1, ago(3_600_000));
    const [ours, ours2] = await insertTasks(db, acme.id, h, 2, ago(10_000));
    const own = await call(db, "POST", "/workers/tasks/poll", { key: acme.key, body: { handler_name: h, worker_id: "w1", limit: 10 } });
    expect((own.json() as WireTask[]).map((t) => t.id)).toEqual([ours, ours2]);
    expect(own.json() as WireTask[]).toSatisfy((tasks: WireTask[]) => tasks.every((t) => !("tenant_id" in t)));
    expect((await taskRow(db, theirs!)).state).toBe("pending");
    const [another] = await insertTasks(db, acme.id, h, 1, ago(5_000));
    const named = await call(db, "POST", "/workers/tasks/poll", { key: operator, body: { handler_name: h, worker_id: "ops" }, headers: { "x-tenant-id": acme.id } });
    expect(named.json()).toEqual([expect.not.objectContaining({ tenant_id: expect.anything() })]);
    expect((named.json() as WireTask[])[0]!.id).toBe(another);
    // The other worker routes still need the operator to name a tenant.
    for (const [method, path] of [["GET", "/workers/tasks"], ["GET", "/workers/tasks/stats"], ["GET", `/workers/tasks/${theirs}/attempts`]] as const) {
      expectJson(await call(db, method, path, { key: operator }), 400, {
        error: "invalid argument: an operator key must name the tenant (X-Tenant-Id header or tenant_id)",
      });
    }
  });
});

describe("reports by the fleet on any tenant's task", () => {
  it("complete, fail and heartbeat work on tasks of tenants on either backend, fenced by worker_id and claim_epoch", async () => {
    const h = handler();
    const [acme, euro] = [await tenantOn(), await tenantOn("eu-1")];
    const done = await parkOnWorkerTask(db, acme.id, h, { ageMs: 3_000 });
    const failed = await parkOnWorkerTask(second, euro.id, h, { ageMs: 2_000 });
    const beating = await parkOnWorkerTask(second, euro.id, h, { ageMs: 1_000 });
    const tasks = await fleetTasks({ handler_name: h, limit: 3 });
    expect(tasks.map((t) => t.id).sort()).toEqual([done.taskId, failed.taskId, beating.taskId].sort());

    for (const { taskId } of [done, failed, beating]) {
      expectJson(await report(operator, taskId, "complete", { worker_id: "fleet-1", claim_epoch: 2, output: {} }), 409, LEASE_CHANGED);
      expectJson(await report(operator, taskId, "fail", { worker_id: "fleet-2", claim_epoch: 1, message: "m" }), 409, LEASE_CHANGED);
      expectJson(await report(operator, taskId, "heartbeat", { worker_id: "fleet-2", claim_epoch: 1 }), 409, LEASE_CHANGED);
    }
    const lease = { worker_id: "fleet-1", claim_epoch: 1 };
    expect((await report(operator, done.taskId, "complete", { ...lease, output: { total: 3 } })).status).toBe(200);
    expect(await taskRow(db, done.taskId)).toMatchObject({ tenant_id: acme.id, state: "completed", output: { total: 3 } });
    expect((await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [done.instanceId])).rows[0].state).toBe("scheduled");
    expect(await events(db, done.taskId)).toEqual([
      ["claimed", "fleet-1", 1], ["stale_mutation_rejected", "fleet-1", 2], ["stale_mutation_rejected", "fleet-2", 1],
      ["stale_mutation_rejected", "fleet-2", 1], ["completed", "fleet-1", 1],
    ]);

    expect((await report(operator, failed.taskId, "fail", { ...lease, message: "vendor down", retryable: true })).status).toBe(200);
    expect(await taskRow(second, failed.taskId)).toMatchObject({ tenant_id: euro.id, state: "failed" });
    expectJson(await report(operator, failed.taskId, "complete", { ...lease, output: {} }), 409, LEASE_CHANGED);

    expectJson(await report(operator, beating.taskId, "heartbeat", { ...lease, checkpoint: { page: 2 }, checkpoint_seq: 0 }), 200, { checkpoint_seq: 1 });
    expectJson(await report(operator, beating.taskId, "heartbeat", { ...lease, checkpoint: { page: 3 }, checkpoint_seq: 0 }), 409, {
      error: "conflict: worker task checkpoint changed: checkpoint_seq is 1, not 0",
    });
    expect(await taskRow(second, beating.taskId)).toMatchObject({ state: "claimed", resume_checkpoint: { page: 2 }, checkpoint_seq: 1 });
    // Nothing of the kind landed on the other backend.
    expect(await taskRow(db, beating.taskId)).toBeUndefined();
  });

  it("answers a missing task 404, and a tenant being moved 503, as for a tenant key", async () => {
    const h = handler();
    const moving = await tenantOn();
    const { taskId } = await parkOnWorkerTask(db, moving.id, h);
    const [task] = await fleetTasks({ handler_name: h });
    expectJson(await report(operator, randomUUID(), "complete", { worker_id: "fleet-1", claim_epoch: 1, output: {} }), 404, TASK_NOT_FOUND);
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [moving.id]);
    const refused = await report(operator, task!.id, "complete", { worker_id: "fleet-1", claim_epoch: 1, output: {} });
    expect(refused.status).toBe(503);
    expect(refused.headers).toContainEqual(["retry-after", "5"]);
    expectSameReply(refused, await report(moving.key, taskId, "complete", { worker_id: "fleet-1", claim_epoch: 1, output: {} }));
    expect((await taskRow(db, taskId)).state).toBe("claimed");
  });

  it("a tenant key reporting on another tenant's task id gets exactly the 404 of a random id, and changes nothing", async () => {
    const h = handler();
    const [acme, globex, euro] = [await tenantOn(), await tenantOn(), await tenantOn("eu-1")];
    const theirs = await parkOnWorkerTask(db, globex.id, h);
    const far = await parkOnWorkerTask(second, euro.id, h);
    await fleetTasks({ handler_name: h, limit: 2 });
    const bodies = {
      complete: { worker_id: "fleet-1", claim_epoch: 1, output: {} },
      fail: { worker_id: "fleet-1", claim_epoch: 1, message: "m" },
      heartbeat: { worker_id: "fleet-1", claim_epoch: 1 },
    } as const;
    for (const action of ["complete", "fail", "heartbeat"] as const) {
      const missing = await report(acme.key, randomUUID(), action, bodies[action]);
      expectJson(missing, 404, TASK_NOT_FOUND);
      for (const id of [theirs.taskId, far.taskId]) expectSameReply(await report(acme.key, id, action, bodies[action]), missing);
    }
    expect(await taskRow(db, theirs.taskId)).toMatchObject({ state: "claimed", worker_id: "fleet-1" });
    expect(await events(db, theirs.taskId)).toEqual([["claimed", "fleet-1", 1]]);
    expect(await events(second, far.taskId)).toEqual([["claimed", "fleet-1", 1]]);
  });
});

describe("a worker's output gets the context cap", () => {
  it("refuses a 300 KiB output with 413 and stores nothing: the task stays claimed, the context unchanged", async () => {
    const h = handler();
    const acme = await tenantOn();
    const { instanceId, taskId } = await parkOnWorkerTask(db, acme.id, h, { context: { data: { customer: "c1" }, config: null } });
    const contextBefore = (await db.sql.query("SELECT context FROM task_instances WHERE id = $1", [instanceId])).rows[0].context;
    const tenantClaim = await call(db, "POST", "/workers/tasks/poll", { key: acme.key, body: { handler_name: h, worker_id: "w1" } });
    expect(tenantClaim.json()).toHaveLength(1);

    const output = { blob: "x".repeat(300 * 1024) };
    const size = JSON.stringify(output).length;
    for (const key of [acme.key, operator]) {
      const reply = await report(key, taskId, "complete", { worker_id: "w1", claim_epoch: 1, output });
      expectJson(reply, 413, { error: `payload too large: output is ${size} bytes, exceeding the maximum of 262144 bytes` });
    }
    expect(await taskRow(db, taskId)).toMatchObject({ state: "claimed", worker_id: "w1", output: null });
    expect(await events(db, taskId)).toEqual([["claimed", "w1", 1]]);
    const after = (await db.sql.query("SELECT state, context FROM task_instances WHERE id = $1", [instanceId])).rows[0];
    expect(after).toEqual({ state: "waiting", context: contextBefore });

    // The same words as an oversized context on POST /instances.
    const sequenceId = await createSequence(db, acme);
    const context = await call(db, "POST", "/instances", {
      key: acme.key, body: { sequence_id: sequenceId, tenant_id: acme.id, namespace: "default", context: { data: output } },
    });
    expect(context.status).toBe(413);
    expect((context.json() as { error: string }).error).toMatch(/^payload too large: context is \d+ bytes, exceeding the maximum of 262144 bytes$/);

    // An output at the cap is taken.
    const exact = "x".repeat(256 * 1024 - 2); // a JSON string of exactly 262144 bytes
    expect((await report(acme.key, taskId, "complete", { worker_id: "w1", claim_epoch: 1, output: exact })).status).toBe(200);
    expect((await taskRow(db, taskId)).state).toBe("completed");
  });
});
