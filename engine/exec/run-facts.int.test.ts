// Issue 17, items 2 and 3, through the real scheduler, PostgreSQL and a local HTTP vendor: the
// engine keeps context.runtime's run facts true (started_at, current_step and its start and
// attempt, total_steps_executed), every step node its status, start and finish and attempts, and
// every failed attempt its error (message, code, retryable, handler, HTTP status), also when a
// retry or a try_catch swallows it; the catch arm reads the caught message.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { createBuiltInHandlers } from "../handlers/registry.ts";
import { describeInstance } from "../read-model/describe-instance.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import { asTenantId } from "../storage/index.ts";
import { getInstance } from "../storage/instance-records.ts";
import { retryInstance } from "../storage/rerun.ts";
import { enqueueSignalIfActive } from "../storage/signals.ts";
import { completeWorkerTask, pollWorkerTasks } from "../storage/worker-tasks.ts";

const TENANT = asTenantId("facts");
let db: TestDatabase;
let scheduler: Scheduler;
let vendor: http.Server;
let vendorUrl = "";

beforeAll(async () => {
  db = await freshDatabase();
  // Answers 503 "vendor down" on /down (and on /down-once the first time), `{ ok: true }` otherwise.
  let downOnce = true;
  vendor = http.createServer((req, res) => {
    const once = req.url === "/down-once" && downOnce;
    if (once) downOnce = false;
    if (req.url === "/down" || once) {
      res.writeHead(503, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "vendor down" }));
    } else res.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
  vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
  scheduler = makeScheduler(db, { handlers: createBuiltInHandlers({ httpAllow: ["127.0.0.1"] }), ownerId: "run-facts" });
  await scheduler.start();
});
afterAll(async () => {
  await scheduler.stop();
  await new Promise((resolve) => vendor.close(resolve));
  await db.drop();
});

const step = (id: string, handler: string, params: unknown = null, extra: object = {}) => ({ type: "step", id, handler, params, ...extra });

async function start(blocks: unknown[]) {
  const [id] = await insertInstancesOf(db, TENANT, await insertSequence(db, TENANT, blocks), 1, { data: {}, config: null });
  return id!;
}

