// DLQ retry and resume-from (wire-format J) against a real PostgreSQL: what each keeps and wipes
// (tree, marker rows, successes, worker tasks, the run in context.runtime), the states and blocks
// they refuse, and, with a real scheduler, the re-runs themselves: completed blocks are not run
// again and a retried step's attempt counter continues.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { AppError } from "../errors.ts";
import { HandlerRegistry } from "../handlers/registry.ts";
import { failure, success, type Handler } from "../handlers/types.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import { asTenantId } from "./ids.ts";
import { INSTANCE_STATES, type InstanceState } from "./instances.ts";
import { resumeFrom, retryInstance } from "./rerun.ts";

let db: TestDatabase;
let scheduler: Scheduler | null = null;
beforeAll(async () => {
  db = await freshDatabase();
});
afterEach(async () => {
  await scheduler?.stop();
  scheduler = null;
});
afterAll(() => db.drop());

const TENANT = "acme";
const acme = asTenantId(TENANT);
const step = (id: string, handler = "noop", extra: object = {}) => ({ type: "step", id, handler, ...extra });
const RUNTIME = { run_id: "old-run", total_steps_executed: 5, current_step: "b", current_step_started_at: "2026-01-01T00:00:01.000Z", started_at: "2026-01-01T00:00:00.000Z", attempt: 1 };

async function instance(sequenceId: string, state: InstanceState, cursor: unknown, tenantId = TENANT): Promise<string> {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, metadata, cursor, next_fire_at, completed_at,
                                 started_at, current_step, current_step_started_at, current_attempt, steps_executed)
     VALUES (gen_random_uuid(), $1, 'default', $2, $3::text, $4, '{"campaign": "spring"}', $5,
             CASE WHEN $3 = 'scheduled' THEN now() END, CASE WHEN $3 IN ('completed', 'failed', 'cancelled') THEN now() END,
             now() - interval '1 minute', 'b', now() - interval '1 minute', 1, 5)
     RETURNING id`,
    [tenantId, sequenceId, state, JSON.stringify({ data: { kept: true }, config: { tier: 1 }, runtime: RUNTIME }), cursor === null ? null : JSON.stringify(cursor)],
  );
  return rows[0]!.id;
}

async function output(instanceId: string, blockId: string, ref: string | null = null, attempt = 0) {
  await db.sql.query(
    `INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output, output_ref, attempt)
     VALUES (gen_random_uuid(), (SELECT tenant_id FROM task_instances WHERE id = $1), $1, $2, $3, $4, $5)`,
    [instanceId, blockId, JSON.stringify({ from: blockId }), ref, attempt],
  );
}

async function task(instanceId: string, blockId: string, state: string): Promise<string> {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, state, worker_id, claim_epoch)
     VALUES (gen_random_uuid(), (SELECT tenant_id FROM task_instances WHERE id = $1), $1, $2, 'ext', $3, 'w1', 2) RETURNING id`,
    [instanceId, blockId, state],
  );
  return rows[0]!.id;
}

async function stored(id: string) {
  const { rows } = await db.sql.query(
    `SELECT state, cursor, context, metadata, next_fire_at, completed_at,
            json_build_object('started_at', started_at, 'current_step', current_step, 'current_step_started_at', current_step_started_at,
                              'current_attempt', current_attempt, 'steps_executed', steps_executed) AS facts
       FROM task_instances WHERE id = $1`,
    [id],
  );
  return rows[0];
}

const outputsOf = async (id: string) =>
  (await db.sql.query("SELECT block_id, output_ref, attempt FROM block_outputs WHERE instance_id = $1 ORDER BY block_id, output_ref NULLS FIRST", [id])).rows;
const tasksOf = async (id: string) => (await db.sql.query("SELECT id, block_id, state FROM worker_tasks WHERE instance_id = $1 ORDER BY block_id, state", [id])).rows;

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AppError);
  const { code, message } = error as AppError;
  return { code, message };
}

