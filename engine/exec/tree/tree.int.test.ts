// Section C, G and H behaviour through the real scheduler and PostgreSQL: one case per rule the
// engine-semantics issue names, asserted on outputs, context and final state.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../../test/db.ts";
import { insertInstancesOf, insertSequence, insertTrigger } from "../../../test/factories.ts";
import type { Scheduler } from "../../scheduler/scheduler.ts";
import { enqueueSignalIfActive } from "../../storage/signals.ts";
import { completeWorkerTask, pollWorkerTasks } from "../../storage/worker-tasks.ts";
import { makeScheduler } from "../../../test/scheduler.ts";
import { asTenantId } from "../../storage/index.ts";

let db: TestDatabase;
let scheduler: Scheduler;
beforeAll(async () => {
  db = await freshDatabase();
  scheduler = makeScheduler(db, { ownerId: "tree-test" });
  await scheduler.start();
});
afterEach(() => undefined);
afterAll(async () => {
  await scheduler.stop();
  await db.drop();
});

const step = (id: string, handler: string, params: unknown = null, extra: object = {}) => ({ type: "step", id, handler, params, ...extra });
const sleep = (id: string, ms: number, extra: object = {}) => step(id, "sleep", { duration_ms: ms }, extra);

async function run(blocks: unknown[], data: unknown = null, tenant = "acme") {
  const seq = await insertSequence(db, tenant, blocks);
  const [id] = await insertInstancesOf(db, tenant, seq, 1, { data, config: null });
  return id!;
}

async function row(id: string) {
  const { rows } = await db.sql.query("SELECT state, context, created_at, completed_at FROM task_instances WHERE id = $1", [id]);
  return rows[0];
}