/** The instance's state, cursor and context from one snapshot: a commit between two reads would pair a new runtime with an old cursor. */
async function row(id: string) {
  const client = await db.sql.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const { rows } = await client.query("SELECT state, cursor FROM task_instances WHERE id = $1", [id]);
    const instance = await getInstance(client, TENANT, id);
    return { state: rows[0].state as string, nodes: rows[0].cursor?.nodes ?? {}, context: instance!.context as { runtime?: Record<string, unknown>; data?: Record<string, unknown> } };
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

async function until(id: string, done: (r: Awaited<ReturnType<typeof row>>) => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await row(id);
    if (done(r)) return r;
    if (Date.now() > deadline) throw new Error(`not reached: ${JSON.stringify({ state: r.state, runtime: r.context.runtime })}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);

describe("run facts", () => {
  it("name the running step, its start and attempt while it runs, and count every attempt", async () => {
    const id = await start([step("first", "noop"), step("nap", "sleep", { duration_ms: 600_000 })]);
    const running = await until(id, (r) => r.context.runtime?.current_step === "nap");
    expect(running.context.runtime).toMatchObject({ started_at: ISO, current_step: "nap", current_step_started_at: ISO, attempt: 0, total_steps_executed: 1 });
    expect(running.nodes.first).toMatchObject({ status: "completed", startedAt: ISO, finishedAt: ISO, attempts: [{ attempt: 0, startedAt: ISO, finishedAt: ISO }] });
    expect(running.nodes.nap).toMatchObject({ status: "active", attempts: [{ attempt: 0, startedAt: ISO }] });
    expect(running.nodes.nap.attempts[0].finishedAt).toBeUndefined();

    await enqueueSignalIfActive(db.sql, TENANT, id, { type: "cancel", payload: null });
    const cancelled = await until(id, (r) => r.state === "cancelled");
    expect(cancelled.context.runtime).toMatchObject({ current_step: null, current_step_started_at: null, total_steps_executed: 1 });
    expect(cancelled.nodes.nap.attempts[0]).toMatchObject({ finishedAt: ISO, interrupted: "cancelled" });
  });

  it("after completion: started_at kept, no current step, every attempt counted (retries too)", async () => {
    const id = await start([
      step("flaky", "http_request", { url: `${vendorUrl}/down`, method: "GET" }, { retry: { max_attempts: 3, initial_backoff: 1, max_backoff: 1 } }),
    ].map((b) => ({ type: "try_catch", id: "guard", try_block: [b], catch_block: [step("note", "log", { message: "caught: {{ context.data._error.message }}" })] })));
    const done = await until(id, (r) => r.state === "completed");
    expect(done.context.runtime).toMatchObject({ started_at: ISO, current_step: null, total_steps_executed: 4 });
    // Every failed attempt keeps its error, though the retries and then the catch swallowed them.
    const attempts = done.nodes.flaky.attempts;
    expect(attempts.map((a: { attempt: number }) => a.attempt)).toEqual([0, 1, 2]);
    for (const attempt of attempts) {
      expect(attempt.error).toEqual({ message: expect.stringContaining("HTTP 503"), retryable: true, code: "http_status", handler: "http_request", httpStatus: 503 });
      expect(attempt.error.message).toContain("vendor down");
    }
    expect(done.nodes.flaky).toMatchObject({ status: "failed", finishedAt: ISO, failure: { code: "http_status", httpStatus: 503 } });
    // The catch arm read the caught message.
    const { rows } = await db.sql.query("SELECT output FROM block_outputs WHERE instance_id = $1 AND block_id = 'note'", [id]);
    expect(rows[0].output.message).toMatch(/^caught: HTTP 503.*vendor down/);
    // The read model the run view and the REST tree read.
    const { rows: [source] } = await db.sql.query(
      "SELECT s.definition, i.cursor FROM task_instances i JOIN sequences s ON s.id = i.sequence_id WHERE i.id = $1", [id]);
    const described = describeInstance(source.definition, source.cursor, { id, state: "completed", createdAt: new Date(), updatedAt: new Date() });
    expect(described.stepRuns.flaky).toMatchObject({ attempt: 2, failure: { code: "http_status", httpStatus: 503 }, pausedWhileRunning: false });
    expect(described.stepRuns.flaky!.attempts).toHaveLength(3);
    expect(described.nodes.find((n) => n.block_id === "note")).toMatchObject({ state: "completed", started_at: ISO, completed_at: ISO });
    expect(done.context.data?._error).toMatchObject({
      message: expect.stringContaining("vendor down"),
      errors: [{ block_id: "flaky", retryable: true, code: "http_status", handler: "http_request", http_status: 503 }],
    });
  });

  it("a failed instance records its cause and the fingerprint failures are grouped by; a retry clears them", async () => {
    const id = await start([step("first", "noop"), step("charge", "http_request", { url: `${vendorUrl}/down-once`, method: "GET" })]);
    await until(id, (r) => r.state === "failed");
    const cause = async () => (await db.sql.query("SELECT failed_block, error_message, error_fingerprint FROM task_instances WHERE id = $1", [id])).rows[0];
    expect(await cause()).toEqual({
      failed_block: "charge",
      error_message: expect.stringMatching(/^HTTP 503 Service Unavailable.*vendor down/),
      error_fingerprint: expect.stringMatching(/^http_request: HTTP # Service Unavailable.*vendor down/),
    });
    await retryInstance(db.sql, TENANT, id);
    await until(id, (r) => r.state === "completed");
    expect(await cause()).toEqual({ failed_block: null, error_message: null, error_fingerprint: null });
  });

  it("a worker task's attempt records its worker, and its failure the worker's message", async () => {
    const id = await start([step("work", "facts-worker"), step("again", "facts-worker")]);
    const waiting = await until(id, (r) => r.state === "waiting");
    expect(waiting.context.runtime).toMatchObject({ current_step: "work", attempt: 0, total_steps_executed: 0 });
    const [task] = await pollWorkerTasks(db.sql, TENANT, { handlerName: "facts-worker", queueName: null, workerId: "worker-7", limit: 1 });
    await completeWorkerTask(db.sql, TENANT, task!.id, { workerId: "worker-7", claimEpoch: task!.claimEpoch }, { fine: true });
    const next = await until(id, (r) => r.context.runtime?.current_step === "again" && r.state === "waiting");
    expect(next.nodes.work.attempts).toEqual([{ attempt: 0, startedAt: ISO, finishedAt: ISO, workerId: "worker-7" }]);
    expect(next.context.runtime?.total_steps_executed).toBe(1);
    await enqueueSignalIfActive(db.sql, TENANT, id, { type: "cancel", payload: null });
    await until(id, (r) => r.state === "cancelled");
  });
});
