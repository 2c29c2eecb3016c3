// POST /sequences and GET /sequences/{id} (wire-format E.3, E.4, A.1, A.14, Appendix 3 and 4).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, expectSameReply, operatorKey, sequenceJson, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
});
afterAll(() => db.drop());

const PLAIN = "text/plain; charset=utf-8";
const post = (body: unknown, key = acme.key) => call(db, "POST", "/sequences", { key, body });

describe("POST /sequences", () => {
  it("201 with just the id when there is nothing to warn about", async () => {
    const sequence = sequenceJson(acme.id);
    const reply = await post(sequence);
    expect(reply.status).toBe(201);
    expect(reply.contentType).toBe("application/json");
    expect(reply.json()).toEqual({ id: sequence.id });
    const { rows } = await db.sql.query("SELECT tenant_id, namespace, name, version FROM sequences WHERE id = $1", [sequence.id]);
    expect(rows).toEqual([{ tenant_id: acme.id, namespace: "default", name: sequence.name, version: 1 }]);
  });

  it("201 with warnings for a handler that is not built in (an external worker's)", async () => {
    const sequence = sequenceJson(acme.id, { blocks: [{ type: "step", id: "ship", handler: "ship_parcel" }] });
    const reply = await post(sequence);
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({
      id: sequence.id,
      warnings: ['block `ship`: handler "ship_parcel" is not built in; it will run as an external worker task'],
    });
  });

  it("409 when the id is reused, changing nothing", async () => {
    const sequence = sequenceJson(acme.id);
    expect((await post(sequence)).status).toBe(201);
    const again = await post({ ...sequence, name: "renamed" });
    expect(again.status).toBe(409);
    expect(again.json()).toEqual({ error: "already exists: sequence already exists" });
    const { rows } = await db.sql.query("SELECT name FROM sequences WHERE id = $1", [sequence.id]);
    expect(rows).toEqual([{ name: sequence.name }]);
  });

  it("201, not 409, for an id another tenant already uses: an id says nothing across tenants", async () => {
    const theirs = sequenceJson(globex.id);
    expect((await post(theirs, globex.key)).status).toBe(201);
    const mine = { ...sequenceJson(acme.id), id: theirs.id };
    const reply = await post(mine);
    expect(reply.status).toBe(201);
    const { rows } = await db.sql.query("SELECT tenant_id FROM sequences WHERE id = $1 ORDER BY tenant_id", [theirs.id]);
    expect(rows.map((r) => r.tenant_id).sort()).toEqual([acme.id, globex.id].sort());
    // and each tenant reads its own
    const read = await call(db, "GET", `/sequences/${theirs.id}`, { key: acme.key });
    expect(read.json()).toMatchObject({ tenant_id: acme.id, name: mine.name });
  });

  it("the exact 400 JSON for loop.max_iterations 0 (Appendix 4)", async () => {
    const reply = await post(sequenceJson(acme.id, {
      blocks: [{ type: "loop", id: "again", condition: "true", max_iterations: 0, body: [{ type: "step", id: "s", handler: "noop" }] }],
    }));
    expect(reply.status).toBe(400);
    expect(reply.contentType).toBe("application/json");
    expect(reply.text).toBe('{"error":"invalid argument: block `again`: loop max_iterations must be > 0"}');
  });

  it("400 JSON for the other create-time rules, e.g. no blocks", async () => {
    const reply = await post(sequenceJson(acme.id, { blocks: [] }));
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "invalid argument: sequence must have at least one block" });
  });

  it("422 in plain text for shape errors: missing field, wrong type, unknown block type, blank tenant_id", async () => {
    const { created_at: _, ...withoutCreatedAt } = sequenceJson(acme.id);
    const cases: [unknown, RegExp][] = [
      [withoutCreatedAt, /created_at/],
      [sequenceJson(acme.id, { version: "1" }), /version/],
      [sequenceJson(acme.id, { id: "not-a-uuid" }), /id/],
      [sequenceJson(acme.id, { blocks: [{ type: "teleport", id: "x" }] }), /unknown block type "teleport"/],
      [sequenceJson("  "), /tenant_id must not be blank/],
      [[1, 2], /expected object/],
    ];
    for (const [body, message] of cases) {
      const reply = await post(body);
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.contentType).toBe(PLAIN);
      expect(reply.text).toMatch(/^Failed to deserialize the JSON body into the target type: /);
      expect(reply.text).toMatch(message);
    }
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM sequences WHERE name = 'renamed'");
    expect(rows[0].n).toBe(0);
  });

  it("404 for a tenant_id naming another tenant, exactly as for one that does not exist", async () => {
    const attempt = sequenceJson(globex.id);
    const foreign = await post(attempt);
    const missing = await post(sequenceJson("no-such-tenant"));
    expect(foreign.status).toBe(404);
    expect(foreign.json()).toEqual({ error: "not found: tenant not found" });
    expectSameReply(foreign, missing);
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM sequences WHERE id = $1", [attempt.id]);
    expect(rows[0].n).toBe(0);
  });
});

