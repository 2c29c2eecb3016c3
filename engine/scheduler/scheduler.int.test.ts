// The scheduler against a real PostgreSQL: flat sequences run to the end, failures retry with
// backoff or fail with a marker row, timeouts count as retryable, unknown handlers wait for a
// worker, and a stale lease writes nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { setBudget } from "../storage/budgets.ts";
import { commitProgress, loadLatestOutputs } from "../storage/execution.ts";
import { setRateLimitPolicy } from "../storage/rate-limits.ts";
import { Scheduler, type SchedulerConfig } from "./scheduler.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { HandlerRegistry } from "../handlers/registry.ts";
import { asTenantId } from "../storage/index.ts";

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

async function startScheduler(config: Partial<SchedulerConfig> = {}, handlers?: HandlerRegistry) {
  const started = makeScheduler(db, { config, ...(handlers ? { handlers } : {}) });
  scheduler = started;
  await started.start();
  return started;
}

async function instance(id: string) {
  const { rows } = await db.sql.query("SELECT state, next_fire_at, defer_reason, cursor, lease_epoch, completed_at FROM task_instances WHERE id = $1", [id]);
  return rows[0];
}

async function outputs(id: string) {
  const { rows } = await db.sql.query("SELECT block_id, output, output_ref, attempt FROM block_outputs WHERE instance_id = $1 ORDER BY created_at, id", [id]);
  return rows;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const step = (id: string, handler: string, params: unknown = null, extra: object = {}) => ({ type: "step", id, handler, params, ...extra });

describe("the scheduler", () => {
  it("runs a flat sequence step after step to completed, recording each output", async () => {
    const seq = await insertSequence(db, "acme", [step("a", "log", { message: "hi" }), step("b", "noop"), step("c", "sleep", { duration_ms: 30 })]);
    const [id] = await insertInstancesOf(db, "acme", seq);
    await startScheduler();
    const done = await until(() => instance(id!), (i) => i.state === "completed");
    expect(done.state).toBe("completed");
    expect(done.completed_at).not.toBeNull();
    expect(await outputs(id!)).toEqual([
      { block_id: "a", output: { message: "hi" }, output_ref: null, attempt: 0 },
      { block_id: "b", output: {}, output_ref: null, attempt: 0 },
      { block_id: "c", output: { slept_ms: 30 }, output_ref: null, attempt: 0 },
    ]);
  });

  it("retries a retryable failure after the backoff, then fails with a marker row when attempts run out", async () => {
    const retry = { max_attempts: 3, initial_backoff: 200, max_backoff: 1000, backoff_multiplier: 2 };
    const seq = await insertSequence(db, "acme", [step("flaky", "fail", { message: "vendor down", retryable: true }, { retry })]);
    const [id] = await insertInstancesOf(db, "acme", seq);
    await startScheduler();

    const first = await until(() => instance(id!), (i) => i.state === "scheduled" && i.cursor?.nodes?.flaky?.attempt === 1);
    expect(first.defer_reason).toBe("retry");
    // attempt 0 failed: the next run is due initial_backoff (200 ms) later
    const wait = new Date(first.next_fire_at).getTime() - Date.now();
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(200);

    const second = await until(() => instance(id!), (i) => i.cursor?.nodes?.flaky?.attempt === 2);
    expect(second.state).toBe("scheduled");
    const final = await until(() => instance(id!), (i) => i.state === "failed");
    expect(final.state).toBe("failed");
    expect(await outputs(id!)).toEqual([
      { block_id: "flaky", output: { __error__: true, retryable: true, message: "vendor down" }, output_ref: "__error__", attempt: 2 },
    ]);
  });

  it("fails at once on a permanent failure, and a retryable one without a policy", async () => {
    const permanent = await insertSequence(db, "acme", [step("x", "fail", { message: "bad input" }, { retry: { max_attempts: 5, initial_backoff: 10, max_backoff: 10 } })]);
    const noPolicy = await insertSequence(db, "acme", [step("y", "fail", { retryable: true })]);
    const [a] = await insertInstancesOf(db, "acme", permanent);
    const [b] = await insertInstancesOf(db, "acme", noPolicy);
    await startScheduler();
    expect((await until(() => instance(a!), (i) => i.state === "failed")).cursor.nodes.x.attempt).toBe(0);
    expect((await until(() => instance(b!), (i) => i.state === "failed")).state).toBe("failed");
  });

  it("counts a step timeout as a retryable failure", async () => {
    const retry = { max_attempts: 2, initial_backoff: 50, max_backoff: 50 };
    const seq = await insertSequence(db, "acme", [step("slow", "sleep", { duration_ms: 2000 }, { timeout: 100, retry })]);
    const [id] = await insertInstancesOf(db, "acme", seq);
    await startScheduler();
    const final = await until(() => instance(id!), (i) => i.state === "failed");
    expect(final.cursor.nodes.slow.attempt).toBe(1);
    expect(await outputs(id!)).toEqual([
      { block_id: "slow", output: { __error__: true, retryable: true, message: "step timed out after 100 ms" }, output_ref: "__error__", attempt: 1 },
    ]);
  });

  it("hands a step with a handler that is not built in to an external worker and waits", async () => {
    const seq = await insertSequence(db, "acme", [step("first", "noop"), step("ext", "billing_sync", { invoice: 7 }, { queue_name: "billing", timeout: 1500 })]);
    const [id] = await insertInstancesOf(db, "acme", seq, 1, { data: { customer: "c1" }, config: null });
    await startScheduler();
    const waiting = await until(() => instance(id!), (i) => i.state === "waiting");
    expect(waiting.state).toBe("waiting");
    const { rows } = await db.sql.query("SELECT tenant_id, block_id, handler_name, queue_name, params, context, attempt, timeout_ms, state FROM worker_tasks WHERE instance_id = $1", [id]);
    expect(rows).toEqual([
      { tenant_id: "acme", block_id: "ext", handler_name: "billing_sync", queue_name: "billing", params: { invoice: 7 }, context: { data: { customer: "c1" }, config: null }, attempt: 0, timeout_ms: 1500, state: "pending" },
    ]);
  });

  it("fails an instance whose sequence belongs to another tenant, as if it did not exist", async () => {
    const foreign = await insertSequence(db, "globex", [step("a", "noop")]);
    const [id] = await insertInstancesOf(db, "acme", foreign);
    await startScheduler();
    expect((await until(() => instance(id!), (i) => i.state === "failed")).state).toBe("failed");
    expect(await outputs(id!)).toEqual([]);
  });

  it("keeps each tenant within its in-flight limit while others run", async () => {
    const seq = await insertSequence(db, "flood", [step("s", "sleep", { duration_ms: 200 })]);
    const quiet = await insertSequence(db, "quiet", [step("s", "sleep", { duration_ms: 200 })]);
    const flood = await insertInstancesOf(db, "flood", seq, 40);
    const calm = await insertInstancesOf(db, "quiet", quiet, 4);
    const running = await startScheduler({ BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 8 });
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, running.inFlightOf("flood"))), 2);
    const states = (ids: string[]) =>
      db.sql.query("SELECT state, count(*)::int AS n FROM task_instances WHERE id = ANY($1) GROUP BY 1", [ids]).then((r) => r.rows);
    try {
      await until(() => states(calm), (rows) => rows.length === 1 && rows[0].state === "completed");
      // The quiet tenant is done while the flood (40 x 200 ms at 8 at a time) is still going.
      expect((await states(flood)).find((r) => r.state === "completed")?.n ?? 0).toBeLessThan(40);
      await until(() => states(flood), (rows) => rows.length === 1 && rows[0].state === "completed", 20_000);
    } finally {
      clearInterval(sampler);
    }
    expect(await states(flood)).toEqual([{ state: "completed", n: 40 }]);
    expect(peak).toBe(8);
  });
});

