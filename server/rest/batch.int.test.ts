// POST /instances/batch (wire-format E.6): all or nothing, whatever the reason for refusing.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createSequence, expectSameReply, operatorKey, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let acmeSequence: string;
let globexSequence: string;
beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  acmeSequence = await createSequence(db, acme);
  globexSequence = await createSequence(db, globex);
});
afterAll(() => db.drop());

// Each test starts from no instances, so "nothing written" is a count of zero.
beforeEach(async () => {
  await db.sql.query("DELETE FROM task_instances");
});

const item = (extra: Record<string, unknown> = {}) => ({ sequence_id: acmeSequence, tenant_id: acme.id, namespace: "default", ...extra });
const batch = (instances: unknown[], options: { key?: string; headers?: Record<string, string> } = {}) =>
  call(db, "POST", "/instances/batch", { key: acme.key, body: { instances }, ...options });
const written = async () => (await db.sql.query("SELECT count(*)::int AS n FROM task_instances")).rows[0].n as number;

describe("POST /instances/batch", () => {
  it("200 {count: 0} for an empty list", async () => {
    const reply = await batch([]);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('{"count":0}');
  });

  it("201 {count: n}, creating every instance with its own fields", async () => {
    const reply = await batch([
      item(),
      item({ namespace: "billing", priority: "High", metadata: { n: 2 } }),
      item({ next_fire_at: "2031-05-06T07:08:09Z", context: { data: { x: 1 } } }),
    ]);
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ count: 3 });
    const { rows } = await db.sql.query(
      `SELECT namespace, priority, metadata, next_fire_at, context -> 'data' AS data, state, tenant_id
         FROM task_instances ORDER BY namespace, next_fire_at`,
    );
    expect(rows).toEqual([
      { namespace: "billing", priority: 2, metadata: { n: 2 }, next_fire_at: expect.any(Date), data: null, state: "scheduled", tenant_id: acme.id },
      { namespace: "default", priority: 1, metadata: null, next_fire_at: expect.any(Date), data: null, state: "scheduled", tenant_id: acme.id },
      { namespace: "default", priority: 1, metadata: null, next_fire_at: new Date("2031-05-06T07:08:09Z"), data: { x: 1 }, state: "scheduled", tenant_id: acme.id },
    ]);
  });

  it("counts only new instances: idempotency keys already used, or repeated in the batch, are skipped", async () => {
    const used = `k-${randomUUID()}`;
    expect((await call(db, "POST", "/instances", { key: acme.key, body: item({ idempotency_key: used }) })).status).toBe(201);
    const repeated = `k-${randomUUID()}`;
    const reply = await batch([item({ idempotency_key: used }), item({ idempotency_key: repeated }), item({ idempotency_key: repeated }), item()]);
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ count: 2 });
    expect(await written()).toBe(3);
  });

  it("400 JSON for more than 10 000 items, writing nothing", async () => {
    const reply = await batch(Array.from({ length: 10_001 }, () => item()));
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "invalid argument: batch has 10001 instances, exceeding the maximum of 10000" });
    expect(await written()).toBe(0);
  });

  it("accepts exactly 10 000 items", async () => {
    const reply = await batch(Array.from({ length: 10_000 }, () => item()));
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({ count: 10_000 });
    expect(await written()).toBe(10_000);
  });

  it("422 in plain text for any malformed item, rejecting the whole batch", async () => {
    const { namespace: _, ...withoutNamespace } = item();
    for (const bad of [withoutNamespace, item({ priority: "Urgent" }), item({ tenant_id: " " }), "not an object"]) {
      const reply = await batch([item(), item(), bad]);
      expect(reply.status, JSON.stringify(bad)).toBe(422);
      expect(reply.contentType).toBe("text/plain; charset=utf-8");
      expect(reply.text).toMatch(/instances\[2\]/);
    }
    const notAList = await call(db, "POST", "/instances/batch", { key: acme.key, body: { instances: item() } });
    expect(notAList.status).toBe(422);
    expect(await written()).toBe(0);
  });

  it("400 JSON naming the item with a blank namespace, writing nothing", async () => {
    const reply = await batch([item(), item({ namespace: "" })]);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "invalid argument: instances[1]: namespace must not be blank" });
    expect(await written()).toBe(0);
  });

  it("404 for an unknown sequence and, the same, for another tenant's (Bulkhead: never 403), writing nothing", async () => {
    const missing = await batch([item(), item({ sequence_id: randomUUID() })]);
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: sequence not found" });
    expectSameReply(await batch([item(), item({ sequence_id: globexSequence })]), missing);
    // An item naming another tenant reads the same.
    expectSameReply(await batch([item(), item({ sequence_id: globexSequence, tenant_id: globex.id })]), missing);
    expectSameReply(await batch([item()], { headers: { "x-tenant-id": globex.id } }), missing);
    expect(await written()).toBe(0);
  });

  it("413 JSON when one item's context is over 256 KiB, writing nothing", async () => {
    const reply = await batch([item(), item({ context: { data: "q".repeat(256 * 1024) } })]);
    expect(reply.status).toBe(413);
    expect((reply.json() as { error: string }).error).toMatch(/^payload too large: instances\[1\]: context is \d+ bytes/);
    expect(await written()).toBe(0);
  });

  it("is one statement: an item PostgreSQL refuses fails the whole batch", async () => {
    const reply = await batch([item(), item(), item({ idempotency_key: "nul\u0000key" })]);
    expect(reply.status).toBe(400);
    expect(await written()).toBe(0);
  });

  it("for an operator key, creates for the tenant the items name", async () => {
    const key = await operatorKey(db);
    const reply = await batch([{ sequence_id: globexSequence, tenant_id: globex.id, namespace: "ops" }], { key });
    expect(reply.status).toBe(201);
    const { rows } = await db.sql.query("SELECT tenant_id FROM task_instances");
    expect(rows).toEqual([{ tenant_id: globex.id }]);
    // Items of two tenants are not one tenant's batch.
    const mixed = await batch([{ sequence_id: globexSequence, tenant_id: globex.id, namespace: "ops" }, item()], { key });
    expect(mixed.status).toBe(404);
    expect(await written()).toBe(1);
  });
});