describe("retryInstance", () => {
  it("discards the tree but completed blocks, deletes the failed run's markers, keeps successes and __retry__ rows, resets the run", async () => {
    const seq = await insertSequence(db, TENANT, [step("a"), step("b", "fail"), step("c")]);
    const id = await instance(seq, "failed", {
      v: 2,
      nodes: { a: { status: "completed", attempt: 0 }, b: { status: "failed", attempt: 1, failure: { message: "boom", retryable: true } } },
      cleanup: { status: "failed", nodes: {} },
    });
    await output(id, "a");
    await output(id, "a", "__retry__");
    await output(id, "b", "__in_progress__", 1);
    await output(id, "b", "__error__", 1);

    expect(await retryInstance(db.sql, acme, id)).toEqual({ id, state: "scheduled" });
    const after = await stored(id);
    expect(after).toMatchObject({ state: "scheduled", completed_at: null, metadata: { campaign: "spring" } });
    expect(Math.abs(after.next_fire_at.getTime() - Date.now())).toBeLessThan(5_000);
    // a keeps its place; b is started at its next attempt; the cleanup tree is gone.
    expect(after.cursor).toEqual({ v: 2, nodes: { a: { status: "completed", attempt: 0 }, b: { status: "active", attempt: 2, reachedAt: expect.any(String) } } });
    expect(after.context.data).toEqual({ kept: true });
    expect(after.context.config).toEqual({ tier: 1 });
    expect(after.context.runtime).toEqual({
      ...RUNTIME, run_id: expect.stringMatching(/^[0-9a-f-]{36}$/), total_steps_executed: 0, current_step: null, current_step_started_at: null, started_at: null,
    });
    expect(after.facts).toEqual({ started_at: null, current_step: null, current_step_started_at: null, current_attempt: 0, steps_executed: 0 });
    expect(await outputsOf(id)).toEqual([
      { block_id: "a", output_ref: null, attempt: 0 },
      { block_id: "a", output_ref: "__retry__", attempt: 0 },
    ]);
  });

  it("deletes the instance's pending, claimed and failed worker tasks, each with a cancelled event; completed ones stay", async () => {
    const seq = await insertSequence(db, TENANT, [step("a", "ext"), step("b", "ext")]);
    const id = await instance(seq, "failed", { v: 2, nodes: { a: { status: "completed" }, b: { status: "failed", attempt: 0 } } });
    const done = await task(id, "a", "completed");
    const open = await Promise.all(["pending", "claimed", "failed"].map((state) => task(id, "b", state)));
    await retryInstance(db.sql, acme, id);
    expect(await tasksOf(id)).toEqual([{ id: done, block_id: "a", state: "completed" }]);
    const { rows } = await db.sql.query("SELECT task_id, event, worker_id, claim_epoch, details FROM worker_task_attempts WHERE task_id = ANY($1::uuid[]) ORDER BY task_id", [open]);
    expect(rows).toEqual(
      [...open].sort().map((taskId) => ({ task_id: taskId, event: "cancelled", worker_id: "w1", claim_epoch: 2, details: { reason: "instance retried" } })),
    );
  });

  it("restarts a failed composite from scratch, its completed branches' rows wiped with it, and later blocks too", async () => {
    const seq = await insertSequence(db, TENANT, [
      step("a"),
      { type: "parallel", id: "p", branches: [[step("x")], [step("y", "fail")]] },
      step("z"),
    ]);
    const id = await instance(seq, "failed", {
      v: 2, nodes: { a: { status: "completed" }, p: { status: "failed" }, x: { status: "completed" }, y: { status: "failed", attempt: 0 } },
    });
    for (const block of ["a", "x", "z"]) await output(id, block);
    const done = await task(id, "x", "completed");
    await retryInstance(db.sql, acme, id);
    expect((await stored(id)).cursor).toEqual({ v: 2, nodes: { a: { status: "completed" } } });
    expect(await outputsOf(id)).toEqual([{ block_id: "a", output_ref: null, attempt: 0 }]);
    expect(await tasksOf(id)).toEqual([]);
    expect((await db.sql.query("SELECT event FROM worker_task_attempts WHERE task_id = $1", [done])).rows).toEqual([{ event: "cancelled" }]);
  });

  it("starts over an instance whose sequence cannot be read, still deleting its markers", async () => {
    const id = await instance(randomUUID(), "failed", { v: 2, nodes: { gone: { status: "failed" } } });
    await output(id, "gone", "__error__");
    await output(id, "gone");
    await retryInstance(db.sql, acme, id);
    expect((await stored(id)).cursor).toBeNull();
    expect(await outputsOf(id)).toEqual([{ block_id: "gone", output_ref: null, attempt: 0 }]);
  });

  it.each(INSTANCE_STATES.filter((state) => state !== "failed"))("refuses a %s instance with 400 and changes nothing", async (state) => {
    const seq = await insertSequence(db, TENANT, [step("a")]);
    const id = await instance(seq, state, { v: 2, nodes: { a: { status: "active" } } });
    const before = await stored(id);
    expect(await refusal(retryInstance(db.sql, acme, id))).toEqual({ code: "invalid_argument", message: `can only retry failed instances, current state: ${state}` });
    expect(await stored(id)).toEqual(before);
  });

  it("answers a foreign failed instance exactly like a missing one, and leaves it failed", async () => {
    const seq = await insertSequence(db, "globex", [step("a")]);
    const foreign = await instance(seq, "failed", null, "globex");
    const missing = await refusal(retryInstance(db.sql, acme, randomUUID()));
    expect(missing).toEqual({ code: "not_found", message: "instance not found" });
    expect(await refusal(retryInstance(db.sql, acme, foreign))).toEqual(missing);
    expect((await stored(foreign)).state).toBe("failed");
  });
});