describe("shutdown", () => {
  it("lets in-flight steps finish within the grace", async () => {
    const seq = await insertSequence(db, "grace", [step("s", "sleep", { duration_ms: 300 })]);
    const ids = await insertInstancesOf(db, "grace", seq, 3);
    const running = await startScheduler({ BULKHEAD_SHUTDOWN_GRACE_MS: 5_000 });
    await until(async () => running.inFlight, (n) => n === 3);
    await running.stop();
    scheduler = null;
    const { rows } = await db.sql.query("SELECT state FROM task_instances WHERE id = ANY($1)", [ids]);
    expect(rows.map((r) => r.state)).toEqual(["completed", "completed", "completed"]);
  });

  it("releases what is still running when the grace ends, recording no failure", async () => {
    const seq = await insertSequence(db, "cut", [step("s", "sleep", { duration_ms: 10_000 })]);
    const ids = await insertInstancesOf(db, "cut", seq, 3);
    const running = await startScheduler({ BULKHEAD_SHUTDOWN_GRACE_MS: 100 });
    await until(async () => running.inFlight, (n) => n === 3);
    const started = Date.now();
    await running.stop();
    scheduler = null;
    expect(Date.now() - started).toBeLessThan(5_000);
    const { rows } = await db.sql.query("SELECT state, lease_owner, next_fire_at <= now() AS due FROM task_instances WHERE id = ANY($1)", [ids]);
    expect(rows).toEqual(Array(3).fill({ state: "scheduled", lease_owner: null, due: true }));
    const { rows: written } = await db.sql.query("SELECT count(*)::int AS n FROM block_outputs WHERE instance_id = ANY($1)", [ids]);
    expect(written[0].n).toBe(0);
  });
});

