// The signal queue (wire-format G): G.1 wire forms, enqueue refusals, the wake rules per state,
// FIFO reads, consumption by the run's commit only (a run that loses its lease leaves them
// queued), and the race against an engine that finishes the instance while a signal is being sent.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { AppError } from "../errors.ts";
import type { InstanceState } from "./instances.ts";
import {
  decodeSignalType, enqueueSignalIfActive, pendingSignals, signalTypeFromText, signalTypeToText, type SignalType,
} from "./signals.ts";
import { commitProgress } from "./execution.ts";
import { asTenantId } from "./index.ts";

let db: TestDatabase;
/** A second pool, so racing takers and senders really run on connections of their own. */
let other: pg.Pool;
beforeAll(async () => {
  db = await freshDatabase();
  other = testPool(db.url, 4);
});
afterAll(async () => {
  await other.end();
  await db.drop();
});

const TENANT = "acme";
const HOUR = 3_600_000;

interface Row {
  state: InstanceState;
  next_fire_at: Date | null;
  lease_owner: string | null;
  lease_epoch: number;
  defer_reason: string | null;
}

/** An instance in `state`; a scheduled one is due in an hour (deferred), a running one holds a lease at epoch 3. */
async function instanceIn(state: InstanceState, tenantId = TENANT, nextFireAt: Date | null = null): Promise<string> {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, defer_reason,
                                 lease_owner, lease_expires_at, lease_epoch)
     VALUES (gen_random_uuid(), $1, 'default', gen_random_uuid(), $2::text,
             CASE WHEN $2 = 'scheduled' THEN COALESCE($3, now() + interval '1 hour') END,
             CASE WHEN $2 = 'scheduled' THEN 'rate_limit' END,
             CASE WHEN $2 = 'running' THEN 'engine-a' END,
             CASE WHEN $2 = 'running' THEN now() + interval '30 seconds' END,
             3)
     RETURNING id`,
    [tenantId, state, nextFireAt],
  );
  return rows[0]!.id;
}

async function row(id: string): Promise<Row> {
  const { rows } = await db.sql.query<Row>(
    "SELECT state, next_fire_at, lease_owner, lease_epoch, defer_reason FROM task_instances WHERE id = $1",
    [id],
  );
  return rows[0]!;
}

const signalCount = async (instanceId: string) =>
  (await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1", [instanceId])).rows[0].n as number;

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AppError);
  const { code, message } = error as AppError;
  return { code, message };
}

const send = (instanceId: string, type: SignalType = "pause", payload: unknown = null, tenantId = TENANT) =>
  enqueueSignalIfActive(db.sql, asTenantId(tenantId), instanceId, { type, payload });

const near = (date: Date | null) => date !== null && Math.abs(date.getTime() - Date.now()) < 5_000;

describe("G.1 signal_type", () => {
  it.each<[unknown, SignalType]>([
    ["pause", "pause"],
    ["resume", "resume"],
    ["cancel", "cancel"],
    ["update_context", "update_context"],
    [{ custom: "human_input:approve" }, { custom: "human_input:approve" }],
    [{ custom: "" }, { custom: "" }],
  ])("accepts %j", (wire, type) => {
    expect(decodeSignalType(wire)).toEqual({ ok: true, type });
  });

  it.each<[unknown, RegExp]>([
    ["custom:x", /^unknown variant `custom:x`, expected one of `pause`, `resume`, `cancel`, `update_context`, `custom`$/],
    ["invalid_signal_type", /^unknown variant `invalid_signal_type`/],
    ["Pause", /^unknown variant `Pause`/],
    ["custom", /newtype variant `custom`/],
    [{ pause: null }, /^unknown variant `pause`/],
    [{ custom: 1 }, /expected a string/],
    [{ custom: "x", extra: 1 }, /single key/],
    [{}, /single key/],
    [1, /^invalid type/],
    [null, /^invalid type/],
    [["pause"], /^invalid type/],
    [undefined, /^missing field `signal_type`$/],
  ])("rejects %j", (wire, reason) => {
    const decoded = decodeSignalType(wire);
    expect(decoded.ok).toBe(false);
    expect(!decoded.ok && decoded.reason).toMatch(reason);
  });

  it("stores built-ins by name and custom signals as custom:<name>, and reads them back", () => {
    const types: SignalType[] = ["pause", "resume", "cancel", "update_context", { custom: "a:b" }, { custom: "" }];
    expect(types.map(signalTypeToText)).toEqual(["pause", "resume", "cancel", "update_context", "custom:a:b", "custom:"]);
    for (const type of types) expect(signalTypeFromText(signalTypeToText(type))).toEqual(type);
    expect(() => signalTypeFromText("bogus")).toThrow(AppError);
  });
});

describe("enqueueSignalIfActive", () => {
  it("stores the signal for the tenant, undelivered, with its payload", async () => {
    const id = await instanceIn("running");
    const { id: signalId } = await send(id, { custom: "approve" }, { ok: [1, 2] });
    expect(signalId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const { rows } = await db.sql.query("SELECT * FROM signals WHERE id = $1", [signalId]);
    expect(rows).toEqual([{
      id: signalId, tenant_id: TENANT, instance_id: id, signal_type: "custom:approve", payload: { ok: [1, 2] },
      delivered: false, created_at: expect.any(Date), delivered_at: null,
    }]);
  });

  it.each(["completed", "failed", "cancelled"] as const)("refuses a %s instance with 400 and stores nothing", async (state) => {
    const id = await instanceIn(state);
    expect(await refusal(send(id, "resume"))).toEqual({
      code: "invalid_argument",
      message: `cannot send signal to instance ${id}: target is in a terminal state`,
    });
    expect(await signalCount(id)).toBe(0);
  });

  it("answers a missing and a foreign instance alike, terminal or not, and stores nothing", async () => {
    const missing = await refusal(send(randomUUID()));
    expect(missing).toEqual({ code: "not_found", message: "instance not found" });
    for (const state of ["running", "completed"] as const) {
      const foreign = await instanceIn(state, "globex");
      expect(await refusal(send(foreign))).toEqual(missing);
      expect(await signalCount(foreign)).toBe(0);
    }
  });

  it("refuses text PostgreSQL cannot store with 400, not 500", async () => {
    const id = await instanceIn("running");
    expect((await refusal(send(id, "update_context", { data: "a\u0000b" }))).code).toBe("invalid_argument");
  });
});

describe("wake rules", () => {
  const ALL: SignalType[] = ["pause", "resume", "cancel", "update_context", { custom: "x" }];

  it.each(ALL)("a scheduled instance due later is due now after %j", async (type) => {
    const id = await instanceIn("scheduled");
    await send(id, type);
    const after = await row(id);
    expect(after).toMatchObject({ state: "scheduled", defer_reason: null });
    expect(near(after.next_fire_at)).toBe(true);
  });

  it("a scheduled instance already overdue keeps its earlier due time (and its place in the claim order)", async () => {
    const overdue = new Date(Date.now() - HOUR);
    const id = await instanceIn("scheduled", TENANT, overdue);
    await send(id, "cancel");
    expect((await row(id)).next_fire_at).toEqual(overdue);
  });

  it.each(ALL.filter((t) => t !== "pause"))("a waiting instance becomes scheduled, due now, after %j", async (type) => {
    const id = await instanceIn("waiting");
    await send(id, type);
    const after = await row(id);
    expect(after.state).toBe("scheduled");
    expect(near(after.next_fire_at)).toBe(true);
  });

  it("drops a pause sent to a waiting instance (Appendix 12): it stays waiting, nothing left to take", async () => {
    const id = await instanceIn("waiting");
    await send(id, "pause");
    expect((await row(id)).state).toBe("waiting");
    const { rows } = await db.sql.query("SELECT delivered FROM signals WHERE instance_id = $1", [id]);
    expect(rows).toEqual([{ delivered: true }]);
  });

  it.each<[SignalType, boolean]>([["resume", true], ["cancel", true], ["pause", false], ["update_context", false], [{ custom: "x" }, false]])(
    "a paused instance after %j: woken %s",
    async (type, woken) => {
      const id = await instanceIn("paused");
      await send(id, type);
      const after = await row(id);
      if (woken) {
        expect(after.state).toBe("scheduled");
        expect(near(after.next_fire_at)).toBe(true);
      } else {
        expect(after).toMatchObject({ state: "paused", next_fire_at: null });
      }
      expect(await signalCount(id)).toBe(1);
    },
  );

  it.each(ALL)("a running instance is left to its engine after %j", async (type) => {
    const id = await instanceIn("running");
    const before = await row(id);
    await send(id, type);
    expect(await row(id)).toEqual(before);
  });
});

describe("pendingSignals", () => {
  it("returns the signals oldest first, even many within one millisecond, without consuming them", async () => {
    const id = await instanceIn("running");
    const types: SignalType[] = ["pause", "resume", "update_context", { custom: "a" }, "cancel"];
    const sent: string[] = [];
    for (let round = 0; round < 5; round++) {
      for (const [index, type] of types.entries()) sent.push((await send(id, type, { round, index })).id);
    }
    const read = await pendingSignals(db.sql, asTenantId(TENANT), id);
    expect(read.map((signal) => signal.id)).toEqual(sent);
    expect(read[7]).toEqual({ id: sent[7], type: "update_context", payload: { round: 1, index: 2 }, createdAt: expect.any(Date) });
    const times = read.map((signal) => signal.createdAt.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(times).size).toBe(times.length);

    // Still queued; the run leaves out what it has applied and not yet committed.
    expect((await pendingSignals(db.sql, asTenantId(TENANT), id)).map((signal) => signal.id)).toEqual(sent);
    expect((await pendingSignals(db.sql, asTenantId(TENANT), id, undefined, sent.slice(0, 20))).map((signal) => signal.id)).toEqual(sent.slice(20));
    const { rows } = await db.sql.query("SELECT DISTINCT delivered, delivered_at IS NOT NULL AS stamped FROM signals WHERE instance_id = $1", [id]);
    expect(rows).toEqual([{ delivered: false, stamped: false }]);
  });

  it("gives a null payload for a signal sent without one", async () => {
    const id = await instanceIn("running");
    await send(id, "pause", null);
    expect((await pendingSignals(db.sql, asTenantId(TENANT), id))[0]!.payload).toBeNull();
  });

  it("reads nothing of another tenant's instance", async () => {
    const foreign = await instanceIn("running", "globex");
    await send(foreign, "cancel", null, "globex");
    expect(await pendingSignals(db.sql, asTenantId(TENANT), foreign)).toEqual([]);
    expect(await pendingSignals(db.sql, asTenantId("globex"), foreign)).toHaveLength(1);
  });

  it("with a lease epoch, reads only while the instance runs under that lease", async () => {
    const id = await instanceIn("running");
    await send(id, "pause");
    expect(await pendingSignals(db.sql, asTenantId(TENANT), id, 2)).toEqual([]);
    await db.sql.query("UPDATE task_instances SET state = 'scheduled', next_fire_at = now() WHERE id = $1", [id]);
    expect(await pendingSignals(db.sql, asTenantId(TENANT), id, 3)).toEqual([]);
    await db.sql.query("UPDATE task_instances SET state = 'running' WHERE id = $1", [id]);
    expect(await pendingSignals(db.sql, asTenantId(TENANT), id, 3)).toHaveLength(1);
  });
});

describe("consumed by the run's commit", () => {
  const delivered = async (id: string) =>
    (await db.sql.query("SELECT id FROM signals WHERE instance_id = $1 AND delivered AND delivered_at IS NOT NULL ORDER BY created_at, id", [id])).rows.map((r) => r.id);
  const commit = (id: string, leaseEpoch: number, signalsApplied: string[]) =>
    commitProgress(db.storage.backends.primary.pool, {
      instanceId: id, tenantId: asTenantId(TENANT), leaseEpoch, state: "scheduled", cursor: {}, nextFireAt: new Date(), signalsApplied,
    });

  it("marks exactly the applied signals delivered, with the write of what they did", async () => {
    const id = await instanceIn("running");
    const first = await send(id, { custom: "one" });
    const second = await send(id, { custom: "two" });
    expect(await commit(id, 3, [first.id])).toBe(true);
    expect(await delivered(id)).toEqual([first.id]);
    expect((await pendingSignals(db.sql, asTenantId(TENANT), id)).map((signal) => signal.id)).toEqual([second.id]);
  });

  it("leaves them queued for the next holder when the run lost its lease before committing", async () => {
    const id = await instanceIn("running");
    const signal = await send(id, "update_context", { data: { plan: "pro" } });
    // The run read (and applied) it, then another engine took the instance over at epoch 4.
    expect(await pendingSignals(db.sql, asTenantId(TENANT), id, 3)).toHaveLength(1);
    await db.sql.query("UPDATE task_instances SET lease_epoch = 4, lease_owner = 'engine-b' WHERE id = $1", [id]);
    expect(await commit(id, 3, [signal.id])).toBe(false);
    expect(await delivered(id)).toEqual([]);
    expect((await pendingSignals(db.sql, asTenantId(TENANT), id, 4)).map((pending) => pending.id)).toEqual([signal.id]);
    // Another instance's signal named in a commit is never touched.
    const neighbour = await instanceIn("running");
    const theirs = await send(neighbour, "pause");
    expect(await commit(id, 4, [theirs.id])).toBe(true);
    expect(await delivered(neighbour)).toEqual([]);
  });
});

describe("the race with an engine finishing the instance", () => {
  /**
   * The engine's end of a run in miniature: the state change under the row lock, then, in a later
   * statement of the same transaction, what it still finds queued (commitProgressBatch consumes
   * those; engine/exec/tree/coordination.int.test.ts races the real one).
   */
  async function complete(client: pg.PoolClient, id: string, hold = 0): Promise<number> {
    await client.query("BEGIN");
    await client.query("UPDATE task_instances SET state = 'completed', completed_at = now(), lease_owner = NULL WHERE id = $1", [id]);
    if (hold > 0) await sleep(hold);
    const { rows } = await client.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1 AND NOT delivered", [id]);
    await client.query("COMMIT");
    return rows[0].n;
  }

  async function trySend(id: string): Promise<"accepted" | "refused"> {
    try {
      await enqueueSignalIfActive(other, asTenantId(TENANT), id, { type: "cancel", payload: null });
      return "accepted";
    } catch (error) {
      expect(error).toMatchObject({ code: "invalid_argument", message: `cannot send signal to instance ${id}: target is in a terminal state` });
      return "refused";
    }
  }

  it("a send that meets a completion in flight waits for it, then refuses", async () => {
    const id = await instanceIn("running");
    const client = await db.sql.connect();
    try {
      const completing = complete(client, id, 200);
      await sleep(50); // the completion now holds the row lock
      expect(await trySend(id)).toBe("refused");
      expect(await completing).toBe(0);
    } finally {
      client.release();
    }
    expect(await signalCount(id)).toBe(0);
  });

  it("never accepts a signal the finishing engine cannot see: 100 rounds of both at once", async () => {
    const outcomes = { accepted: 0, refused: 0 };
    for (let round = 0; round < 100; round++) {
      const id = await instanceIn("running");
      const client = await db.sql.connect();
      try {
        // Staggered by a jitter either way, so both orders happen.
        const jitter = (round % 7) * 0.5;
        const [seenByEngine, outcome] = await Promise.all([
          sleep(round % 2 === 0 ? jitter : 0).then(() => complete(client, id)),
          sleep(round % 2 === 1 ? jitter : 0).then(() => trySend(id)),
        ]);
        outcomes[outcome]++;
        // Accepted: committed before the engine took the lock, so the engine found it queued.
        // Refused: nothing was stored.
        expect({ round, seenByEngine, stored: await signalCount(id) }).toEqual(
          outcome === "accepted" ? { round, seenByEngine: 1, stored: 1 } : { round, seenByEngine: 0, stored: 0 },
        );
      } finally {
        client.release();
      }
    }
    expect(outcomes.accepted + outcomes.refused).toBe(100);
  });
});