async function settle(id: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await row(id);
    if (["completed", "failed", "cancelled"].includes(r.state) || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function waitFor(id: string, state: string) {
  for (let i = 0; i < 500 && (await row(id)).state !== state; i++) await new Promise((r) => setTimeout(r, 20));
}

async function outputs(id: string) {
  const { rows } = await db.sql.query("SELECT block_id, output FROM block_outputs WHERE instance_id = $1 ORDER BY created_at, id", [id]);
  // pg's rows are untyped: outputs are whatever JSON the blocks wrote.
  return rows;
}
const count = (rows: { block_id: string }[], blockId: string) => rows.filter((r) => r.block_id === blockId).length;

describe("parallel (C.1)", () => {
  it("really overlaps its branches: two 1000 ms sleeps finish in under 1.75 s", async () => {
    const id = await run([{ type: "parallel", id: "p", branches: [[sleep("a", 1000)], [sleep("b", 1000)]] }]);
    const done = await settle(id);
    expect(done.state).toBe("completed");
    expect(new Date(done.completed_at).getTime() - new Date(done.created_at).getTime()).toBeLessThan(1750);
    expect((await outputs(id)).map((o) => o.block_id).sort()).toEqual(["a", "b"]);
  });

  it("waits for every branch and then fails if one failed", async () => {
    const id = await run([{ type: "parallel", id: "p", branches: [[step("bad", "fail")], [sleep("slow", 200)]] }, step("after", "noop")]);
    expect((await settle(id)).state).toBe("failed");
    const out = await outputs(id);
    expect(count(out, "slow")).toBe(1);
    expect(count(out, "after")).toBe(0);
  });
});

describe("race (C.2)", () => {
  it("a loser that was already running records no output", async () => {
    const id = await run([
      {
        type: "race", id: "r", branches: [
          [sleep("slow", 1000)],
          [{ type: "try_catch", id: "tc", try_block: [step("boom", "fail")], catch_block: [step("caught", "log", { message: "c" })] }],
        ],
      },
    ]);
    expect((await settle(id)).state).toBe("completed");
    await new Promise((resolve) => setTimeout(resolve, 1200)); // long enough for the sleep to have ended
    const out = await outputs(id);
    expect(count(out, "caught")).toBe(1);
    expect(count(out, "slow")).toBe(0);
  });

  it("first_to_resolve fails at the first failure; first_to_succeed waits for a success", async () => {
    const fast = await run([{ type: "race", id: "r", branches: [[step("f", "fail")], [sleep("s", 300)]] }]);
    expect((await settle(fast)).state).toBe("failed");
    const patient = await run([{ type: "race", id: "r", semantics: "first_to_succeed", branches: [[step("f", "fail")], [sleep("s", 200)]] }]);
    expect((await settle(patient)).state).toBe("completed");
    expect(count(await outputs(patient), "s")).toBe(1);
    const hopeless = await run([{ type: "race", id: "r", semantics: "first_to_succeed", branches: [[step("f1", "fail")], [step("f2", "fail")]] }]);
    expect((await settle(hopeless)).state).toBe("failed");
  });
});

describe("loop and for_each (C.3, C.4)", () => {
  it("a loop of max_iterations 3 inside a for_each of 2 items runs its body exactly 6 times", async () => {
    const id = await run(
      [{ type: "for_each", id: "fe", collection: "items", body: [{ type: "loop", id: "lp", condition: "true", max_iterations: 3, body: [step("tick", "noop")] }] }],
      { items: ["x", "y"] },
    );
    expect((await settle(id)).state).toBe("completed");
    const out = await outputs(id);
    expect(count(out, "tick")).toBe(6);
    expect(out.filter((o) => o.block_id === "lp").map((o) => o.output._iterations)).toEqual([1, 2, 3, 1, 2, 3]);
    // the item variable is gone once the for_each is done
    expect((await row(id)).context.data).toEqual({ items: ["x", "y"] });
  });

  it("a for_each whose collection grows mid-run still runs the original count", async () => {
    const id = await run([{ type: "for_each", id: "fe", collection: "items", item_var: "thing", body: [sleep("work", 150), step("say", "log", { message: "t={{context.data.thing}}" })] }], { items: ["a", "b", "c"] });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await db.sql.query("UPDATE task_instances SET context = jsonb_set(context, '{data,items}', '[\"a\",\"b\",\"c\",\"d\"]') WHERE id = $1", [id]);
    expect((await settle(id)).state).toBe("completed");
    const said = (await outputs(id)).filter((o) => o.block_id === "say").map((o) => o.output.message);
    expect(said).toEqual(["t=a", "t=b", "t=c"]);
    // and the API's edit to the items was not overwritten by the engine
    expect((await row(id)).context.data.items).toEqual(["a", "b", "c", "d"]);
  });

  it("loop condition and break_on read the context; a failed iteration fails the loop", async () => {
    const broken = await run([{ type: "loop", id: "lp", condition: "true", break_on: "true", body: [step("once", "noop")] }]);
    expect((await settle(broken)).state).toBe("completed");
    expect(count(await outputs(broken), "once")).toBe(1);
    const never = await run([{ type: "loop", id: "lp", condition: "go", body: [step("x", "noop")] }], { go: false });
    expect((await settle(never)).state).toBe("completed");
    expect(count(await outputs(never), "x")).toBe(0);
    const failing = await run([{ type: "loop", id: "lp", condition: "true", max_iterations: 5, body: [step("f", "fail")] }]);
    expect((await settle(failing)).state).toBe("failed");
  });
});

describe("router, try_catch, a_b_split, saga (C.5, C.6, C.8, C.10)", () => {
  it("routes on `count * 2 > threshold` read from context.data, first match wins", async () => {
    const id = await run(
      [{ type: "router", id: "rt", routes: [{ condition: "count * 2 > threshold", blocks: [step("big", "noop")] }, { condition: "true", blocks: [step("second", "noop")] }], default: [step("dflt", "noop")] }],
      { count: 5, threshold: 8 },
    );
    expect((await settle(id)).state).toBe("completed");
    expect((await outputs(id)).map((o) => o.block_id)).toEqual(["big"]);
  });

  it("try_catch writes _error, runs catch and finally; an empty catch swallows", async () => {
    const id = await run([{ type: "try_catch", id: "tc", try_block: [step("bad", "fail")], catch_block: [step("fix", "noop")], finally_block: [step("fin", "noop")] }]);
    const done = await settle(id);
    expect(done.state).toBe("completed");
    expect(done.context.data._error).toEqual({
      failed_blocks: ["bad"], source: "try_catch", block_id: "tc", message: "forced failure",
      errors: [{ block_id: "bad", message: "forced failure", retryable: false, code: "handler", handler: "fail" }],
    });
    expect((await outputs(id)).map((o) => o.block_id)).toEqual(["fix", "fin"]);
    const swallowed = await run([{ type: "try_catch", id: "tc", try_block: [step("bad", "fail")], catch_block: [] }, step("next", "noop")]);
    expect((await settle(swallowed)).state).toBe("completed");
  });

  it("a_b_split records its deterministic choice and runs that variant only", async () => {
    const id = await run([{ type: "a_b_split", id: "ab", variants: [{ name: "A", weight: 50, blocks: [step("va", "noop")] }, { name: "B", weight: 50, blocks: [step("vb", "noop")] }] }]);
    expect((await settle(id)).state).toBe("completed");
    const out = await outputs(id);
    const choice = out.find((o) => o.block_id === "ab")!.output;
    expect(out.map((o) => o.block_id)).toEqual(["ab", choice.variant === "A" ? "va" : "vb"]);
  });

  it("saga compensates completed steps in reverse and fails", async () => {
    const id = await run([{
      type: "saga", id: "sg", steps: [
        { id: "s1", action: step("a1", "noop"), compensation: step("c1", "log", { message: "undo 1" }) },
        { id: "s2", action: step("a2", "noop"), compensation: step("c2", "log", { message: "undo 2" }) },
        { id: "s3", action: step("a3", "fail") },
      ],
    }]);
    const done = await settle(id);
    expect(done.state).toBe("failed");
    expect(done.context.data._error).toEqual({ failed_step: "s3", source: "saga", block_id: "sg" });
    expect((await outputs(id)).map((o) => o.block_id)).toEqual(["a1", "a2", "c2", "c1"]);
  });
});

describe("sub_sequence (C.7)", () => {
  it("runs a child instance, waits, and records the child's output rows under its own id", async () => {
    await insertSequence(db, "acme", [step("say", "log", { message: "{{ context.data.x }}" })], "child-seq");
    const id = await run([{ type: "sub_sequence", id: "call", sequence_name: "child-seq", input: { x: 7 } }, step("after", "noop")]);
    expect((await settle(id)).state).toBe("completed");
    const { rows: children } = await db.sql.query("SELECT id, state, metadata, context FROM task_instances WHERE parent_instance_id = $1", [id]);
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ state: "completed", metadata: { _parent_block_id: "call", _sub_sequence_depth: 1 } });
    expect(children[0].context.data).toEqual({ x: 7 });
    const out = await outputs(id);
    expect(out.map((o) => o.block_id)).toEqual(["call", "after"]);
    expect(out[0]!.output).toEqual([expect.objectContaining({ block_id: "say", output: { message: 7 }, instance_id: children[0].id })]);
  });

  it("fails the block when the child fails, or when no such sequence exists", async () => {
    await insertSequence(db, "acme", [step("boom", "fail")], "failing-child");
    const failed = await run([{ type: "sub_sequence", id: "call", sequence_name: "failing-child" }]);
    expect((await settle(failed)).state).toBe("failed");
    const missing = await run([{ type: "sub_sequence", id: "call", sequence_name: "no-such-sequence" }]);
    expect((await settle(missing)).state).toBe("failed");
    // another tenant's sequence of that name is as good as missing
    await insertSequence(db, "globex", [step("x", "noop")], "globex-only");
    const foreign = await run([{ type: "sub_sequence", id: "call", sequence_name: "globex-only" }]);
    expect((await settle(foreign)).state).toBe("failed");
  });
});

