// Worker-task SQL against a real PostgreSQL (wire-format H): claims are oldest first, per handler
// and queue, per tenant, and never twice; reports are fenced by worker id and claim epoch and
// wake the waiting instance; the reaper reclaims and times out; cancelled tasks are gone.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, parkOnWorkerTask } from "../../test/factories.ts";
import {
  cancelWorkerTasks, completeWorkerTask, failWorkerTask, findTaskResult, heartbeatWorkerTask, listWorkerTaskAttempts,
  listWorkerTasks, pollWorkerTasks, reapWorkerTasks, TIMEOUT_MESSAGE, workerTaskStats,
} from "./worker-tasks.ts";
import { asTenantId } from "./index.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

/** A handler name of its own per test, so tests never see each other's tasks. */
const handler = () => `h-${randomUUID().slice(0, 8)}`;

interface Parked {
  instanceId: string;
  taskId: string;
}

const park = (tenantId: string, handlerName: string, options: Parameters<typeof parkOnWorkerTask>[3] = {}): Promise<Parked> =>
  parkOnWorkerTask(db, tenantId, handlerName, options);

/** `count` bare tasks (no instance behind them), created 1 ms apart from `since`, oldest first. */
async function insertTasks(tenantId: string, handlerName: string, count: number, options: { queue?: string; since?: Date } = {}) {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, queue_name, created_at)
     SELECT gen_random_uuid(), $1, gen_random_uuid(), 'b' || i, $2, $3, $4::timestamptz + i * interval '1 millisecond'
       FROM generate_series(1, $5) AS i
     RETURNING id`,
    [tenantId, handlerName, options.queue ?? null, options.since ?? new Date(Date.now() - 60_000), count],
  );
  return rows.map((row) => row.id);
}

async function task(id: string) {
  const { rows } = await db.sql.query(
    `SELECT state, worker_id, claim_epoch, claimed_at, heartbeat_at, output, error_message, error_retryable, completed_at,
            resume_checkpoint, checkpoint_seq
       FROM worker_tasks WHERE id = $1`,
    [id],
  );
  return rows[0];
}

async function instance(id: string) {
  const { rows } = await db.sql.query<{ state: string; next_fire_at: Date | null; due: boolean }>(
    "SELECT state, next_fire_at, next_fire_at <= now() AS due FROM task_instances WHERE id = $1",
    [id],
  );
  return rows[0]!;
}

async function events(taskId: string) {
  const { rows } = await db.sql.query("SELECT tenant_id, event, worker_id, claim_epoch FROM worker_task_attempts WHERE task_id = $1 ORDER BY id", [taskId]);
  return rows;
}

const poll = (tenantId: string, handlerName: string, workerId = "w1", limit = 1, queueName: string | null = null) =>
  pollWorkerTasks(db.sql, asTenantId(tenantId), { handlerName, queueName, workerId, limit });

describe("poll", () => {
  it("claims the oldest pending task first, with epoch 1 on its first claim, and records the claim", async () => {
    const h = handler();
    const [oldest, middle, newest] = await insertTasks("acme", h, 3);
    const before = Date.now();
    const [first] = await poll("acme", h, "w1");
    expect(first).toMatchObject({ id: oldest, state: "claimed", workerId: "w1", claimEpoch: 1, handlerName: h });
    expect(first!.claimedAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(first!.heartbeatAt).toEqual(first!.claimedAt);
    expect(await events(oldest!)).toEqual([{ tenant_id: "acme", event: "claimed", worker_id: "w1", claim_epoch: 1 }]);
    expect((await poll("acme", h, "w2", 5)).map((t) => t.id)).toEqual([middle, newest]);
    expect(await poll("acme", h, "w3", 5)).toEqual([]);
  });

  it("claims at most `limit` tasks, and none for a limit of 0", async () => {
    const h = handler();
    const ids = await insertTasks("acme", h, 5);
    expect(await poll("acme", h, "w1", 0)).toEqual([]);
    expect((await poll("acme", h, "w1", 3)).map((t) => t.id)).toEqual(ids.slice(0, 3));
    expect((await poll("acme", h, "w1", 3)).map((t) => t.id)).toEqual(ids.slice(3));
  });

  it("claims only the handler asked for; the queue poll only that queue, the plain poll any queue", async () => {
    const h = handler();
    const other = handler();
    const [otherHandler] = await insertTasks("acme", other, 1);
    const [billing] = await insertTasks("acme", h, 1, { queue: "billing", since: new Date(Date.now() - 50_000) });
    const [mail] = await insertTasks("acme", h, 1, { queue: "mail", since: new Date(Date.now() - 40_000) });
    const [none] = await insertTasks("acme", h, 1, { since: new Date(Date.now() - 30_000) });

    expect((await poll("acme", h, "w1", 10, "mail")).map((t) => t.id)).toEqual([mail]);
    expect(await poll("acme", h, "w1", 10, "mail")).toEqual([]);
    expect((await poll("acme", h, "w1", 10)).map((t) => t.id)).toEqual([billing, none]);
    expect((await task(otherHandler!)).state).toBe("pending");
  });

  it("never hands a tenant another tenant's tasks, even older ones", async () => {
    const h = handler();
    const [theirs] = await insertTasks("globex", h, 1, { since: new Date(Date.now() - 3_600_000) });
    const [ours] = await insertTasks("acme", h, 1);
    expect((await poll("acme", h, "w1", 10)).map((t) => t.id)).toEqual([ours]);
    expect(await poll("acme", h, "w1", 10)).toEqual([]);
    expect((await task(theirs!)).state).toBe("pending");
    expect(await events(theirs!)).toEqual([]);
  });

  it("never gives one task to two of several concurrent pollers", async () => {
    const h = handler();
    const ids = await insertTasks("acme", h, 200);
    const clients = await Promise.all(
      [1, 2, 3, 4].map(async () => {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        return client;
      }),
    );
    try {
      const claimedBy = await Promise.all(
        clients.map(async (client, index) => {
          const mine: string[] = [];
          for (;;) {
            const batch = await pollWorkerTasks(client, asTenantId("acme"), { handlerName: h, queueName: null, workerId: `w${index}`, limit: 7 });
            if (batch.length === 0) return mine;
            mine.push(...batch.map((t) => t.id));
          }
        }),
      );
      const all = claimedBy.flat();
      expect(all).toHaveLength(200);
      expect(new Set(all)).toEqual(new Set(ids));
      // Every poller did some of the work: the claims interleaved rather than queueing.
      expect(claimedBy.filter((mine) => mine.length > 0).length).toBeGreaterThan(1);
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  });
});

describe("complete and fail", () => {
  it("complete: the task is completed with the output, the event recorded, the waiting instance due now", async () => {
    const h = handler();
    const { instanceId, taskId } = await park("acme", h);
    expect((await instance(instanceId)).state).toBe("waiting");
    const [claimed] = await poll("acme", h, "w1");
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: claimed!.claimEpoch }, { total: 3 })).toBe("ok");

    expect(await task(taskId)).toMatchObject({ state: "completed", output: { total: 3 }, worker_id: "w1", claim_epoch: 1 });
    expect((await task(taskId)).completed_at).not.toBeNull();
    expect(await instance(instanceId)).toMatchObject({ state: "scheduled", due: true });
    expect((await events(taskId)).map((e) => e.event)).toEqual(["claimed", "completed"]);
    expect(await findTaskResult(db.sql, asTenantId("acme"), taskId)).toEqual({
      state: "completed", output: { total: 3 }, errorMessage: null, errorRetryable: null, resumeCheckpoint: null, checkpointSeq: 0, workerId: "w1",
    });
  });

  it("fail: the task is failed with the message and retryability, and the instance woken", async () => {
    const h = handler();
    const { instanceId, taskId } = await park("acme", h);
    await poll("acme", h, "w1");
    const lease = { workerId: "w1", claimEpoch: 1 };
    expect(await failWorkerTask(db.sql, asTenantId("acme"), taskId, lease, { message: "vendor down", retryable: true })).toBe("ok");
    expect(await task(taskId)).toMatchObject({ state: "failed", error_message: "vendor down", error_retryable: true, output: null });
    expect(await instance(instanceId)).toMatchObject({ state: "scheduled", due: true });
    expect(await listWorkerTaskAttempts(db.sql, asTenantId("acme"), taskId)).toEqual([
      expect.objectContaining({ event: "claimed", claimEpoch: 1, workerId: "w1", reason: null }),
      expect.objectContaining({ event: "failed", claimEpoch: 1, workerId: "w1", reason: "vendor down" }),
    ]);
    expect(await findTaskResult(db.sql, asTenantId("acme"), taskId)).toEqual({
      state: "failed", output: null, errorMessage: "vendor down", errorRetryable: true, resumeCheckpoint: null, checkpointSeq: 0, workerId: "w1",
    });
  });

  it("refuses a stale epoch or another worker with `stale`, records the refusal, and changes nothing", async () => {
    const h = handler();
    const { instanceId, taskId } = await park("acme", h);
    await poll("acme", h, "w1");
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: 0 }, { x: 1 })).toBe("stale");
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w2", claimEpoch: 1 }, { x: 1 })).toBe("stale");
    expect(await failWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: 2 }, { message: "m", retryable: false })).toBe("stale");
    expect(await task(taskId)).toMatchObject({ state: "claimed", worker_id: "w1", claim_epoch: 1, output: null });
    expect((await instance(instanceId)).state).toBe("waiting");
    expect(await events(taskId)).toEqual([
      { tenant_id: "acme", event: "claimed", worker_id: "w1", claim_epoch: 1 },
      { tenant_id: "acme", event: "stale_mutation_rejected", worker_id: "w1", claim_epoch: 0 },
      { tenant_id: "acme", event: "stale_mutation_rejected", worker_id: "w2", claim_epoch: 1 },
      { tenant_id: "acme", event: "stale_mutation_rejected", worker_id: "w1", claim_epoch: 2 },
    ]);
    expect((await listWorkerTaskAttempts(db.sql, asTenantId("acme"), taskId))!.at(-1)!.reason).toBe("fail: worker task lease changed");
  });

  it("refuses a report on a task that is not claimed (pending, or already finished)", async () => {
    const h = handler();
    const { taskId } = await park("acme", h);
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: 0 }, null)).toBe("stale");
    await poll("acme", h, "w1");
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: 1 }, null)).toBe("ok");
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: 1 }, { again: true })).toBe("stale");
    expect(await task(taskId)).toMatchObject({ state: "completed", output: null });
  });

  it("answers not_found for an unknown task and for another tenant's, recording nothing", async () => {
    const h = handler();
    const { taskId } = await park("globex", h);
    await poll("globex", h, "w1");
    const lease = { workerId: "w1", claimEpoch: 1 };
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), randomUUID(), lease, {})).toBe("not_found");
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, lease, {})).toBe("not_found");
    expect(await failWorkerTask(db.sql, asTenantId("acme"), taskId, lease, { message: "x", retryable: false })).toBe("not_found");
    expect(await heartbeatWorkerTask(db.sql, asTenantId("acme"), taskId, lease, null)).toEqual({ kind: "not_found" });
    expect(await listWorkerTaskAttempts(db.sql, asTenantId("acme"), taskId)).toBeNull();
    expect((await task(taskId)).state).toBe("claimed");
    expect((await events(taskId)).map((e) => e.tenant_id)).toEqual(["globex"]);
  });

  it("accepts a report for a terminal or paused instance and leaves the instance alone", async () => {
    for (const state of ["completed", "failed", "cancelled", "paused"]) {
      const h = handler();
      const { instanceId, taskId } = await park("acme", h);
      const fireAt = new Date("2030-01-01T00:00:00Z");
      await db.sql.query("UPDATE task_instances SET state = $2, next_fire_at = $3 WHERE id = $1", [instanceId, state, fireAt]);
      await poll("acme", h, "w1");
      expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: 1 }, { late: true })).toBe("ok");
      expect(await instance(instanceId), state).toMatchObject({ state, next_fire_at: fireAt });
      expect((await task(taskId)).state).toBe("completed");
    }
  });
});

describe("heartbeat", () => {
  it("refreshes heartbeat_at and answers the current checkpoint_seq", async () => {
    const h = handler();
    const { taskId } = await park("acme", h);
    await poll("acme", h, "w1");
    await db.sql.query("UPDATE worker_tasks SET heartbeat_at = now() - interval '30 seconds' WHERE id = $1", [taskId]);
    expect(await heartbeatWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: 1 }, null)).toEqual({ kind: "ok", checkpointSeq: 0 });
    const { rows } = await db.sql.query("SELECT heartbeat_at > now() - interval '5 seconds' AS fresh FROM worker_tasks WHERE id = $1", [taskId]);
    expect(rows[0].fresh).toBe(true);
  });

  it("stores a checkpoint as a compare-and-set on checkpoint_seq, refusing a stale sequence", async () => {
    const h = handler();
    const { taskId } = await park("acme", h);
    await poll("acme", h, "w1");
    const lease = { workerId: "w1", claimEpoch: 1 };
    expect(await heartbeatWorkerTask(db.sql, asTenantId("acme"), taskId, lease, { value: { page: 1 }, seq: 0 })).toEqual({ kind: "ok", checkpointSeq: 1 });
    expect(await heartbeatWorkerTask(db.sql, asTenantId("acme"), taskId, lease, { value: { page: 2 }, seq: 1 })).toEqual({ kind: "ok", checkpointSeq: 2 });
    // A late duplicate of the first write.
    expect(await heartbeatWorkerTask(db.sql, asTenantId("acme"), taskId, lease, { value: { page: 1 }, seq: 0 })).toEqual({ kind: "seq_mismatch", checkpointSeq: 2 });
    expect(await task(taskId)).toMatchObject({ resume_checkpoint: { page: 2 }, checkpoint_seq: 2 });
    expect((await listWorkerTaskAttempts(db.sql, asTenantId("acme"), taskId))!.at(-1)).toMatchObject({
      event: "stale_mutation_rejected", reason: "heartbeat: checkpoint_seq 0 is not current",
    });
  });

  it("refuses another lease with `stale`, even with the right sequence", async () => {
    const h = handler();
    const { taskId } = await park("acme", h);
    await poll("acme", h, "w1");
    expect(await heartbeatWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w2", claimEpoch: 1 }, { value: 1, seq: 0 })).toEqual({ kind: "stale" });
    expect(await heartbeatWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: 7 }, null)).toEqual({ kind: "stale" });
    expect(await task(taskId)).toMatchObject({ resume_checkpoint: null, checkpoint_seq: 0 });
    expect((await events(taskId)).map((e) => e.event)).toEqual(["claimed", "stale_mutation_rejected", "stale_mutation_rejected"]);
  });
});

describe("the reaper", () => {
  it("returns a claimed task without a recent heartbeat to pending; the next claim fences the old worker", async () => {
    const h = handler();
    const { instanceId, taskId } = await park("acme", h);
    const { taskId: fresh } = await park("acme", h);
    await poll("acme", h, "old-worker", 2);
    await db.sql.query("UPDATE worker_tasks SET heartbeat_at = now() - interval '61 seconds' WHERE id = $1", [taskId]);

    expect(await reapWorkerTasks(db.sql, new Date(), { staleMs: 60_000, limit: 100 })).toEqual({ timedOut: 0, reclaimed: 1 });
    expect(await task(taskId)).toMatchObject({ state: "pending", worker_id: null, claimed_at: null, heartbeat_at: null, claim_epoch: 1 });
    expect((await task(fresh)).state).toBe("claimed");
    expect((await instance(instanceId)).state).toBe("waiting");

    const [again] = await poll("acme", h, "new-worker");
    expect(again).toMatchObject({ id: taskId, claimEpoch: 2, workerId: "new-worker" });
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "old-worker", claimEpoch: 1 }, { late: true })).toBe("stale");
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "new-worker", claimEpoch: 2 }, { ok: true })).toBe("ok");
    expect((await listWorkerTaskAttempts(db.sql, asTenantId("acme"), taskId))!.map((a) => [a.event, a.workerId, a.claimEpoch])).toEqual([
      ["claimed", "old-worker", 1],
      ["reclaimed", "old-worker", 1],
      ["claimed", "new-worker", 2],
      ["stale_mutation_rejected", "old-worker", 1],
      ["completed", "new-worker", 2],
    ]);
  });

  it("fails a task whose timeout_ms has passed since creation, retryable, and wakes its instance", async () => {
    const h = handler();
    const expiredPending = await park("acme", h, { timeoutMs: 1_000, ageMs: 5_000 });
    const expiredClaimed = await park("acme", h, { timeoutMs: 1_000, ageMs: 4_000 });
    const inTime = await park("acme", h, { timeoutMs: 60_000, ageMs: 4_000 });
    const noTimeout = await park("acme", h, { ageMs: 3_600_000 });
    await db.sql.query("UPDATE worker_tasks SET state = 'claimed', worker_id = 'w1', claim_epoch = 1, heartbeat_at = now() WHERE id = $1", [
      expiredClaimed.taskId,
    ]);

    expect(await reapWorkerTasks(db.sql, new Date(), { staleMs: 60_000, limit: 100 })).toEqual({ timedOut: 2, reclaimed: 0 });
    for (const parked of [expiredPending, expiredClaimed]) {
      expect(await task(parked.taskId)).toMatchObject({ state: "failed", error_message: TIMEOUT_MESSAGE, error_retryable: true });
      expect(await instance(parked.instanceId)).toMatchObject({ state: "scheduled", due: true });
      expect((await events(parked.taskId)).at(-1)).toMatchObject({ event: "timed_out" });
    }
    expect((await task(inTime.taskId)).state).toBe("pending");
    expect((await task(noTimeout.taskId)).state).toBe("pending");
    // The timed-out worker's late report is fenced like any other.
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), expiredClaimed.taskId, { workerId: "w1", claimEpoch: 1 }, {})).toBe("stale");
  });

  it("takes at most `limit` tasks of each kind per call", async () => {
    const h = handler();
    const ids = await insertTasks("acme", h, 3);
    await db.sql.query(
      "UPDATE worker_tasks SET state = 'claimed', worker_id = 'w', claim_epoch = 1, heartbeat_at = now() - interval '2 minutes' WHERE id = ANY($1)",
      [ids],
    );
    expect(await reapWorkerTasks(db.sql, new Date(), { staleMs: 60_000, limit: 2 })).toEqual({ timedOut: 0, reclaimed: 2 });
    expect(await reapWorkerTasks(db.sql, new Date(), { staleMs: 60_000, limit: 2 })).toEqual({ timedOut: 0, reclaimed: 1 });
  });
});

describe("cancelWorkerTasks", () => {
  it("deletes the open tasks of the blocks named, with a `cancelled` event; polls skip them and reports are not_found", async () => {
    const h = handler();
    const sequenceId = await insertSequence(db, "acme", [{ type: "step", id: "a", handler: h }]);
    const [instanceId] = await insertInstancesOf(db, "acme", sequenceId);
    const insert = (blockId: string, state: string) =>
      db.sql
        .query<{ id: string }>(
          `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, state, worker_id, claim_epoch)
           VALUES (gen_random_uuid(), 'acme', $1, $2, $3, $4, CASE WHEN $4 = 'pending' THEN NULL ELSE 'w1' END, CASE WHEN $4 = 'pending' THEN 0 ELSE 1 END)
           RETURNING id`,
          [instanceId, blockId, h, state],
        )
        .then((r) => r.rows[0]!.id);
    const pending = await insert("loser", "pending");
    const claimed = await insert("loser", "claimed");
    const done = await insert("loser", "completed");
    const otherBlock = await insert("winner", "pending");
    // The same block id in another tenant is not touched.
    const foreign = (await insertTasks("globex", h, 1))[0]!;
    await db.sql.query("UPDATE worker_tasks SET block_id = 'loser', instance_id = $2 WHERE id = $1", [foreign, instanceId]);

    expect(await cancelWorkerTasks(db.sql, asTenantId("acme"), instanceId!, ["loser"])).toBe(2);
    const { rows } = await db.sql.query<{ id: string }>("SELECT id FROM worker_tasks WHERE id = ANY($1) ORDER BY id", [
      [pending, claimed, done, otherBlock, foreign],
    ]);
    expect(rows.map((r) => r.id).sort()).toEqual([done, otherBlock, foreign].sort());

    expect((await poll("acme", h, "w2", 10)).map((t) => t.id)).toEqual([otherBlock]);
    expect(await completeWorkerTask(db.sql, asTenantId("acme"), claimed, { workerId: "w1", claimEpoch: 1 }, {})).toBe("not_found");
    expect(await listWorkerTaskAttempts(db.sql, asTenantId("acme"), claimed)).toEqual([
      expect.objectContaining({ event: "cancelled", workerId: "w1", claimEpoch: 1 }),
    ]);
    expect(await cancelWorkerTasks(db.sql, asTenantId("acme"), instanceId!, [])).toBe(0);
  });
});

describe("reads", () => {
  it("findTaskResult: the task by id for its own tenant, or null; pending while the worker has not reported", async () => {
    const h = handler();
    const { taskId } = await park("acme", h, { attempt: 2 });
    expect(await findTaskResult(db.sql, asTenantId("acme"), taskId)).toEqual({
      state: "pending", output: null, errorMessage: null, errorRetryable: null, resumeCheckpoint: null, checkpointSeq: 0, workerId: null,
    });
    expect(await findTaskResult(db.sql, asTenantId("globex"), taskId)).toBeNull();
    expect(await findTaskResult(db.sql, asTenantId("acme"), "00000000-0000-4000-8000-000000000000")).toBeNull();
    await db.sql.query("UPDATE worker_tasks SET state = 'failed', resume_checkpoint = '{\"page\": 4}', checkpoint_seq = 3 WHERE id = $1", [taskId]);
    expect(await findTaskResult(db.sql, asTenantId("acme"), taskId)).toMatchObject({ state: "failed", resumeCheckpoint: { page: 4 }, checkpointSeq: 3 });
  });

  it("lists the tenant's tasks newest first, by state, handler, worker and queue, paged", async () => {
    const h = handler();
    const [a, b, c] = await insertTasks("tenant-list", h, 3, { queue: "q1" });
    await insertTasks("tenant-list-other", h, 2);
    await db.sql.query("UPDATE worker_tasks SET state = 'claimed', worker_id = 'w9', claim_epoch = 1 WHERE id = $1", [b]);
    await db.sql.query("UPDATE worker_tasks SET queue_name = NULL WHERE id = $1", [c]);
    const list = (filter: object) => listWorkerTasks(db.sql, asTenantId("tenant-list"), { offset: 0, limit: 50, ...filter }).then((ts) => ts.map((t) => t.id));
    expect(await list({})).toEqual([c, b, a]);
    expect(await list({ states: ["pending"] })).toEqual([c, a]);
    expect(await list({ states: ["pending", "claimed"], handlerName: h })).toEqual([c, b, a]);
    expect(await list({ handlerName: "nope" })).toEqual([]);
    expect(await list({ workerId: "w9" })).toEqual([b]);
    expect(await list({ queueName: "q1" })).toEqual([b, a]);
    expect(await list({ limit: 1, offset: 1 })).toEqual([b]);
  });

  it("counts tasks by state and handler, every state present, and names the workers holding claims", async () => {
    const [x1, x2] = await insertTasks("tenant-stats", "x", 3);
    const [y1] = await insertTasks("tenant-stats", "y", 1);
    await insertTasks("tenant-stats-other", "x", 5);
    await db.sql.query("UPDATE worker_tasks SET state = 'claimed', worker_id = 'w-b', claim_epoch = 1 WHERE id = $1", [x1]);
    await db.sql.query("UPDATE worker_tasks SET state = 'claimed', worker_id = 'w-a', claim_epoch = 1 WHERE id = $1", [y1]);
    await db.sql.query("UPDATE worker_tasks SET state = 'completed', worker_id = 'w-c', claim_epoch = 1 WHERE id = $1", [x2]);
    expect(await workerTaskStats(db.sql, asTenantId("tenant-stats"))).toEqual({
      byState: { pending: 1, claimed: 2, completed: 1, failed: 0 },
      byHandler: {
        x: { pending: 1, claimed: 1, completed: 1, failed: 0 },
        y: { pending: 0, claimed: 1, completed: 0, failed: 0 },
      },
      activeWorkers: ["w-a", "w-b"],
    });
    expect(await workerTaskStats(db.sql, asTenantId("tenant-none"))).toEqual({
      byState: { pending: 0, claimed: 0, completed: 0, failed: 0 }, byHandler: {}, activeWorkers: [],
    });
  });

  it("lists a task's attempt events oldest first; an unclaimed task has none", async () => {
    const h = handler();
    const { taskId } = await park("acme", h);
    expect(await listWorkerTaskAttempts(db.sql, asTenantId("acme"), taskId)).toEqual([]);
    await poll("acme", h, "w1");
    await completeWorkerTask(db.sql, asTenantId("acme"), taskId, { workerId: "w1", claimEpoch: 1 }, 42);
    const attempts = await listWorkerTaskAttempts(db.sql, asTenantId("acme"), taskId);
    expect(attempts).toEqual([
      { id: expect.any(Number), taskId, claimEpoch: 1, workerId: "w1", event: "claimed", reason: null, createdAt: expect.any(Date) },
      { id: expect.any(Number), taskId, claimEpoch: 1, workerId: "w1", event: "completed", reason: null, createdAt: expect.any(Date) },
    ]);
    expect(attempts![0]!.id).toBeLessThan(attempts![1]!.id);
  });
});