describe("pre-flight, asserted on the instance", () => {
  const states = async (ids: string[]) => {
    const { rows } = await db.sql.query("SELECT id, state, next_fire_at, defer_reason FROM task_instances WHERE id = ANY($1)", [ids]);
    return rows;
  };

  it("defers over the rate limit, never dropping the step", async () => {
    await setRateLimitPolicy(db.sql, asTenantId("rl"), "vendor", 2, 60_000);
    const seq = await insertSequence(db, "rl", [step("call", "noop", null, { rate_limit_key: "vendor" })]);
    const ids = await insertInstancesOf(db, "rl", seq, 4);
    const before = Date.now();
    await startScheduler();
    const rows = await until(() => states(ids), (r) => r.filter((x) => x.state === "completed").length === 2 && r.filter((x) => x.defer_reason === "rate_limit").length === 2);
    const deferred = rows.filter((r) => r.state === "scheduled");
    expect(deferred).toHaveLength(2);
    for (const r of deferred) {
      expect(r.defer_reason).toBe("rate_limit");
      // due when the first unit of the window frees, about a minute on
      expect(new Date(r.next_fire_at).getTime()).toBeGreaterThan(before + 55_000);
    }
  });

  it("defers to the next budget period when the tenant's budget is spent", async () => {
    await setBudget(db.sql, asTenantId("budgeted"), 3, 3600, new Date());
    const seq = await insertSequence(db, "budgeted", [step("s", "noop")]);
    const ids = await insertInstancesOf(db, "budgeted", seq, 5);
    await startScheduler();
    const rows = await until(() => states(ids), (r) => r.filter((x) => x.state === "completed").length === 3 && r.filter((x) => x.defer_reason === "budget").length === 2);
    const nextHour = Math.ceil((Date.now() + 1) / 3_600_000) * 3_600_000;
    const deferred = rows.filter((r) => r.state === "scheduled");
    expect(deferred.map((r) => r.defer_reason)).toEqual(["budget", "budget"]);
    for (const r of deferred) expect(new Date(r.next_fire_at).getTime()).toBe(nextHour);
  });

  it("defers outside the send window to its next opening, in the instance's timezone", async () => {
    const hour = new Date().getUTCHours();
    const window = { start_hour: (hour + 2) % 24, end_hour: (hour + 3) % 24 };
    const seq = await insertSequence(db, "sw", [step("send", "noop", null, { send_window: window })]);
    const [id] = await insertInstancesOf(db, "sw", seq);
    await startScheduler();
    const [row] = await until(() => states([id!]), (r) => r[0].defer_reason === "send_window");
    expect(row.state).toBe("scheduled");
    const opening = new Date(row.next_fire_at);
    expect(opening.getUTCHours()).toBe(window.start_hour);
    expect(opening.getUTCMinutes()).toBe(0);
    expect(opening.getTime()).toBeGreaterThan(Date.now());
    expect(opening.getTime() - Date.now()).toBeLessThanOrEqual(3 * 3_600_000);
  });

  it("fails the step once its deadline has passed, across retries", async () => {
    const retry = { max_attempts: 10, initial_backoff: 300, max_backoff: 300 };
    const seq = await insertSequence(db, "dl", [step("late", "fail", { retryable: true }, { deadline: 100, retry })]);
    const [id] = await insertInstancesOf(db, "dl", seq);
    await startScheduler();
    const failed = await until(() => instance(id!), (i) => i.state === "failed");
    expect(failed.state).toBe("failed");
    // one run, then the retry due 300 ms later finds the 100 ms deadline gone
    expect(failed.cursor.nodes.late.attempt).toBe(1);
    expect(await outputs(id!)).toEqual([
      { block_id: "late", output: { __error__: true, retryable: false, message: expect.stringMatching(/deadline/) }, output_ref: "__error__", attempt: 1 },
    ]);
  });
});

