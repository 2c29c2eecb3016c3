// send_signal (D) against a target the engine is finishing at that very moment, with the real
// pieces on both sides: the coordination handler, and the engine's own completion commit (the
// group-committing ProgressWriter over commitProgressBatch, as the scheduler runs it), then the
// whole engine through the scheduler. The invariant: a signal is either refused, with the one
// answer that does not reveal the target's state, or accepted and consumed; never left
// undelivered on a finished instance.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { ProgressWriter } from "../exec/progress-writer.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { claimDueInstances } from "../storage/claim.ts";
import { asTenantId, backendOn, BackendStore, RunStore } from "../storage/index.ts";
import { sendSignal as sendSignalHandler } from "./send-signal.ts";
import { makeInput } from "./test-support.ts";
import type { HandlerOutcome } from "./types.ts";
import { makeScheduler } from "../../test/scheduler.ts";

const TENANT = "acme";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REFUSED: HandlerOutcome = { kind: "failure", retryable: false, message: "target instance not found" };

let db: TestDatabase;
/** The sender's own connections, so the send and the engine's commit really run side by side. */
let sender: pg.Pool;
let oneStep = "";
beforeAll(async () => {
  db = await freshDatabase();
  sender = testPool(db.url, 4);
  oneStep = await insertSequence(db, TENANT, [{ type: "step", id: "x", handler: "noop" }]);
});
afterAll(async () => {
  await sender.end();
  await db.drop();
});

const engineBackend = () => db.storage.backends.primary;

/** A one-step instance claimed the way the scheduler claims it: running, under a fresh lease epoch. */
async function claimedInstance() {
  const [id] = (await insertInstancesOf(db, TENANT, oneStep)) as [string];
  // A second ahead: next_fire_at is stored rounded to the millisecond, possibly up.
  const now = new Date(Date.now() + 1_000);
  const [claim] = await claimDueInstances(engineBackend().pool, { now, limit: 1, maxPerTenant: 0, leaseOwner: "engine-test", leaseMs: 30_000 });
  expect(claim?.id).toBe(id);
  return claim!;
}

/** What runTree commits when its tree has settled: the step's output and the terminal state, in one write. */
const completion = (claim: { id: string; tenantId: string; leaseEpoch: number }) => ({
  instanceId: claim.id, tenantId: asTenantId(claim.tenantId), leaseEpoch: claim.leaseEpoch, state: "completed" as const,
  cursor: { v: 2, nodes: { x: { status: "completed" } } }, outputs: [{ blockId: "x", output: {}, attempt: 0 }],
});

/** The send_signal handler as a caller in TENANT runs it, over the sender's own connections. */
const signalFrom = (params: unknown) => {
  const caller = new RunStore(backendOn("primary", sender), { id: randomUUID(), tenantId: asTenantId(TENANT), leaseEpoch: 1, dueAt: new Date() });
  return sendSignalHandler(makeInput(params, { instances: caller }));
};
const sendSignal = (target: string, round: number) =>
  signalFrom({ instance_id: target, signal_type: round % 2 ? { custom: "ping" } : "cancel", payload: { round } });

