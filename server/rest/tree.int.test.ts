// GET /instances/{id}/tree (wire-format E.13, the ExecutionNode shape): the tree of an instance
// whose cursor is written directly, and the 404s.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createInstance, createSequence, expectSameReply, operatorKey, sequenceJson, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let sequenceId: string;
beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  const step = (id: string) => ({ type: "step", id, handler: "noop" });
  const reply = await call(db, "POST", "/sequences", {
    key: acme.key,
    body: sequenceJson(acme.id, {
      blocks: [
        step("pre"),
        { type: "parallel", id: "par", branches: [[step("a1"), step("a2")], [step("b1")]] },
        { type: "try_catch", id: "tc", try_block: [step("t")], catch_block: [step("c")], finally_block: [step("f")] },
        step("post"),
      ],
    }),
  });
  expect(reply.status).toBe(201);
  sequenceId = (reply.json() as { id: string }).id;
});
afterAll(() => db.drop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function instanceWithCursor(cursor: unknown, state = "running") {
  const id = await createInstance(db, acme, sequenceId);
  await db.sql.query("UPDATE task_instances SET cursor = $2, state = $3 WHERE id = $1", [id, JSON.stringify(cursor), state]);
  return id;
}

describe("GET /instances/{id}/tree", () => {
  it("200 with one node per block, parents first, branch indexes, states and times from the cursor", async () => {
    const id = await instanceWithCursor({
      v: 2,
      nodes: {
        pre: { status: "completed", attempt: 0, reachedAt: "2026-03-01T10:00:00.000Z", startedAt: "2026-03-01T10:00:00.010Z" },
        par: { status: "completed" },
        a1: { status: "completed", reachedAt: "2026-03-01T10:00:01.000Z" },
        a2: { status: "failed", reachedAt: "2026-03-01T10:00:02.000Z", failure: { message: "boom", retryable: false } },
        b1: { status: "skipped" },
        tc: { status: "active", phase: "catch", tryFailed: true },
        t: { status: "failed", reachedAt: "2026-03-01T10:00:03.000Z" },
        c: { status: "active", attempt: 0, reachedAt: "2026-03-01T10:00:04.000Z", taskId: randomUUID() },
      },
    });
    const reply = await call(db, "GET", `/instances/${id}/tree`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect(reply.contentType).toBe("application/json");
    const nodes = reply.json() as Array<Record<string, unknown>>;
    const nodeId = (blockId: string) => nodes.find((n) => n.block_id === blockId)!.id;
    const node = (block_id: string, block_type: string, parent: string | null, branch_index: number | null, state: string, started_at: string | null = null) => ({
      id: expect.stringMatching(UUID),
      instance_id: id,
      block_id,
      parent_id: parent === null ? null : nodeId(parent),
      block_type,
      branch_index,
      state,
      started_at,
      completed_at: null,
    });
    expect(nodes).toEqual([
      node("pre", "step", null, null, "completed", "2026-03-01T10:00:00.000Z"),
      node("par", "parallel", null, null, "completed"),
      node("a1", "step", "par", 0, "completed", "2026-03-01T10:00:01.000Z"),
      node("a2", "step", "par", 0, "failed", "2026-03-01T10:00:02.000Z"),
      node("b1", "step", "par", 1, "skipped"),
      node("tc", "try_catch", null, null, "running"),
      node("t", "step", "tc", 0, "failed", "2026-03-01T10:00:03.000Z"),
      node("c", "step", "tc", 1, "waiting", "2026-03-01T10:00:04.000Z"),
      node("f", "step", "tc", 2, "pending"),
      node("post", "step", null, null, "pending"),
    ]);
    expect(new Set(nodes.map((n) => n.id)).size).toBe(nodes.length);

    // The same ids on every read; a waiting instance shows its active blocks waiting.
    await db.sql.query("UPDATE task_instances SET state = 'waiting' WHERE id = $1", [id]);
    const again = (await call(db, "GET", `/instances/${id}/tree`, { key: acme.key })).json() as typeof nodes;
    expect(again.map((n) => n.id)).toEqual(nodes.map((n) => n.id));
    expect(again.find((n) => n.block_id === "tc")!.state).toBe("waiting");
  });

  it("shows a new instance (no cursor yet) all pending, and reads a v1 cursor", async () => {
    const fresh = await createInstance(db, acme, sequenceId);
    const pending = (await call(db, "GET", `/instances/${fresh}/tree`, { key: acme.key })).json() as Array<{ state: string }>;
    expect(pending).toHaveLength(10);
    expect(pending.every((n) => n.state === "pending")).toBe(true);

    const flat = await instanceWithCursor({ v: 1, index: 1, attempt: 0, reachedAt: "2026-03-01T10:00:00Z", startedAt: null });
    const view = (await call(db, "GET", `/instances/${flat}/tree`, { key: acme.key })).json() as Array<{ block_id: string; state: string }>;
    expect(view.slice(0, 3).map((n) => [n.block_id, n.state])).toEqual([["pre", "completed"], ["par", "running"], ["a1", "pending"]]);
  });

  it("serves an operator key through the partition router", async () => {
    const id = await instanceWithCursor({ v: 2, nodes: { pre: { status: "completed" } } });
    const reply = await call(db, "GET", `/instances/${id}/tree`, { key: await operatorKey(db) });
    expect(reply.status).toBe(200);
    expect((reply.json() as Array<{ block_id: string; state: string }>)[0]).toMatchObject({ block_id: "pre", state: "completed" });
  });

  it("200 with no nodes when the stored definition has no readable blocks", async () => {
    const id = await instanceWithCursor(null);
    const broken = randomUUID();
    await db.sql.query(
      `INSERT INTO sequences (id, tenant_id, namespace, name, version, definition, created_at)
       SELECT $1, tenant_id, namespace, name || '-broken', version, '{"blocks": "nope"}'::jsonb, now() FROM sequences WHERE id = $2`,
      [broken, sequenceId],
    );
    await db.sql.query("UPDATE task_instances SET sequence_id = $2 WHERE id = $1", [id, broken]);
    const reply = await call(db, "GET", `/instances/${id}/tree`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([]);
  });

  it("404 for an unknown id; another tenant's instance answers byte for byte the same", async () => {
    const missing = await call(db, "GET", `/instances/${randomUUID()}/tree`, { key: acme.key });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: instance not found" });

    const theirs = await createInstance(db, globex, await createSequence(db, globex));
    expectSameReply(await call(db, "GET", `/instances/${theirs}/tree`, { key: acme.key }), missing);
    expectSameReply(await call(db, "GET", `/instances/${theirs}/tree`, { key: acme.key, headers: { "x-tenant-id": globex.id } }), missing);
    expect((await call(db, "GET", `/instances/${theirs}/tree`, { key: globex.key })).status).toBe(200);
  });

  it("400 for an id that is not a UUID", async () => {
    expect((await call(db, "GET", "/instances/not-a-uuid/tree", { key: acme.key })).status).toBe(400);
  });
});