describe("resumeFrom", () => {
  const blocks = () => [step("a"), { type: "parallel", id: "p", branches: [[step("x", "ext")], [step("y")]] }, step("c")];

  it("wipes the block's and every later block's rows and tasks, merges the context patch, queues the signals, schedules now", async () => {
    const seq = await insertSequence(db, TENANT, blocks());
    const id = await instance(seq, "completed", {
      v: 2, nodes: { a: { status: "completed" }, p: { status: "completed" }, x: { status: "completed" }, y: { status: "completed" }, c: { status: "completed" } },
    });
    for (const block of ["a", "x", "y", "c"]) await output(id, block);
    await output(id, "a", "__error__");
    const xTask = await task(id, "x", "completed");
    const result = await resumeFrom(db.sql, acme, id, {
      blockId: "p",
      context: { kept: "replaced", added: 1 },
      signals: [{ type: { custom: "go" }, payload: { n: 1 } }, { type: "update_context", payload: { data: { late: true } } }],
    });
    expect(result).toEqual({ id, state: "scheduled", resumedFrom: "p", outputsDeleted: 3, signalsEnqueued: 2 });
    const after = await stored(id);
    expect(after).toMatchObject({ state: "scheduled", completed_at: null, cursor: { v: 2, nodes: { a: { status: "completed" } } } });
    expect(after.context.data).toEqual({ kept: "replaced", added: 1 });
    expect(after.context.runtime).toMatchObject({ total_steps_executed: 0, current_step: null, started_at: null });
    expect(after.context.runtime.run_id).not.toBe("old-run");
    expect(after.facts).toMatchObject({ started_at: null, steps_executed: 0 });
    // Earlier blocks keep their outputs, markers included.
    expect(await outputsOf(id)).toEqual([{ block_id: "a", output_ref: null, attempt: 0 }, { block_id: "a", output_ref: "__error__", attempt: 0 }]);
    expect(await tasksOf(id)).toEqual([]);
    expect((await db.sql.query("SELECT event, details FROM worker_task_attempts WHERE task_id = $1", [xTask])).rows).toEqual([
      { event: "cancelled", details: { reason: "instance resumed from a block" } },
    ]);
    const { rows } = await db.sql.query("SELECT signal_type, payload, delivered FROM signals WHERE instance_id = $1 ORDER BY created_at, id", [id]);
    expect(rows).toEqual([
      { signal_type: "custom:go", payload: { n: 1 }, delivered: false },
      { signal_type: "update_context", payload: { data: { late: true } }, delivered: false },
    ]);
  });

  it("marks earlier blocks that had not completed as skipped, so they are not run again", async () => {
    const seq = await insertSequence(db, TENANT, blocks());
    const id = await instance(seq, "paused", { v: 2, nodes: { a: { status: "active", attempt: 3 } } });
    const result = await resumeFrom(db.sql, acme, id, { blockId: "c" });
    expect(result).toMatchObject({ outputsDeleted: 0, signalsEnqueued: 0 });
    expect((await stored(id)).cursor).toEqual({ v: 2, nodes: { a: { status: "skipped" }, p: { status: "skipped" } } });
  });

  it.each(["scheduled", "running", "waiting"] as const)("refuses a %s instance with 400 and changes nothing", async (state) => {
    const seq = await insertSequence(db, TENANT, blocks());
    const id = await instance(seq, state, null);
    const before = await stored(id);
    expect(await refusal(resumeFrom(db.sql, acme, id, { blockId: "a" }))).toEqual({
      code: "invalid_argument", message: `cannot resume-from in state ${state}: pause or cancel the instance first`,
    });
    expect(await stored(id)).toEqual(before);
  });

  it("refuses a nested or unknown block with 400 naming the sequence", async () => {
    const seq = await insertSequence(db, TENANT, blocks());
    const id = await instance(seq, "failed", null);
    for (const blockId of ["x", "nope"]) {
      expect(await refusal(resumeFrom(db.sql, acme, id, { blockId }))).toEqual({
        code: "invalid_argument", message: `block '${blockId}' is not a top-level block of sequence ${seq}`,
      });
    }
    expect((await stored(id)).state).toBe("failed");
  });

  it("answers a foreign instance exactly like a missing one", async () => {
    const seq = await insertSequence(db, "globex", blocks());
    const foreign = await instance(seq, "completed", null, "globex");
    const missing = await refusal(resumeFrom(db.sql, acme, randomUUID(), { blockId: "a" }));
    expect(missing).toEqual({ code: "not_found", message: "instance not found" });
    expect(await refusal(resumeFrom(db.sql, acme, foreign, { blockId: "a" }))).toEqual(missing);
    expect((await stored(foreign)).state).toBe("completed");
  });
});

