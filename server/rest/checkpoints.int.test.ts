// Checkpoints (wire-format P) over the dispatcher and a real PostgreSQL: save in any state, list
// newest first (ties by id), the latest and its 404, prune to the newest `keep`, the size cap and
// the shape errors, and another tenant's instance answering the missing instance's 404.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createInstance, createSequence, expectSameReply, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let instance: string;
beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  instance = await createInstance(db, acme, await createSequence(db, acme));
});
afterAll(() => db.drop());

const path = (id: string, rest = "") => `/instances/${id}/checkpoints${rest}`;
const save = (id: string, data: unknown, key = acme.key) => call(db, "POST", path(id), { key, body: { checkpoint_data: data } });

describe("checkpoints", () => {
  it("the latest of none is P's 404", async () => {
    const reply = await call(db, "GET", path(instance, "/latest"), { key: acme.key });
    expect({ status: reply.status, body: reply.json() }).toEqual({ status: 404, body: { error: `not found: checkpoint for instance ${instance}` } });
    expect((await call(db, "GET", path(instance), { key: acme.key })).json()).toEqual([]);
  });

  it("saves any JSON in any state, lists newest first and reads the latest", async () => {
    const ids: string[] = [];
    for (const data of [{ step: 1 }, [1, 2], null, "text"]) {
      const reply = await save(instance, data);
      expect(reply.status).toBe(201);
      ids.push((reply.json() as { id: string }).id);
    }
    await db.sql.query("UPDATE task_instances SET state = 'completed' WHERE id = $1", [instance]);
    const last = (await save(instance, { done: true }).then((r) => r.json())) as { id: string };
    const listed = (await call(db, "GET", path(instance), { key: acme.key })).json() as { id: string; checkpoint_data: unknown; instance_id: string; created_at: string }[];
    expect(listed.map((c) => c.id)).toEqual([last.id, ...ids.reverse()]);
    expect(listed[0]).toEqual({ id: last.id, instance_id: instance, checkpoint_data: { done: true }, created_at: expect.stringMatching(/Z$/) });
    expect((await call(db, "GET", path(instance, "/latest"), { key: acme.key })).json()).toMatchObject({ id: last.id });
  });

  it("prunes to the newest `keep`: count of what went, 0 when nothing does, keep 0 deletes all", async () => {
    const prune = async (keep: number) => (await call(db, "POST", path(instance, "/prune"), { key: acme.key, body: { keep } })).json();
    const before = (await call(db, "GET", path(instance), { key: acme.key })).json() as { id: string }[];
    expect(await prune(2)).toEqual({ count: before.length - 2 });
    expect(((await call(db, "GET", path(instance), { key: acme.key })).json() as { id: string }[]).map((c) => c.id)).toEqual(before.slice(0, 2).map((c) => c.id));
    expect(await prune(5)).toEqual({ count: 0 });
    expect(await prune(0)).toEqual({ count: 2 });
  });

  it("refuses a missing checkpoint_data or keep (422) and data over 256 KiB (413), storing nothing", async () => {
    expect((await call(db, "POST", path(instance), { key: acme.key, body: {} })).status).toBe(422);
    expect((await call(db, "POST", path(instance, "/prune"), { key: acme.key, body: {} })).status).toBe(422);
    const big = await save(instance, { blob: "x".repeat(256 * 1024) });
    expect({ status: big.status, body: big.json() }).toEqual({ status: 413, body: { error: "payload too large: checkpoint is 262155 bytes, exceeding the maximum of 262144 bytes" } });
    expect((await call(db, "GET", path(instance), { key: acme.key })).json()).toEqual([]);
  });

  it("another tenant's instance answers the missing instance's 404 on every route, and gets no checkpoint", async () => {
    const missing = randomUUID();
    const routes: [string, string, unknown][] = [
      ["POST", "", { checkpoint_data: 1 }], ["GET", "", undefined], ["GET", "/latest", undefined], ["POST", "/prune", { keep: 0 }],
    ];
    for (const [method, rest, body] of routes) {
      const nobody = await call(db, method, path(missing, rest), { key: globex.key, body });
      expect(nobody.json()).toEqual({ error: "not found: instance not found" });
      expectSameReply(await call(db, method, path(instance, rest), { key: globex.key, body }), nobody);
    }
    expect((await call(db, "GET", path(instance), { key: acme.key })).json()).toEqual([]);
  });
});