describe("GET /sequences/{id}", () => {
  it("200 with the A.1 shape: canonical form, defaults filled, created_at in UTC", async () => {
    const sequence = sequenceJson(acme.id, {
      created_at: "2026-03-04T05:06:07.890+02:00",
      blocks: [{ type: "step", id: "wait", handler: "sleep", retry: { max_attempts: 3, initial_backoff: 1.5, max_backoff: 2000 }, surprise: 1 }],
      ignored_field: true,
    });
    expect((await post(sequence)).status).toBe(201);
    const reply = await call(db, "GET", `/sequences/${sequence.id}`, { key: acme.key });
    expect(reply.status).toBe(200);
    const body = reply.json() as Record<string, unknown> & { blocks: Record<string, unknown>[] };
    expect(body).toMatchObject({
      id: sequence.id,
      tenant_id: acme.id,
      namespace: "default",
      name: sequence.name,
      version: 1,
      deprecated: false,
      status: "production",
      created_at: "2026-03-04T03:06:07.890Z",
    });
    expect(body).not.toHaveProperty("ignored_field");
    expect(body.blocks[0]).toMatchObject({
      type: "step", id: "wait", handler: "sleep", params: null, delay: null, cancellable: true,
      retry: { max_attempts: 3, initial_backoff: 1500, max_backoff: 2000, backoff_multiplier: 2 },
    });
    expect(body.blocks[0]).not.toHaveProperty("surprise");
  });

  it("accepts an upper-case id and answers with the stored, lower-case one", async () => {
    const sequence = sequenceJson(acme.id, { id: randomUUID().toUpperCase() });
    expect((await post(sequence)).json()).toEqual({ id: sequence.id.toLowerCase() });
    const reply = await call(db, "GET", `/sequences/${sequence.id}`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect((reply.json() as { id: string }).id).toBe(sequence.id.toLowerCase());
  });

  it("404 for an unknown id and, byte for byte the same, for another tenant's sequence", async () => {
    const theirs = sequenceJson(globex.id);
    expect((await post(theirs, globex.key)).status).toBe(201);
    const missing = await call(db, "GET", `/sequences/${randomUUID()}`, { key: acme.key });
    const foreign = await call(db, "GET", `/sequences/${theirs.id}`, { key: acme.key });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: sequence not found" });
    expectSameReply(foreign, missing);
    // Naming the owner does not help either.
    expectSameReply(await call(db, "GET", `/sequences/${theirs.id}?tenant_id=${globex.id}`, { key: acme.key }), missing);
    expectSameReply(await call(db, "GET", `/sequences/${theirs.id}`, { key: acme.key, headers: { "x-tenant-id": globex.id } }), missing);
    // The owner still reads it.
    expect((await call(db, "GET", `/sequences/${theirs.id}`, { key: globex.key })).status).toBe(200);
  });
});

describe("operator keys", () => {
  it("create a sequence for the existing tenant the body names, and 404 for one that does not exist", async () => {
    const key = await operatorKey(db);
    const sequence = sequenceJson(globex.id);
    expect((await post(sequence, key)).status).toBe(201);
    const { rows } = await db.sql.query("SELECT tenant_id FROM sequences WHERE id = $1", [sequence.id]);
    expect(rows).toEqual([{ tenant_id: globex.id }]);

    const missing = await post(sequenceJson("no-such-tenant"), key);
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: tenant not found" });
    // X-Tenant-Id wins, and a body naming another tenant is refused like a missing one.
    const mismatch = await call(db, "POST", "/sequences", { key, body: sequenceJson(acme.id), headers: { "x-tenant-id": globex.id } });
    expectSameReply(mismatch, missing);
  });

  it("read a sequence by id without naming its tenant, and not when naming another", async () => {
    const key = await operatorKey(db);
    const sequence = sequenceJson(acme.id);
    expect((await post(sequence)).status).toBe(201);
    const reply = await call(db, "GET", `/sequences/${sequence.id}`, { key });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({ id: sequence.id, tenant_id: acme.id });

    const missing = await call(db, "GET", `/sequences/${randomUUID()}`, { key });
    expect(missing.json()).toEqual({ error: "not found: sequence not found" });
    expectSameReply(await call(db, "GET", `/sequences/${sequence.id}`, { key, headers: { "x-tenant-id": globex.id } }), missing);
    expectSameReply(await call(db, "GET", `/sequences/${sequence.id}`, { key, headers: { "x-tenant-id": "no-such-tenant" } }), missing);
  });
});