describe("re-runs on a real scheduler", () => {
  /** A handler that records each run's (block, attempt) and answers as `answer` says. */
  function recording(answer: (attempt: number, run: number) => ReturnType<Handler>) {
    const runs: { block: string; attempt: number }[] = [];
    const handler: Handler = (input) => {
      runs.push({ block: input.blockId, attempt: input.attempt });
      return answer(input.attempt, runs.length);
    };
    return { runs, handler };
  }

  async function run(handlers: [string, Handler][]) {
    scheduler = makeScheduler(db, { handlers: new HandlerRegistry(handlers) });
    await scheduler.start();
  }

  async function until(id: string, states: InstanceState[]): Promise<InstanceState> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { state } = await stored(id);
      if (states.includes(state) || Date.now() > deadline) return state;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  const retryPolicy = (maxAttempts: number) => ({ max_attempts: maxAttempts, initial_backoff: 10, max_backoff: 10 });
  const fresh = async (seq: string) => instance(seq, "scheduled", null);

  it("an exhausted step gets exactly one more run per retry, and completed steps are not run again", async () => {
    const first = recording(async () => success({ ok: true }));
    const flaky = recording(async () => failure(true, "still down"));
    const seq = await insertSequence(db, TENANT, [step("a", "first"), step("b", "flaky", { retry: retryPolicy(2) })]);
    const id = await fresh(seq);
    await run([["first", first.handler], ["flaky", flaky.handler]]);
    expect(await until(id, ["failed", "completed"])).toBe("failed");
    expect(flaky.runs.map((r) => r.attempt)).toEqual([0, 1]);

    await retryInstance(db.sql, acme, id);
    expect(await until(id, ["failed", "completed"])).toBe("failed");
    await retryInstance(db.sql, acme, id);
    expect(await until(id, ["failed", "completed"])).toBe("failed");
    expect(flaky.runs.map((r) => r.attempt)).toEqual([0, 1, 2, 3]);
    expect(first.runs).toHaveLength(1);
    // The marker of the latest run only: each retry deleted the one before.
    expect((await outputsOf(id)).filter((o) => o.block_id === "b")).toEqual([{ block_id: "b", output_ref: "__error__", attempt: 3 }]);
  });

  it("a step that failed permanently early keeps the attempts it had left", async () => {
    // Permanent on its first run, retryable after: 3 runs in all, then failed for good.
    const flaky = recording(async (_, runNumber) => failure(runNumber > 1, runNumber > 1 ? "down" : "bad request"));
    const seq = await insertSequence(db, TENANT, [step("b", "flaky", { retry: retryPolicy(3) })]);
    const id = await fresh(seq);
    await run([["flaky", flaky.handler]]);
    expect(await until(id, ["failed"])).toBe("failed");
    expect(flaky.runs.map((r) => r.attempt)).toEqual([0]);
    await retryInstance(db.sql, acme, id);
    expect(await until(id, ["failed", "completed"])).toBe("failed");
    expect(flaky.runs.map((r) => r.attempt)).toEqual([0, 1, 2]);
  });

  it("a retried instance that now succeeds completes, running only what had not completed", async () => {
    const first = recording(async () => success(1));
    let down = true;
    const flaky = recording(async () => (down ? failure(false, "down") : success(2)));
    const seq = await insertSequence(db, TENANT, [step("a", "first"), step("b", "flaky"), step("c", "first")]);
    const id = await fresh(seq);
    await run([["first", first.handler], ["flaky", flaky.handler]]);
    expect(await until(id, ["failed"])).toBe("failed");
    down = false;
    await retryInstance(db.sql, acme, id);
    expect(await until(id, ["completed", "failed"])).toBe("completed");
    expect(first.runs.map((r) => r.block)).toEqual(["a", "c"]);
    expect(flaky.runs.map((r) => r.attempt)).toEqual([0, 1]);
  });

  it("resume-from re-runs the block and those after it, not the ones before", async () => {
    const counter = recording(async () => success(null));
    const seq = await insertSequence(db, TENANT, [step("a", "count"), step("b", "count"), step("c", "count")]);
    const id = await fresh(seq);
    await run([["count", counter.handler]]);
    expect(await until(id, ["completed"])).toBe("completed");
    await resumeFrom(db.sql, acme, id, { blockId: "b" });
    expect(await until(id, ["completed", "failed"])).toBe("completed");
    // Completed again only once b and c ran again.
    for (let i = 0; i < 40 && counter.runs.length < 5; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(counter.runs.map((r) => r.block)).toEqual(["a", "b", "c", "b", "c"]);
  });
});
