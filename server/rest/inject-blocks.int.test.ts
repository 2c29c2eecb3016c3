// POST /instances/{id}/inject-blocks (wire-format V): blocks added to one running instance are run
// by the engine after what it has (or at `position`, clamped), its sequence unchanged; V's 400s in
// its words, a finished instance refused, and another tenant's instance answered as a missing one.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Scheduler } from "../../engine/scheduler/scheduler.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { call, createInstance, createSequenceOf, expectSameReply, instanceState, tenantWithKey, type Reply } from "./testing.ts";

let db: TestDatabase;
let scheduler: Scheduler;
let acme: { id: string; key: string };
let globex: { id: string; key: string };

const errorOf = (reply: Reply) => (reply.json() as { error: string }).error;
const log = (id: string, message: string) => ({ type: "step", id, handler: "log", params: { message } });

const inject = (tenant: { key: string }, id: string, body: unknown) => call(db, "POST", `/instances/${id}/inject-blocks`, { key: tenant.key, body });
const stateOf = (id: string) => instanceState(db, id);
const sequenceOf = (tenant: { id: string; key: string }, blocks: unknown[]) => createSequenceOf(db, tenant, blocks);
const outputsOf = async (id: string) =>
  (await db.sql.query("SELECT block_id, output FROM block_outputs WHERE instance_id = $1 AND output_ref IS NULL ORDER BY created_at, id", [id])).rows;

beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  scheduler = makeScheduler(db);
  await scheduler.start();
});
afterAll(async () => {
  await scheduler.stop();
  await db.drop();
});

describe("POST /instances/{id}/inject-blocks", () => {
  it("adds blocks to a running instance, which runs them after its own; the sequence keeps its blocks", async () => {
    const sequence = await sequenceOf(acme, [{ type: "step", id: "nap", handler: "sleep", params: { duration_ms: 700 } }]);
    const id = await createInstance(db, acme, sequence);
    await expect.poll(() => stateOf(id), { timeout: 5_000 }).toBe("running");
    const reply = await inject(acme, id, { blocks: [log("after", "one"), log("last", "two")], position: 99 });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ injected_block_ids: ["after", "last"], position: 1, total_injected: 2 });
    await expect.poll(() => stateOf(id), { timeout: 10_000 }).toBe("completed");
    expect((await outputsOf(id)).map((o) => o.block_id)).toEqual(["nap", "after", "last"]);
    const { rows } = await db.sql.query("SELECT definition->'blocks' AS blocks FROM sequences WHERE id = $1", [sequence]);
    expect(rows[0].blocks.map((b: { id: string }) => b.id)).toEqual(["nap"]);
  });

  it("refuses what V refuses, in its words, and a block id the instance already has", async () => {
    const sequence = await sequenceOf(acme, [{ type: "step", id: "nap", handler: "sleep", params: { duration_ms: 5_000 } }]);
    const id = await createInstance(db, acme, sequence);
    const cases: [unknown, string | RegExp][] = [
      [{ blocks: { type: "step" } }, "invalid argument: blocks must be a JSON array"],
      [{ blocks: [] }, "invalid argument: blocks array must not be empty"],
      [{ blocks: [log("ok", "x"), { type: "teleport", id: "t" }] }, "invalid argument: blocks[1] is not a valid BlockDefinition"],
      [{ blocks: [log("nap", "x")] }, /^invalid argument: .*nap/],
    ];
    for (const [body, error] of cases) {
      const reply = await inject(acme, id, body);
      expect(reply.status).toBe(400);
      expect(errorOf(reply)).toMatch(error);
    }
    expect((await inject(acme, id, {})).status).toBe(422);
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1", [id]);
    expect(rows[0].n).toBe(0);
    await call(db, "POST", `/instances/${id}/signals`, { key: acme.key, body: { signal_type: "cancel" } });
    await expect.poll(() => stateOf(id), { timeout: 10_000 }).toBe("cancelled");
    expect(errorOf(await inject(acme, id, { blocks: [log("late", "x")] }))).toMatch(/target is in a terminal state$/);
  });

  it("answers another tenant's instance exactly as a missing one", async () => {
    const theirs = await createInstance(db, globex, await sequenceOf(globex, [log("a", "x")]));
    const missing = await inject(acme, randomUUID(), { blocks: [log("b", "x")] });
    expect(missing.json()).toEqual({ error: "not found: instance not found" });
    expectSameReply(await inject(acme, theirs, { blocks: [log("b", "x")] }), missing);
  });
});
