// The lost wake-up between an instance parking on what it waits for and that result landing,
// played out in both orders on a real PostgreSQL. A row lock held by the test stalls one side
// after its statement has taken its snapshot, while the other side commits in between: the
// stalled side then reads the other in a snapshot from before. Each case left an instance
// `waiting` forever before wakeups.ts.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { createChildInstance } from "./children.ts";
import { commitProgress, insertWorkerTask } from "./execution.ts";
import { asTenantId } from "./ids.ts";
import { patchInstanceState } from "./instance-state.ts";
import { enqueueSignalIfActive } from "./signals.ts";
import { completeWorkerTask, pollWorkerTasks } from "./worker-tasks.ts";

let db: TestDatabase;
let pool: pg.Pool; // the lock holder, the stalled side, the other side and the test's own reads at once
beforeAll(async () => {
  db = await freshDatabase();
  pool = testPool(db.url, 8);
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

const TENANT = asTenantId("acme");

/** A running instance under lease epoch 1, as a claim leaves it. */
async function runningInstance(): Promise<string> {
  const sequenceId = await insertSequence(db, TENANT, [{ type: "step", id: "ext", handler: "ext_worker" }]);
  const [id] = (await insertInstancesOf(db, TENANT, sequenceId)) as [string];
  await pool.query("UPDATE task_instances SET state = 'running', lease_epoch = 1 WHERE id = $1", [id]);
  return id;
}

/** A running instance that has handed a task to a worker, who has claimed it. */
async function withClaimedTask(): Promise<{ instanceId: string; taskId: string; claimEpoch: number }> {
  const instanceId = await runningInstance();
  const taskId = (await insertWorkerTask(pool, {
    instanceId, tenantId: TENANT, leaseEpoch: 1, blockId: "ext", handlerName: "ext_worker",
    queueName: null, params: {}, context: {}, attempt: 0, timeoutMs: null,
  }))!;
  const [task] = await pollWorkerTasks(pool, TENANT, { handlerName: "ext_worker", queueName: null, workerId: "w", limit: 1 });
  expect(task?.id).toBe(taskId);
  return { instanceId, taskId, claimEpoch: task!.claimEpoch };
}

/**
 * Runs `stalled` while the test holds `lockSql` (a row lock), waits until it is blocked on that
 * lock, runs `between` to the end, then lets `stalled` go on and returns what it returned.
 */
async function stallWhile<T>(lockSql: string, lockValues: unknown[], stalled: () => Promise<T>, between: () => Promise<unknown>): Promise<T> {
  const holder: pg.PoolClient = await pool.connect();
  try {
    await holder.query("BEGIN");
    await holder.query(lockSql, lockValues);
    const pending = stalled();
    pending.catch(() => {}); // awaited below; until then a rejection must not count as unhandled
    await expect.poll(async () => (await pool.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
    )).rows[0].n, { timeout: 5_000, interval: 10 }).toBeGreaterThan(0);
    await between();
    await holder.query("COMMIT");
    return await pending;
  } catch (error) {
    await holder.query("ROLLBACK");
    throw error;
  } finally {
    holder.release();
  }
}

const stateOf = async (id: string) => (await pool.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state;
const park = (instanceId: string, waitingOn: string[]) =>
  commitProgress(pool, { instanceId, tenantId: TENANT, leaseEpoch: 1, state: "waiting", cursor: null, waitingOn });
const end = (instanceId: string) => commitProgress(pool, { instanceId, tenantId: TENANT, leaseEpoch: 1, state: "completed", cursor: null });

describe("a worker's report and its instance parking at the same moment", () => {
  it("wakes the instance when the report read it as running and the parking committed before the report did", async () => {
    const { instanceId, taskId, claimEpoch } = await withClaimedTask();
    const outcome = await stallWhile(
      "SELECT 1 FROM worker_tasks WHERE id = $1 FOR UPDATE", [taskId],
      () => completeWorkerTask(pool, TENANT, taskId, { workerId: "w", claimEpoch }, { done: true }),
      async () => expect(await park(instanceId, [taskId])).toBe(true),
    );
    expect(outcome).toBe("ok");
    expect(await stateOf(instanceId)).toBe("scheduled");
  });

  it("schedules the instance when the parking read the task as open and the report committed before the parking did", async () => {
    const { instanceId, taskId, claimEpoch } = await withClaimedTask();
    const parked = await stallWhile(
      "SELECT 1 FROM task_instances WHERE id = $1 FOR UPDATE", [instanceId],
      () => park(instanceId, [taskId]),
      async () => expect(await completeWorkerTask(pool, TENANT, taskId, { workerId: "w", claimEpoch }, { done: true })).toBe("ok"),
    );
    expect(parked).toBe(true);
    expect(await stateOf(instanceId)).toBe("scheduled");
  });

  it("leaves an instance parked when what it waits for is still open", async () => {
    const { instanceId, taskId } = await withClaimedTask();
    expect(await park(instanceId, [taskId])).toBe(true);
    expect(await stateOf(instanceId)).toBe("waiting");
  });
});

describe("a child's end and its parent parking at the same moment", () => {
  async function parentWithChild(): Promise<{ parentId: string; childId: string }> {
    const parentId = await runningInstance();
    const sequenceId = await insertSequence(db, TENANT, [{ type: "step", id: "n", handler: "noop" }]);
    const created = await createChildInstance(pool, { instanceId: parentId, tenantId: TENANT, leaseEpoch: 1 }, { sequenceId, blockId: "sub", input: {} });
    if (!("childId" in created)) throw new Error("no child");
    await pool.query("UPDATE task_instances SET state = 'running', lease_epoch = 1 WHERE id = $1", [created.childId]);
    return { parentId, childId: created.childId };
  }

  it("wakes the parent when the child's end read it as running and the parking committed before the end did", async () => {
    const { parentId, childId } = await parentWithChild();
    const ended = await stallWhile(
      "SELECT 1 FROM task_instances WHERE id = $1 FOR UPDATE", [childId],
      () => end(childId),
      async () => expect(await park(parentId, [childId])).toBe(true),
    );
    expect(ended).toBe(true);
    expect(await stateOf(parentId)).toBe("scheduled");
  });

  it("schedules the parent when the parking read the child as running and the end committed before the parking did", async () => {
    const { parentId, childId } = await parentWithChild();
    const parked = await stallWhile(
      "SELECT 1 FROM task_instances WHERE id = $1 FOR UPDATE", [parentId],
      () => park(parentId, [childId]),
      async () => expect(await end(childId)).toBe(true),
    );
    expect(parked).toBe(true);
    expect(await stateOf(parentId)).toBe("scheduled");
  });

  it("wakes the parent of a child cancelled through the API while the parent was parking", async () => {
    const { parentId, childId } = await parentWithChild();
    const parked = await stallWhile(
      "SELECT 1 FROM task_instances WHERE id = $1 FOR UPDATE", [parentId],
      () => park(parentId, [childId]),
      () => patchInstanceState(pool, TENANT, childId, "cancelled"),
    );
    expect(parked).toBe(true);
    expect(await stateOf(parentId)).toBe("scheduled");
  });

  it("does not wake a parent for a child it is not waiting on", async () => {
    const { parentId } = await parentWithChild();
    const { childId: other } = await parentWithChild();
    expect(await park(parentId, [randomUUID()])).toBe(true);
    expect(await end(other)).toBe(true);
    expect(await stateOf(parentId)).toBe("waiting");
  });
});

describe("a signal queued while the run ends, too late for it to read", () => {
  const leave = (instanceId: string, state: "waiting" | "paused" | "scheduled") =>
    commitProgress(pool, { instanceId, tenantId: TENANT, leaseEpoch: 1, state, cursor: null, ...(state === "scheduled" ? { nextFireAt: new Date(Date.now() + 3_600_000) } : {}) });
  const signal = (instanceId: string, type: "cancel" | "resume" | { custom: string }) =>
    enqueueSignalIfActive(pool, TENANT, instanceId, { type, payload: null });

  it("makes an instance that parked waiting (on a gate, a child) due now", async () => {
    const id = await runningInstance();
    await signal(id, "cancel"); // running: the sender leaves it to the run
    expect(await leave(id, "waiting")).toBe(true);
    expect(await stateOf(id)).toBe("scheduled");
  });

  it("makes one deferred an hour due now, and a paused one due for resume or cancel only", async () => {
    const deferred = await runningInstance();
    await signal(deferred, { custom: "human_input:gate" });
    expect(await leave(deferred, "scheduled")).toBe(true);
    const { rows } = await pool.query("SELECT state, next_fire_at <= now() AS due FROM task_instances WHERE id = $1", [deferred]);
    expect(rows[0]).toEqual({ state: "scheduled", due: true });

    const resumed = await runningInstance();
    await signal(resumed, "resume");
    expect(await leave(resumed, "paused")).toBe(true);
    expect(await stateOf(resumed)).toBe("scheduled");

    const held = await runningInstance();
    await signal(held, { custom: "note" });
    expect(await leave(held, "paused")).toBe(true);
    expect(await stateOf(held)).toBe("paused"); // it waits in the queue until the resume
  });

  it("leaves an instance parked when the run applied every signal (the commit delivered them)", async () => {
    const id = await runningInstance();
    const { id: signalId } = await signal(id, "cancel");
    expect(await commitProgress(pool, { instanceId: id, tenantId: TENANT, leaseEpoch: 1, state: "waiting", cursor: null, signalsApplied: [signalId] })).toBe(true);
    expect(await stateOf(id)).toBe("waiting");
  });
});