describe("on_deadline_breach (A.3)", () => {
  it("runs the escalation handler once, recording its answer under _sla:<step>, and the step still fails", async () => {
    const retry = { max_attempts: 10, initial_backoff: 300, max_backoff: 300 };
    const escalate = { handler: "log", params: { message: "late: {{ context.data.order }}" } };
    const seq = await insertSequence(db, "esc", [
      step("late", "fail", { retryable: true }, { deadline: 100, retry, on_deadline_breach: escalate }),
    ]);
    const [id] = await insertInstancesOf(db, "esc", seq, 1, { data: { order: "A-17" }, config: null });
    await startScheduler();
    const failed = await until(() => instance(id!), (i) => i.state === "failed");
    expect(failed.state).toBe("failed");
    expect(await outputs(id!)).toEqual([
      { block_id: "_sla:late", output: { message: "late: A-17" }, output_ref: null, attempt: 1 },
      { block_id: "late", output: { __error__: true, retryable: false, message: "deadline exceeded" }, output_ref: "__error__", attempt: 1 },
    ]);
    // B.1: templates' `outputs` never see the engine's _sla record.
    expect(Object.keys(await loadLatestOutputs(db.sql, asTenantId("esc"), id!))).toEqual(["late"]);
  });

  it("records an escalation handler it cannot run instead of queueing it", async () => {
    const seq = await insertSequence(db, "esc2", [
      step("late", "fail", { retryable: true }, {
        deadline: 100, retry: { max_attempts: 5, initial_backoff: 300, max_backoff: 300 }, on_deadline_breach: { handler: "pager_worker", params: null },
      }),
    ]);
    const [id] = await insertInstancesOf(db, "esc2", seq);
    await startScheduler();
    await until(() => instance(id!), (i) => i.state === "failed");
    const sla = (await outputs(id!)).filter((o) => o.block_id === "_sla:late");
    expect(sla).toEqual([
      { block_id: "_sla:late", output: { __error__: true, retryable: false, message: "escalation handler not found: pager_worker" }, output_ref: null, attempt: 1 },
    ]);
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM worker_tasks WHERE instance_id = $1", [id]);
    expect(rows[0].n).toBe(0);
  });
});

describe("fencing", () => {
  it("rejects a write with a stale lease epoch and changes nothing", async () => {
    const seq = await insertSequence(db, "acme", [step("a", "noop")]);
    const [id] = await insertInstancesOf(db, "acme", seq);
    await db.sql.query("UPDATE task_instances SET state = 'running', lease_epoch = 3 WHERE id = $1", [id]);
    const stale = await commitProgress(db.sql, {
      instanceId: id!, tenantId: asTenantId("acme"), leaseEpoch: 2, state: "completed", cursor: { stale: true },
      outputs: [{ blockId: "a", output: { from: "the past" }, attempt: 0 }],
    });
    expect(stale).toBe(false);
    expect(await instance(id!)).toMatchObject({ state: "running", lease_epoch: 3, cursor: null });
    expect(await outputs(id!)).toEqual([]);
    // and the current holder can write
    expect(await commitProgress(db.sql, { instanceId: id!, tenantId: asTenantId("acme"), leaseEpoch: 3, state: "completed", cursor: null })).toBe(true);
  });
});

describe("typed handler outcomes", () => {
  it("snooze: the step waits until the given time and runs again with the same attempt number", async () => {
    const calls: number[] = [];
    const handlers = new HandlerRegistry([
      ["patient", async (input) => {
        calls.push(input.attempt);
        return calls.length === 1 ? { kind: "snooze", until: new Date(Date.now() + 400) } : { kind: "success", output: { calls: calls.length } };
      }],
    ]);
    const seq = await insertSequence(db, "snooze", [step("wait", "patient")]);
    const [id] = await insertInstancesOf(db, "snooze", seq);
    await startScheduler({}, handlers);
    const snoozed = await until(() => instance(id!), (i) => i.defer_reason === "snooze");
    expect(snoozed).toMatchObject({ state: "scheduled", defer_reason: "snooze" });
    expect(snoozed.next_fire_at.getTime()).toBeGreaterThan(Date.now() + 100);
    expect(await until(() => instance(id!), (i) => i.state === "completed")).toMatchObject({ state: "completed" });
    expect(calls).toEqual([0, 0]);
    expect(await outputs(id!)).toEqual([{ block_id: "wait", output: { calls: 2 }, output_ref: null, attempt: 0 }]);
  });

  it("cancel: the step ends cancelled, so does a flat instance, and what follows never runs", async () => {
    const ran: string[] = [];
    const handlers = new HandlerRegistry([
      ["refuse", async () => ({ kind: "cancel" })],
      ["after", async (input) => (ran.push(input.blockId), { kind: "success", output: {} })],
    ]);
    const seq = await insertSequence(db, "cancel", [step("first", "refuse"), step("second", "after")]);
    const [id] = await insertInstancesOf(db, "cancel", seq);
    await startScheduler({}, handlers);
    const ended = await until(() => instance(id!), (i) => i.state === "cancelled");
    expect(ended.state).toBe("cancelled");
    expect(ended.cursor.nodes.first.status).toBe("cancelled");
    expect(ran).toEqual([]);
    expect(await outputs(id!)).toEqual([]);
  });
});
