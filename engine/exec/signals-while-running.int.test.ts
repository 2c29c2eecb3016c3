// G.2: signals reach an instance whose step is running, through the real scheduler, PostgreSQL
// and a local HTTP vendor. The poller reads the queue every 250 ms; what it applies acts at once:
// - pause abandons an in-process call (sleep, http_request: anything the registry runs), which
//   runs again after resume; a shielded step finishes first; a worker task is left to its worker
//   and its result taken on resume;
// - update_context is written (and the signal marked delivered) while the step runs on;
// - cancel ends the instance.
// Each test bounds the delay at 1.5 s against a step that would run for 10 minutes, so the bound
// tells "applied while running" from "applied when the step ended"; the measured delays are
// printed for the closing note.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { createBuiltInHandlers } from "../handlers/registry.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import { asTenantId } from "../storage/index.ts";
import { enqueueSignalIfActive, type NewSignal } from "../storage/signals.ts";
import { completeWorkerTask, pollWorkerTasks } from "../storage/worker-tasks.ts";

const TENANT = "acme";
const TEN_MINUTES = 600_000;
const BOUND_MS = 1500;

let db: TestDatabase;
let scheduler: Scheduler;
let vendor: http.Server;
let vendorUrl = "";
/** Requests the vendor has seen per path, and the open ones it may answer later. */
const seen = new Map<string, number>();
const closed = new Map<string, number>();

beforeAll(async () => {
  db = await freshDatabase();
  // The first request to a path hangs (a vendor that takes 10 minutes); later ones answer at once.
  vendor = http.createServer((req, res) => {
    const n = (seen.get(req.url!) ?? 0) + 1;
    seen.set(req.url!, n);
    req.on("close", () => closed.set(req.url!, (closed.get(req.url!) ?? 0) + 1));
    if (n > 1) res.end(JSON.stringify({ call: n }));
  });
  await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
  vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
  scheduler = makeScheduler(db, { handlers: createBuiltInHandlers({ httpAllow: ["127.0.0.1"] }), ownerId: "signals-while-running" });
  await scheduler.start();
});
afterAll(async () => {
  await scheduler.stop();
  vendor.closeAllConnections();
  await new Promise((resolve) => vendor.close(resolve));
  await db.drop();
});

const step = (id: string, handler: string, params: unknown = null, extra: object = {}) => ({ type: "step", id, handler, params, ...extra });
const longSleep = (id: string) => step(id, "sleep", { duration_ms: TEN_MINUTES });

async function start(blocks: unknown[], data: unknown = null) {
  const [id] = await insertInstancesOf(db, TENANT, await insertSequence(db, TENANT, blocks), 1, { data, config: null });
  return id!;
}

async function instance(id: string) {
  const { rows } = await db.sql.query("SELECT state, context, cursor FROM task_instances WHERE id = $1", [id]);
  return rows[0];
}

async function outputs(id: string): Promise<string[]> {
  const { rows } = await db.sql.query("SELECT block_id FROM block_outputs WHERE instance_id = $1 ORDER BY created_at, id", [id]);
  return rows.map((r) => r.block_id);
}

/** Polls (every 10 ms) until `done` holds; the time it took, or a failure after `timeoutMs`. */
async function within(timeoutMs: number, done: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await done())) {
    if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Math.round(performance.now() - started);
}

const inState = (id: string, state: string) => async () => (await instance(id)).state === state;
const signal = (id: string, s: NewSignal) => enqueueSignalIfActive(db.sql, asTenantId(TENANT), id, s);

/** Waits until the step is running (its handler called), then lets it run a little. */
async function whileRunning(id: string, running: () => Promise<boolean> = inState(id, "running")) {
  await within(10_000, running);
  await new Promise((resolve) => setTimeout(resolve, 300));
}

function report(what: string, ms: number) {
  console.log(`[signal latency] ${what}: ${ms} ms`);
}