describe("cancelling a sub_sequence block (C.7, G.3)", () => {
  const childOf = async (parent: string) => {
    for (let i = 0; i < 500; i++) {
      const { rows } = await db.sql.query("SELECT id, state FROM task_instances WHERE parent_instance_id = $1", [parent]);
      if (rows[0]?.state === "running") return rows[0].id as string;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error("the child never ran");
  };

  it("cancels the child instance when the parent is cancelled", async () => {
    await insertSequence(db, "acme", [sleep("long", 60_000)], "slow-child");
    const parent = await run([{ type: "sub_sequence", id: "call", sequence_name: "slow-child" }]);
    const child = await childOf(parent);
    await enqueueSignalIfActive(db.sql, asTenantId("acme"), parent, { type: "cancel", payload: null });
    expect((await settle(parent)).state).toBe("cancelled");
    expect((await settle(child)).state).toBe("cancelled");
  });

  it("cancels the child of a race's losing sub_sequence", async () => {
    await insertSequence(db, "acme", [sleep("long", 60_000)], "losing-child");
    const parent = await run([{ type: "race", id: "r", branches: [[{ type: "sub_sequence", id: "call", sequence_name: "losing-child" }], [sleep("quick", 300)]] }]);
    const child = await childOf(parent);
    expect((await settle(parent)).state).toBe("completed");
    expect((await settle(child)).state).toBe("cancelled");
  });
});

describe("retry (E.14)", () => {
  it("runs a failed instance's failed steps again and keeps what completed", async () => {
    const id = await run([step("first", "noop"), step("flaky", "log", { message: "{{ context.data.fixed }}" }, { when: "fixed" }), step("gate", "fail", null, { when: "!fixed" })], { fixed: false });
    expect((await settle(id)).state).toBe("failed");
    await db.sql.query("UPDATE task_instances SET context = jsonb_set(context, '{data,fixed}', 'true'), state = 'scheduled', next_fire_at = now(), completed_at = NULL WHERE id = $1", [id]);
    expect((await settle(id)).state).toBe("completed");
    const out = await outputs(id);
    expect(count(out, "first")).toBe(1);
  });
});

describe("templates and when (B)", () => {
  it("keeps the type of a whole-string template and stringifies inline ones; `when` skips", async () => {
    const id = await run([
      step("whole", "log", { message: "{{ context.data.n }}" }),
      step("inline", "log", { message: "n={{ context.data.n }} missing={{ context.data.nope }}" }),
      step("skipped", "noop", null, { when: "n > 100" }),
      step("from_output", "log", { message: "{{ outputs.whole.message }}" }),
    ], { n: 42 });
    expect((await settle(id)).state).toBe("completed");
    const out = await outputs(id);
    expect(out.map((o) => [o.block_id, o.output.message])).toEqual([["whole", 42], ["inline", "n=42 missing=null"], ["from_output", 42]]);
  });

  it("fails the step on an unknown template root", async () => {
    const id = await run([step("bad", "log", { message: "{{ nowhere.x }}" })]);
    expect((await settle(id)).state).toBe("failed");
  });
});

describe("signals (G)", () => {
  it("a cancel during a finally block lets the finally finish and ends cancelled", async () => {
    const id = await run([
      { type: "try_catch", id: "tc", try_block: [step("bad", "fail")], catch_block: [step("c", "log", { message: "caught" })], finally_block: [sleep("f", 500)] },
      step("next", "noop"),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await enqueueSignalIfActive(db.sql, asTenantId("acme"), id, { type: "cancel", payload: null });
    expect((await settle(id)).state).toBe("cancelled");
    const out = await outputs(id);
    expect(count(out, "f")).toBe(1);
    expect(count(out, "next")).toBe(0);
  });

  it("cancel interrupts a cancellable sleep; pause parks and resume continues", async () => {
    const cancelled = await run([sleep("long", 5000), step("after", "noop")]);
    await waitFor(cancelled, "running");
    await enqueueSignalIfActive(db.sql, asTenantId("acme"), cancelled, { type: "cancel", payload: null });
    expect((await settle(cancelled, 3000)).state).toBe("cancelled");
    expect(await outputs(cancelled)).toEqual([]);

    const paused = await run([sleep("nap", 600), step("after", "noop")]);
    await waitFor(paused, "running");
    await enqueueSignalIfActive(db.sql, asTenantId("acme"), paused, { type: "pause", payload: null });
    await waitFor(paused, "paused");
    expect((await row(paused)).state).toBe("paused");
    await enqueueSignalIfActive(db.sql, asTenantId("acme"), paused, { type: "resume", payload: null });
    expect((await settle(paused)).state).toBe("completed");
    expect((await outputs(paused)).map((o) => o.block_id)).toEqual(["nap", "after"]);
  });

  it("update_context merges the top-level keys of payload.data", async () => {
    const id = await run([sleep("wait", 400), step("say", "log", { message: "{{ context.data.greeting }}" })], { keep: 1 });
    await waitFor(id, "running");
    await enqueueSignalIfActive(db.sql, asTenantId("acme"), id, { type: "update_context", payload: { data: { greeting: "hello" }, config: { ignored: true } } });
    const done = await settle(id);
    expect(done.context.data).toEqual({ keep: 1, greeting: "hello" });
    expect((await outputs(id)).find((o) => o.block_id === "say")!.output.message).toBe("hello");
  });
});

describe("signals survive a lost lease (G)", () => {
  it("a signal the run applied but never committed is applied by the instance's next holder", async () => {
    const id = await run([sleep("wait", 1500), step("say", "log", { message: "{{ context.data.plan }}" })], { keep: 1 });
    await waitFor(id, "running");
    await enqueueSignalIfActive(db.sql, asTenantId("acme"), id, { type: "update_context", payload: { data: { plan: "pro" } } });
    await new Promise((resolve) => setTimeout(resolve, 700)); // the run's poller (every 250 ms) has applied it
    // Another engine's reaper takes the instance over: the first run's lease is gone, its work unsaved.
    await db.sql.query("UPDATE task_instances SET lease_epoch = lease_epoch + 1, state = 'scheduled', next_fire_at = now(), lease_owner = NULL WHERE id = $1", [id]);
    const done = await settle(id);
    expect(done.state).toBe("completed");
    expect(done.context.data).toEqual({ keep: 1, plan: "pro" });
    expect((await outputs(id)).find((o) => o.block_id === "say")!.output.message).toBe("pro");
    const { rows } = await db.sql.query("SELECT delivered FROM signals WHERE instance_id = $1", [id]);
    expect(rows).toEqual([{ delivered: true }]);
  });
});

describe("human input (A.3 wait_for_input, human_review)", () => {
  const answer = (id: string, blockId: string, payload: unknown) =>
    enqueueSignalIfActive(db.sql, asTenantId("acme"), id, { type: { custom: `human_input:${blockId}` }, payload });

  it("parks at the gate, stores the chosen value under store_as, then runs the step", async () => {
    const id = await run([step("approve", "log", { message: "{{ context.data.decision }}" }, { wait_for_input: { prompt: "Ship it?", store_as: "decision" } })]);
    await waitFor(id, "waiting");
    expect((await row(id)).state).toBe("waiting");
    await answer(id, "approve", { value: "yes", comment: "looks good" });
    const done = await settle(id);
    expect(done.state).toBe("completed");
    expect(done.context.data).toEqual({ decision: "yes" });
    expect((await outputs(id)).map((o) => o.output)).toEqual([{ message: "yes" }]);
  });

  it("drops an answer that is not one of the choices (the gate keeps waiting), then takes a valid one", async () => {
    const id = await run([step("pick", "human_review", { prompt: "Colour?", choices: [{ label: "Red", value: "red" }, { label: "Blue", value: "blue" }] })]);
    await waitFor(id, "waiting");
    for (const bad of [{ value: "yes" }, "red", { value: 1 }, null]) await answer(id, "pick", bad);
    // Each is consumed (delivered) and changes nothing.
    await expect.poll(async () => (await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1 AND delivered", [id])).rows[0].n).toBe(4);
    expect((await row(id)).state).toBe("waiting");
    await answer(id, "pick", { value: "blue" });
    const done = await settle(id);
    expect(done.state).toBe("completed");
    expect(done.context.data).toEqual({ pick: "blue" });
  });

  it("human_review's answer is its output (R's gate row); a timeout without escalation fails the step", async () => {
    const review = await run([step("review", "human_review", { prompt: "OK?" })]);
    await waitFor(review, "waiting");
    await answer(review, "review", { value: "no", comment: "typo" });
    expect((await settle(review)).state).toBe("completed");
    expect((await outputs(review)).map((o) => [o.block_id, o.output])).toEqual([["review", { value: "no", _orch8_human_gate: true }]]);

    const late = await run([step("gate", "noop", null, { wait_for_input: { timeout: 300 } })]);
    expect((await settle(late)).state).toBe("failed");
  });

  it("escalates to the escalation handler when the gate times out", async () => {
    const id = await run([step("gate", "fail", null, { wait_for_input: { timeout: 300, escalation_handler: "log" } })]);
    expect((await settle(id)).state).toBe("completed");
    expect((await outputs(id)).map((o) => o.block_id)).toEqual(["gate"]);
  });
});

describe("more of C and A.3", () => {
  it("a cancellation_scope and a `cancellable: false` step finish under cancel; what follows is cancelled", async () => {
    const id = await run([
      { type: "parallel", id: "p", branches: [
        [{ type: "cancellation_scope", id: "scope", blocks: [sleep("shielded", 500)] }],
        [sleep("stubborn", 500, { cancellable: false })],
        [sleep("plain", 5000)],
      ] },
      step("next", "noop"),
    ]);
    await waitFor(id, "running");
    await new Promise((resolve) => setTimeout(resolve, 150));
    await enqueueSignalIfActive(db.sql, asTenantId("acme"), id, { type: "cancel", payload: null });
    expect((await settle(id)).state).toBe("cancelled");
    const out = await outputs(id);
    expect(out.map((o) => o.block_id).sort()).toEqual(["shielded", "stubborn"]);
  });

  it("continue_on_error keeps a loop going; poll_interval spaces its iterations", async () => {
    const id = await run([{ type: "loop", id: "lp", condition: "true", max_iterations: 3, continue_on_error: true, body: [step("f", "fail")] }]);
    expect((await settle(id)).state).toBe("completed");
    expect((await outputs(id)).filter((o) => o.block_id === "lp")).toHaveLength(3);
    const spaced = await run([{ type: "loop", id: "lp", condition: "true", max_iterations: 2, poll_interval: 1, body: [step("t", "noop")] }]);
    const done = await settle(spaced);
    expect(done.state).toBe("completed");
    expect(new Date(done.completed_at).getTime() - new Date(done.created_at).getTime()).toBeGreaterThanOrEqual(1000);
  });

  it("a race deletes its losers' worker tasks", async () => {
    const id = await run([{ type: "race", id: "r", branches: [[step("ext", "slow_vendor")], [sleep("quick", 100)]] }], null, "race-workers");
    expect((await settle(id)).state).toBe("completed");
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM worker_tasks WHERE instance_id = $1", [id]);
    expect(rows[0].n).toBe(0);
    const { rows: events } = await db.sql.query("SELECT event FROM worker_task_attempts WHERE tenant_id = 'race-workers'");
    expect(events.map((e) => e.event)).toEqual(["cancelled"]);
  });

  it("retry_if and non_retryable_codes filter retries", async () => {
    const retry = (extra: object) => ({ retry: { max_attempts: 3, initial_backoff: 10, max_backoff: 10, ...extra } });
    const gated = await run([step("f", "fail", { message: "boom", retryable: true }, retry({ retry_if: "runtime.attempt < 1" }))]);
    const blocked = await run([step("f", "fail", { message: "E_FATAL: no", retryable: true }, retry({ non_retryable_codes: ["E_FATAL"] }))]);
    const attempt = async (id: string) => (await db.sql.query("SELECT cursor FROM task_instances WHERE id = $1", [id])).rows[0].cursor.nodes.f.attempt;
    expect((await settle(gated)).state).toBe("failed");
    expect((await settle(blocked)).state).toBe("failed");
    expect(await attempt(gated)).toBe(1); // one retry, then retry_if was false
    expect(await attempt(blocked)).toBe(0); // never retried
  });

  it("on_failure runs after a failure and the instance still ends failed", async () => {
    const seq = await insertSequence(db, "acme", [step("bad", "fail")]);
    await db.sql.query(`UPDATE sequences SET definition = definition || '{"on_failure": [{"type": "step", "id": "bad", "handler": "log", "params": {"message": "cleaning up"}}]}' WHERE id = $1`, [seq]);
    const [id] = await insertInstancesOf(db, "acme", seq);
    expect((await settle(id!)).state).toBe("failed");
    expect((await outputs(id!)).map((o) => [o.block_id, o.output])).toEqual([
      ["bad", { __error__: true, retryable: false, message: "forced failure" }],
      ["bad", { message: "cleaning up" }],
    ]);
  });

  it("a worker task sees only the context its step's context_access allows", async () => {
    const id = await run([step("ext", "narrow_worker", null, { context_access: { data: { fields: ["public"] }, config: false } })], { public: 1, secret: 2 }, "narrow");
    await waitFor(id, "waiting");
    const { rows } = await db.sql.query("SELECT context FROM worker_tasks WHERE instance_id = $1", [id]);
    expect(rows[0].context).toEqual({ data: { public: 1 } });
  });
});

describe("schemas (A.1 input_schema, A.3 output_schema)", () => {
  const SIGNUP = { type: "object", required: ["email"], properties: { email: { type: "string" } } };
  const failureOf = async (id: string, block: string) =>
    (await db.sql.query("SELECT cursor FROM task_instances WHERE id = $1", [id])).rows[0].cursor.nodes[block].failure;
  const childrenOf = async (id: string) => (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE parent_instance_id = $1", [id])).rows[0].n;
  async function typedSequence(name: string) {
    const seq = await insertSequence(db, "acme", [step("hello", "noop")], name);
    await db.sql.query("UPDATE sequences SET definition = definition || jsonb_build_object('input_schema', $2::jsonb) WHERE id = $1", [seq, JSON.stringify(SIGNUP)]);
  }

  it("a sub_sequence whose input does not match the child's input_schema fails, creating no child", async () => {
    await typedSequence("typed-child");
    const bad = await run([{ type: "sub_sequence", id: "call", sequence_name: "typed-child", input: { mail: "a@b.c" } }]);
    const good = await run([{ type: "sub_sequence", id: "call", sequence_name: "typed-child", input: { email: "a@b.c" } }]);
    expect((await settle(bad)).state).toBe("failed");
    expect(await failureOf(bad, "call")).toEqual({
      message: "sub-sequence typed-child: context.data does not match the sequence's input_schema: /email: is required", retryable: false, code: "sub_sequence",
    });
    expect(await childrenOf(bad)).toBe(0);
    expect((await settle(good)).state).toBe("completed");
    expect(await childrenOf(good)).toBe(1);
  });

  it("emit_event with data that does not match fails the step and takes no dedupe key", async () => {
    await typedSequence("typed-target");
    const emit = (data: unknown) => step("emit", "emit_event", { sequence_name: "typed-target", data, dedupe_key: "once", dedupe_scope: "parent" });
    const bad = await run([emit({ email: 42 })]);
    expect((await settle(bad)).state).toBe("failed");
    const { rows } = await db.sql.query("SELECT output FROM block_outputs WHERE instance_id = $1", [bad]);
    expect(rows).toEqual([{ output: { __error__: true, retryable: false, message: "context.data does not match the sequence's input_schema: /email: must be a string" } }]);
    expect((await db.sql.query("SELECT count(*)::int AS n FROM event_dedupe WHERE scope = $1", [`parent:${bad}`])).rows[0].n).toBe(0);
    expect((await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE metadata->'_trigger_event'->>'parent_instance_id' = $1", [bad])).rows[0].n).toBe(0);
    const good = await run([emit({ email: "a@b.c" })]);
    expect((await settle(good)).state).toBe("completed");
  });

  it("an output that does not match the step's output_schema is a permanent failure, even with retries left", async () => {
    const schema = { type: "object", required: ["message"], properties: { message: { type: "string" } } };
    const retry = { max_attempts: 3, initial_backoff: 10, max_backoff: 10 };
    const bad = await run([step("say", "log", { message: 7 }, { output_schema: schema, retry })]);
    const good = await run([step("say", "log", { message: "seven" }, { output_schema: schema, retry })]);
    expect((await settle(bad)).state).toBe("failed");
    const { rows } = await db.sql.query("SELECT output FROM block_outputs WHERE instance_id = $1", [bad]);
    expect(rows).toEqual([{ output: { __error__: true, retryable: false, message: "output does not match the step's output_schema: /message: must be a string" } }]);
    expect((await settle(good)).state).toBe("completed");
  });

  it("a worker's result is checked against output_schema too", async () => {
    const schema = { type: "object", required: ["score"], properties: { score: { type: "number" } } };
    const id = await run([step("ext", "scoring_worker", null, { output_schema: schema })], null, "typed-workers");
    await waitFor(id, "waiting");
    const [task] = await pollWorkerTasks(db.sql, asTenantId("typed-workers"), { handlerName: "scoring_worker", queueName: null, workerId: "w", limit: 1 });
    await completeWorkerTask(db.sql, asTenantId("typed-workers"), task!.id, { workerId: "w", claimEpoch: task!.claimEpoch }, { score: "high" });
    expect((await settle(id)).state).toBe("failed");
    const { rows } = await db.sql.query("SELECT output FROM block_outputs WHERE instance_id = $1", [id]);
    expect(rows).toEqual([{ output: { __error__: true, retryable: false, message: "output does not match the step's output_schema: /score: must be a number" } }]);
  });
});

describe("coordination handlers: same tenant only, no existence oracle (D)", () => {
  const errorOf = async (id: string) => (await outputs(id)).find((o) => o.output?.__error__)?.output.message;

  it("query_instance reads its own tenant's instance and answers {found: false} alike for foreign and missing ids", async () => {
    const own = await run([sleep("nap", 5000)]);
    const foreign = await run([sleep("nap", 5000)], null, "other-tenant");
    const missing = "00000000-0000-4000-8000-000000000000";
    const ask = (target: string) => run([step("q", "query_instance", { instance_id: target })]);
    const [a, b, c] = await Promise.all([ask(own), ask(foreign), ask(missing)]);
    for (const id of [a, b, c]) expect((await settle(id)).state).toBe("completed");
    const answer = async (id: string) => (await outputs(id))[0]!.output;
    expect(await answer(a)).toMatchObject({ found: true, state: expect.any(String) });
    expect(await answer(b)).toEqual({ found: false });
    expect(await answer(c)).toEqual(await answer(b));
  });

  it("send_signal signals its own tenant's instance; foreign, missing and finished targets fail with one message", async () => {
    const own = await run([sleep("nap", 60_000)]);
    const foreign = await run([sleep("nap", 60_000)], null, "other-tenant");
    const finished = await run([step("x", "noop")]);
    await settle(finished);
    const send = (target: string) => run([step("s", "send_signal", { instance_id: target, signal_type: "cancel" })]);
    const toOwn = await send(own);
    expect((await settle(toOwn)).state).toBe("completed");
    expect((await settle(own)).state).toBe("cancelled");

    const refused = await Promise.all([send(foreign), send("00000000-0000-4000-8000-000000000000"), send(finished)]);
    for (const id of refused) expect((await settle(id)).state).toBe("failed");
    expect(await Promise.all(refused.map(errorOf))).toEqual(Array(3).fill("target instance not found"));
    // the foreign instance never received anything
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1", [foreign]);
    expect(rows[0].n).toBe(0);
  });
});

describe("emit_event (D)", () => {
  it("starts a child of the named sequence in the caller's tenant, with data and meta", async () => {
    await insertSequence(db, "acme", [step("hello", "log", { message: "{{ context.data.who }}" })], "emitted");
    const id = await run([step("e", "emit_event", { sequence_name: "emitted", data: { who: "ada" }, meta: { reason: "signup" } })]);
    expect((await settle(id)).state).toBe("completed");
    const out = (await outputs(id))[0]!.output;
    expect(out).toMatchObject({ sequence_name: "emitted", deduped: false });
    const child = await settle(out.instance_id);
    expect(child.state).toBe("completed");
    expect(child.context.data).toEqual({ who: "ada" });
    const { rows } = await db.sql.query("SELECT tenant_id, metadata FROM task_instances WHERE id = $1", [out.instance_id]);
    expect(rows[0]).toMatchObject({ tenant_id: "acme", metadata: { _trigger_event: { reason: "signup", source: "emit_event", parent_instance_id: id } } });
  });

  it("cannot start another tenant's sequence: it fails as for a missing one", async () => {
    await insertSequence(db, "globex", [step("x", "noop")], "globex-emitted");
    const id = await run([step("e", "emit_event", { sequence_name: "globex-emitted" })]);
    expect((await settle(id)).state).toBe("failed");
    const missing = await run([step("e", "emit_event", { sequence_name: "no-such-emitted" })]);
    expect((await settle(missing)).state).toBe("failed");
  });
});

describe("emit_event by trigger slug (D)", () => {
  const errorOf = async (id: string) => (await outputs(id)).find((o) => o.output?.__error__)?.output.message;
  const emitted = async (id: string) => {
    expect((await settle(id)).state).toBe("completed");
    return (await outputs(id))[0]!.output as { instance_id: string; sequence_name: string; deduped: boolean };
  };
  const sequenceOf = async (id: string) =>
    (await db.sql.query("SELECT s.name, s.version FROM task_instances i JOIN sequences s ON s.id = i.sequence_id WHERE i.id = $1", [id])).rows[0];

  it("spawns the latest version of the trigger's sequence, or the version it pins, with the slug in the child's metadata", async () => {
    await insertSequence(db, "acme", [step("v1", "noop")], "signup-flow", 1);
    await insertSequence(db, "acme", [step("v2", "noop")], "signup-flow", 2);
    await insertTrigger(db, "acme", "user-signed-up", "signup-flow", null);
    await insertTrigger(db, "acme", "signup-v1", "signup-flow", 1);

    const latest = await emitted(await run([step("e", "emit_event", { trigger_slug: "user-signed-up", data: { n: 1 } })]));
    expect(latest).toMatchObject({ sequence_name: "signup-flow", deduped: false });
    expect(await sequenceOf(latest.instance_id)).toEqual({ name: "signup-flow", version: 2 });
    const { rows } = await db.sql.query("SELECT metadata, context FROM task_instances WHERE id = $1", [latest.instance_id]);
    expect(rows[0].metadata).toMatchObject({ _trigger: "user-signed-up", _trigger_type: "emit_event" });
    expect(rows[0].context.data).toEqual({ n: 1 });

    const pinned = await emitted(await run([step("e", "emit_event", { trigger_slug: "signup-v1" })]));
    expect(await sequenceOf(pinned.instance_id)).toEqual({ name: "signup-flow", version: 1 });
  });

  it("cannot use another tenant's trigger: the same failure as a slug nobody has", async () => {
    await insertSequence(db, "globex", [step("x", "noop")], "globex-flow");
    await insertTrigger(db, "globex", "globex-only", "globex-flow", null);
    const foreign = await run([step("e", "emit_event", { trigger_slug: "globex-only" })]);
    const missing = await run([step("e", "emit_event", { trigger_slug: "nobody-has-this" })]);
    for (const id of [foreign, missing]) expect((await settle(id)).state).toBe("failed");
    expect(await errorOf(foreign)).toBe("trigger not found: globex-only (or its sequence is not in this namespace)");
    expect(await errorOf(missing)).toBe("trigger not found: nobody-has-this (or its sequence is not in this namespace)");
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM task_instances i JOIN sequences s ON s.id = i.sequence_id WHERE s.name = 'globex-flow'");
    expect(rows[0].n).toBe(0);
  });

  it("fails permanently on a disabled trigger, and on one of another namespace, as on a missing one", async () => {
    await insertSequence(db, "acme", [step("x", "noop")], "gated-flow");
    await insertTrigger(db, "acme", "switched-off", "gated-flow", null);
    await insertTrigger(db, "acme", "elsewhere", "gated-flow", null);
    await db.sql.query("UPDATE triggers SET enabled = false WHERE slug = 'switched-off'");
    await db.sql.query("UPDATE triggers SET namespace = 'billing' WHERE slug = 'elsewhere'");
    for (const slug of ["switched-off", "elsewhere"]) {
      const id = await run([step("e", "emit_event", { trigger_slug: slug })]);
      expect((await settle(id)).state).toBe("failed");
      expect(await errorOf(id)).toBe(`trigger not found: ${slug} (or its sequence is not in this namespace)`);
    }
  });

  it("dedupes per parent with dedupe_scope parent, and across the tenant with dedupe_scope tenant", async () => {
    await insertSequence(db, "acme", [step("x", "noop")], "dedupe-target");
    await insertTrigger(db, "acme", "dedupe-me", "dedupe-target", null);
    const twice = (scope: string) => [
      step("first", "emit_event", { trigger_slug: "dedupe-me", dedupe_key: "order-7", dedupe_scope: scope }),
      step("second", "emit_event", { trigger_slug: "dedupe-me", dedupe_key: "order-7", dedupe_scope: scope }),
    ];
    const children = async (id: string) => {
      expect((await settle(id)).state).toBe("completed");
      return (await outputs(id)).map((o) => o.output as { instance_id: string; deduped: boolean });
    };
    const [p1, p2] = await Promise.all([run(twice("parent")), run(twice("parent"))]);
    const [a, b] = [await children(p1), await children(p2)];
    expect([a[0]!.deduped, a[1]!.deduped, b[0]!.deduped, b[1]!.deduped]).toEqual([false, true, false, true]);
    expect(a[1]!.instance_id).toBe(a[0]!.instance_id);
    expect(b[0]!.instance_id).not.toBe(a[0]!.instance_id);

    const [t1, t2] = [await children(await run(twice("tenant"))), await children(await run(twice("tenant")))];
    expect(new Set([...t1, ...t2].map((o) => o.instance_id)).size).toBe(1);
    expect([...t1, ...t2].filter((o) => !o.deduped)).toHaveLength(1);

    const bad = await run([step("e", "emit_event", { trigger_slug: "dedupe-me", dedupe_key: "k", dedupe_scope: "global" })]);
    expect((await settle(bad)).state).toBe("failed");
    expect(await errorOf(bad)).toBe('dedupe_scope must be "parent" or "tenant"');
  });
});

describe("self_modify", () => {
  it("adds validated blocks to its own instance, after itself, in the same write as its output", async () => {
    const id = await run([
      step("grow", "self_modify", { blocks: [step("added", "log", { message: "hi" })] }),
      step("last", "noop"),
    ]);
    expect((await settle(id)).state).toBe("completed");
    const out = await outputs(id);
    expect(out.map((o) => o.block_id)).toEqual(["grow", "added", "last"]);
    expect(out[0]!.output).toEqual({ injected_count: 1, position: 1 });
  });

  it("refuses blocks that break the rules (a duplicate id) and fails the step, changing nothing", async () => {
    const id = await run([step("grow", "self_modify", { blocks: [step("grow", "noop")] }), step("last", "noop")]);
    expect((await settle(id)).state).toBe("failed");
    const { rows } = await db.sql.query("SELECT cursor FROM task_instances WHERE id = $1", [id]);
    expect(rows[0].cursor.blocks).toBeUndefined();
    expect(count(await outputs(id), "last")).toBe(0);
  });
});

describe("external workers (H)", () => {
  it("a completed task resumes the instance, its output is recorded and merged into context.data", async () => {
    const id = await run([step("bill", "billing_sync", { amount: 3 }), step("after", "log", { message: "{{ context.data.invoice }}" })], { customer: "c1" }, "workers");
    await waitFor(id, "waiting");
    const [task] = await pollWorkerTasks(db.sql, asTenantId("workers"), { handlerName: "billing_sync", queueName: null, workerId: "w1", limit: 1 });
    expect(task).toMatchObject({ instanceId: id, blockId: "bill", params: { amount: 3 }, attempt: 0 });
    await completeWorkerTask(db.sql, asTenantId("workers"), task!.id, { workerId: "w1", claimEpoch: 1 }, { invoice: "INV-9" });
    const done = await settle(id);
    expect(done.state).toBe("completed");
    expect(done.context.data).toEqual({ customer: "c1", invoice: "INV-9" });
    expect((await outputs(id)).map((o) => [o.block_id, o.output])).toEqual([["bill", { invoice: "INV-9" }], ["after", { message: "INV-9" }]]);
  });
});