async function instanceState(id: string): Promise<string> {
  return (await db.sql.query<{ state: string }>("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0]!.state;
}

async function signalsOf(id: string): Promise<{ id: string; delivered: boolean }[]> {
  return (await db.sql.query("SELECT id, delivered FROM signals WHERE instance_id = $1 ORDER BY created_at, id", [id])).rows;
}

describe("send_signal against the engine's completion commit", () => {
  it("refuses a target whose completion committed first, with the answer a missing target gets", async () => {
    const claim = await claimedInstance();
    expect(await new ProgressWriter(new BackendStore(engineBackend())).commit(completion(claim))).toBe(true);
    expect(await sendSignal(claim.id, 0)).toEqual(REFUSED);
    expect(await sendSignal(randomUUID(), 0)).toEqual(REFUSED);
    expect(await signalsOf(claim.id)).toEqual([]);
  });

  it("leaves no signal undelivered when it was accepted just before the completion committed", async () => {
    const claim = await claimedInstance();
    const sent = await sendSignal(claim.id, 1);
    expect(sent).toEqual({ kind: "success", output: { signal_id: expect.stringMatching(UUID) } });
    // The run decided to finish before the signal came (it took the queue at its start), so the
    // completion is written all the same.
    expect(await new ProgressWriter(new BackendStore(engineBackend())).commit(completion(claim))).toBe(true);
    expect(await instanceState(claim.id)).toBe("completed");
    expect(await signalsOf(claim.id)).toEqual([{ id: (sent as { output: { signal_id: string } }).output.signal_id, delivered: true }]);
  });

  it("still merges an update_context accepted just before the completion, later signals winning a key", async () => {
    const claim = await claimedInstance();
    const update = (data: object) => signalFrom({ instance_id: claim.id, signal_type: "update_context", payload: { data } });
    await update({ a: 1, b: 1 });
    await update({ b: 2 });
    expect(await new ProgressWriter(new BackendStore(engineBackend())).commit(completion(claim))).toBe(true);
    const { rows } = await db.sql.query("SELECT state, context -> 'data' AS data FROM task_instances WHERE id = $1", [claim.id]);
    expect(rows[0]).toEqual({ state: "completed", data: { a: 1, b: 2 } });
    expect((await signalsOf(claim.id)).every((s) => s.delivered)).toBe(true);
  });

  it("never leaves an undelivered signal on the finished instance: 100 rounds of both at once", async () => {
    const outcomes = { accepted: 0, refused: 0 };
    const writer = new ProgressWriter(new BackendStore(engineBackend()));
    for (let round = 0; round < 100; round++) {
      const claim = await claimedInstance();
      // Staggered by a jitter either way, so both orders happen.
      const jitter = (round % 7) * 0.5;
      const [committed, sent] = await Promise.all([
        sleep(round % 2 === 0 ? jitter : 0).then(() => writer.commit(completion(claim))),
        sleep(round % 2 === 1 ? jitter : 0).then(() => sendSignal(claim.id, round)),
      ]);
      const signals = await signalsOf(claim.id);
      if (sent.kind === "success") {
        outcomes.accepted++;
        // Accepted while the target still ran: the completion consumed it.
        expect({ round, committed, signals }).toEqual({ round, committed: true, signals: [{ id: (sent.output as { signal_id: string }).signal_id, delivered: true }] });
      } else {
        outcomes.refused++;
        expect({ round, committed, sent, signals }).toEqual({ round, committed: true, sent: REFUSED, signals: [] });
      }
      expect(await instanceState(claim.id)).toBe("completed");
    }
    // Else the race proved nothing (both come up in every run: roughly 30-70 to 70-30).
    expect(outcomes.accepted).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);
  });
});

describe("a send_signal step racing its target through the scheduler", () => {
  let scheduler: Scheduler;
  beforeAll(async () => {
    scheduler = makeScheduler(db, {
      ownerId: "coordination-test",
      config: {
        BULKHEAD_TICK_MS: 5, BULKHEAD_CLAIM_BATCH: 16, BULKHEAD_MAX_INSTANCES_IN_FLIGHT: 16, BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 16,
        BULKHEAD_LEASE_MS: 30_000, BULKHEAD_REAPER_MS: 60_000, BULKHEAD_BREAKER_THRESHOLD: 1_000,
      },
    });
    await scheduler.start();
  });
  afterAll(() => scheduler.stop());

  async function settled(ids: string[]): Promise<Map<string, string>> {
    for (let i = 0; i < 1_000; i++) {
      const { rows } = await db.sql.query<{ id: string; state: string }>("SELECT id, state FROM task_instances WHERE id = ANY($1::uuid[])", [ids]);
      if (rows.every((r) => ["completed", "failed", "cancelled"].includes(r.state))) return new Map(rows.map((r) => [r.id, r.state]));
      await sleep(5);
    }
    throw new Error(`instances ${ids.join(", ")} did not settle`);
  }

  it("leaves the signal either refused or consumed, never pending on the finished target: 100 rounds", async () => {
    const outcomes = { accepted: 0, refused: 0 };
    const senderSequence = await insertSequence(db, TENANT, [
      { type: "step", id: "send", handler: "send_signal", params: { instance_id: "{{context.data.target}}", signal_type: { custom: "ping" }, payload: null } },
    ]);
    for (let round = 0; round < 100; round++) {
      // The target's one step lasts 0-3 ms, well inside the run's 250 ms signal poll.
      const target = await insertSequence(db, TENANT, [{ type: "step", id: "x", handler: "sleep", params: { duration_ms: round % 4 } }]);
      // Both due in one statement, so one claim hands both to the scheduler and they run at once.
      const { rows } = await db.sql.query<{ id: string; target_id: string }>(
        `WITH t AS (
           INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, next_fire_at)
           VALUES (gen_random_uuid(), $1, 'default', $2, 'scheduled', '{"data": null, "config": null}', now()) RETURNING id
         )
         INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, next_fire_at)
         SELECT gen_random_uuid(), $1, 'default', $3, 'scheduled', jsonb_build_object('data', jsonb_build_object('target', t.id), 'config', null), now()
           FROM t RETURNING id, (SELECT id FROM t) AS target_id`,
        [TENANT, target, senderSequence],
      );
      const { id: senderId, target_id: targetId } = rows[0]!;
      const states = await settled([targetId, senderId]);
      const { rows: outputs } = await db.sql.query("SELECT output FROM block_outputs WHERE instance_id = $1 AND block_id = 'send'", [senderId]);
      const signals = await signalsOf(targetId);
      if (states.get(senderId) === "completed") {
        outcomes.accepted++;
        expect({ round, target: states.get(targetId), signals }).toEqual({ round, target: "completed", signals: [{ id: outputs[0].output.signal_id, delivered: true }] });
      } else {
        outcomes.refused++;
        expect({ round, target: states.get(targetId), sender: states.get(senderId), outputs: outputs.map((o) => o.output), signals }).toEqual({
          round, target: "completed", sender: "failed", outputs: [{ __error__: true, retryable: false, message: "target instance not found" }], signals: [],
        });
      }
    }
    // Most sends land while the target runs: the case that used to leave the signal pending.
    expect(outcomes.accepted).toBeGreaterThan(0);
  });
});