describe("pause reaches a running step", () => {
  it("sleep: paused within the bound, the step marked to run again; resume runs it again", async () => {
    const id = await start([longSleep("nap"), step("after", "noop")]);
    await whileRunning(id);
    await signal(id, { type: "pause", payload: null });
    const ms = await within(BOUND_MS, inState(id, "paused"));
    report("pause, sleep", ms);
    const paused = await instance(id);
    expect(paused.cursor.nodes.nap).toMatchObject({ status: "active", pausedWhileRunning: true });
    expect(await outputs(id)).toEqual([]);

    await signal(id, { type: "resume", payload: null });
    await within(5_000, async () => (await instance(id)).cursor?.nodes?.nap?.pausedWhileRunning === undefined && (await instance(id)).state === "running");
    await signal(id, { type: "cancel", payload: null });
    report("cancel, sleep", await within(BOUND_MS, inState(id, "cancelled")));
    expect(await outputs(id)).toEqual([]);
  });

  it("http_request: the hanging call is abandoned (the vendor sees its connection close) and made again after resume", async () => {
    const id = await start([step("call", "http_request", { url: `${vendorUrl}/slow-1`, method: "GET" }), step("after", "noop")]);
    await whileRunning(id, async () => seen.get("/slow-1") === 1);
    await signal(id, { type: "pause", payload: null });
    report("pause, http_request", await within(BOUND_MS, inState(id, "paused")));
    await within(2_000, async () => closed.get("/slow-1") === 1);

    await signal(id, { type: "resume", payload: null });
    await within(10_000, inState(id, "completed"));
    expect(seen.get("/slow-1")).toBe(2);
    expect(await outputs(id)).toEqual(["call", "after"]);
  });

  it("worker task: left to its worker while paused; its result is taken on resume, and the abandoned sleep beside it runs again", async () => {
    const id = await start([
      { type: "parallel", id: "p", branches: [[step("work", "pause-test-worker")], [step("nap", "sleep", { duration_ms: 1500 })]] },
      step("after", "noop"),
    ]);
    await whileRunning(id);
    await signal(id, { type: "pause", payload: null });
    report("pause, sleep beside a worker task", await within(BOUND_MS, inState(id, "paused")));

    const [task] = await pollWorkerTasks(db.sql, asTenantId(TENANT), { handlerName: "pause-test-worker", queueName: null, workerId: "w1", limit: 1 });
    expect(task).toBeDefined();
    await completeWorkerTask(db.sql, asTenantId(TENANT), task!.id, { workerId: "w1", claimEpoch: task!.claimEpoch }, { done: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await instance(id)).state).toBe("paused");

    await signal(id, { type: "resume", payload: null });
    await within(10_000, inState(id, "completed"));
    expect((await outputs(id)).sort()).toEqual(["after", "nap", "work"]);
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM worker_tasks WHERE instance_id = $1", [id]);
    expect(rows[0].n).toBe(1);
  });

  it("a shielded sleep (in a cancellation_scope) finishes first, then the instance pauses", async () => {
    const id = await start([{ type: "cancellation_scope", id: "scope", blocks: [step("guarded", "sleep", { duration_ms: 1200 })] }, step("after", "noop")]);
    await whileRunning(id);
    await signal(id, { type: "pause", payload: null });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await instance(id)).state).toBe("running");
    await within(5_000, inState(id, "paused"));
    expect(await outputs(id)).toEqual(["guarded"]);
    await signal(id, { type: "resume", payload: null });
    await within(10_000, inState(id, "completed"));
    expect(await outputs(id)).toEqual(["guarded", "after"]);
  });
});

describe("update_context reaches a running step", () => {
  it("is written to the context, and the signal delivered, while a 10-minute sleep runs on", async () => {
    const id = await start([longSleep("nap")], { keep: 1 });
    await whileRunning(id);
    const { id: signalId } = await signal(id, { type: "update_context", payload: { data: { plan: "pro" } } });
    const ms = await within(BOUND_MS, async () => (await instance(id)).context?.data?.plan === "pro");
    report("update_context, sleep", ms);
    expect((await instance(id)).context.data).toEqual({ keep: 1, plan: "pro" });
    const { rows } = await db.sql.query("SELECT delivered FROM signals WHERE id = $1", [signalId]);
    expect(rows).toEqual([{ delivered: true }]);
    expect((await instance(id)).state).toBe("running");
    await signal(id, { type: "cancel", payload: null });
    await within(BOUND_MS, inState(id, "cancelled"));
  });
});
