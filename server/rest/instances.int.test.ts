// POST /instances, GET /instances/{id}, GET /instances, GET /instances/{id}/outputs
// (wire-format E.5, E.7-E.9, the <Instance> and <BlockOutput> shapes, Appendix 15 and 16).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createInstance, createSequence, expectSameReply, operatorKey, sequenceJson, tenantWithKey } from "./testing.ts";

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

const PLAIN = "text/plain; charset=utf-8";
const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const request = (extra: Record<string, unknown> = {}) => ({ sequence_id: acmeSequence, tenant_id: acme.id, namespace: "default", ...extra });
const post = (body: unknown, options: { key?: string; headers?: Record<string, string> } = {}) =>
  call(db, "POST", "/instances", { key: acme.key, body, ...options });
const instanceCount = async (tenantId: string) =>
  (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1", [tenantId])).rows[0].n as number;

describe("POST /instances", () => {
  it("201 with the id of a scheduled instance, due now when no next_fire_at is given", async () => {
    const reply = await post(request());
    expect(reply.status).toBe(201);
    const body = reply.json() as { id: string };
    expect(Object.keys(body)).toEqual(["id"]);
    const { rows } = await db.sql.query(
      "SELECT tenant_id, state, priority, next_fire_at = created_at AS due_at_creation FROM task_instances WHERE id = $1",
      [body.id],
    );
    expect(rows).toEqual([{ tenant_id: acme.id, state: "scheduled", priority: 1, due_at_creation: true }]);
  });

  it("reads back with the wire defaults (Appendix 15): null data, config and metadata, Normal, UTC", async () => {
    const id = await createInstance(db, acme, acmeSequence);
    const reply = await call(db, "GET", `/instances/${id}`, { key: acme.key });
    expect(reply.status).toBe(200);
    const body = reply.json() as Record<string, string>;
    expect(body).toEqual({
      id,
      sequence_id: acmeSequence,
      tenant_id: acme.id,
      namespace: "default",
      state: "scheduled",
      next_fire_at: body.created_at,
      priority: "Normal",
      timezone: "UTC",
      metadata: null,
      context: {
        data: null,
        config: null,
        audit: [],
        runtime: {
          current_step: null, attempt: 0, started_at: null, current_step_started_at: null, resource_key: null,
          total_steps_executed: 0, dry_run: false, dry_run_auto_approve: false,
        },
      },
      created_at: expect.stringMatching(RFC3339_UTC),
      updated_at: expect.stringMatching(RFC3339_UTC),
    });
  });

  it("stores every field of the request and shows the optional ones once set", async () => {
    const reply = await post(request({
      context: { data: { name: "Ada" }, config: { tier: 1 }, audit: [{ timestamp: "2026-01-01T00:00:00Z", event: "imported" }], extra: 1 },
      priority: "Critical",
      timezone: "Europe/Berlin",
      metadata: { campaign: "spring" },
      next_fire_at: "2030-01-01T12:00:00+01:00",
      concurrency_key: "user-7",
      max_concurrency: 2,
      idempotency_key: `k-${randomUUID()}`,
      dry_run: true,
      budget: { max_steps: 10 },
    }));
    expect(reply.status).toBe(201);
    const { id } = reply.json() as { id: string };
    const body = (await call(db, "GET", `/instances/${id}`, { key: acme.key })).json() as Record<string, unknown>;
    expect(body).toMatchObject({
      priority: "Critical",
      timezone: "Europe/Berlin",
      metadata: { campaign: "spring" },
      next_fire_at: "2030-01-01T11:00:00.000Z",
      concurrency_key: "user-7",
      max_concurrency: 2,
      idempotency_key: expect.stringMatching(/^k-/),
      budget: { max_steps: 10 },
      context: {
        data: { name: "Ada" },
        config: { tier: 1 },
        audit: [{ timestamp: "2026-01-01T00:00:00Z", event: "imported", details: null }],
        runtime: { dry_run: true, dry_run_auto_approve: false },
      },
    });
    expect(body.context).not.toHaveProperty("extra");
    expect(body).not.toHaveProperty("session_id");
    expect(body).not.toHaveProperty("parent_instance_id");
    const { rows } = await db.sql.query("SELECT priority, dry_run FROM task_instances WHERE id = $1", [id]);
    expect(rows).toEqual([{ priority: 3, dry_run: true }]);
  });

  it("200 with deduplicated: true for a repeated idempotency key, also under concurrent repeats", async () => {
    const key = `order-${randomUUID()}`;
    const replies = await Promise.all(Array.from({ length: 6 }, () => post(request({ idempotency_key: key }))));
    const created = replies.filter((reply) => reply.status === 201);
    expect(created).toHaveLength(1);
    const { id } = created[0]!.json() as { id: string };
    for (const reply of replies.filter((r) => r.status !== 201)) {
      expect(reply.status).toBe(200);
      expect(reply.json()).toEqual({ id, deduplicated: true });
    }
    const { rows } = await db.sql.query("SELECT id FROM task_instances WHERE idempotency_key = $1", [key]);
    expect(rows).toEqual([{ id }]);

    // Keys are per tenant: the same key is free for another tenant.
    const theirs = await post({ sequence_id: globexSequence, tenant_id: globex.id, namespace: "default", idempotency_key: key }, { key: globex.key });
    expect(theirs.status).toBe(201);
  });

  it("404 for an unknown sequence and, byte for byte the same, for another tenant's", async () => {
    const before = await instanceCount(acme.id);
    const missing = await post(request({ sequence_id: randomUUID() }));
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: sequence not found" });
    expectSameReply(await post(request({ sequence_id: globexSequence })), missing);
    expect(await instanceCount(acme.id)).toBe(before);
    expect(await instanceCount(globex.id)).toBe(1);
  });

  it("404 like an unknown sequence when the request names another tenant (body, header or query)", async () => {
    const missing = await post(request({ sequence_id: randomUUID() }));
    const globexBefore = await instanceCount(globex.id);
    expectSameReply(await post({ sequence_id: globexSequence, tenant_id: globex.id, namespace: "default" }), missing);
    expectSameReply(await post(request(), { headers: { "x-tenant-id": globex.id } }), missing);
    expectSameReply(await call(db, "POST", `/instances?tenant_id=${globex.id}`, { key: acme.key, body: request() }), missing);
    expectSameReply(await post(request({ tenant_id: "no-such-tenant" })), missing);
    expect(await instanceCount(globex.id)).toBe(globexBefore);
  });

  it("400 JSON for a blank namespace or an unknown timezone", async () => {
    const blank = await post(request({ namespace: "  " }));
    expect(blank.status).toBe(400);
    expect(blank.text).toBe('{"error":"invalid argument: namespace must not be blank"}');
    const zone = await post(request({ timezone: "Mars/Olympus" }));
    expect(zone.status).toBe(400);
    expect(zone.json()).toEqual({ error: 'invalid argument: unknown timezone "Mars/Olympus"' });
  });

  it("422 in plain text for a blank tenant_id and for shape errors", async () => {
    const { sequence_id: _, ...withoutSequence } = request();
    const cases: [unknown, RegExp][] = [
      [request({ tenant_id: "" }), /tenant_id: tenant_id must not be blank/],
      [withoutSequence, /sequence_id/],
      [request({ sequence_id: "seq-1" }), /sequence_id/],
      [request({ priority: "Urgent" }), /priority/],
      [request({ priority: "normal" }), /priority/],
      [request({ context: "text" }), /context/],
      [request({ context: { audit: [{ event: "no timestamp" }] } }), /context\.audit\[0\]\.timestamp/],
      [request({ next_fire_at: "tomorrow" }), /next_fire_at/],
      [request({ max_concurrency: 0 }), /max_concurrency/],
      [request({ dry_run: "yes" }), /dry_run/],
    ];
    for (const [body, message] of cases) {
      const reply = await post(body);
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.contentType).toBe(PLAIN);
      expect(reply.text).toMatch(message);
    }
  });

  it("413 JSON for a context over 256 KiB, writing nothing; a context just under it is fine", async () => {
    const before = await instanceCount(acme.id);
    const reply = await post(request({ context: { data: { blob: "z".repeat(256 * 1024) } } }));
    expect(reply.status).toBe(413);
    expect(reply.contentType).toBe("application/json");
    expect(reply.json()).toEqual({ error: expect.stringMatching(/^payload too large: context is \d+ bytes, exceeding the maximum of 262144 bytes$/) });
    expect(await instanceCount(acme.id)).toBe(before);
    expect((await post(request({ context: { data: { blob: "z".repeat(255 * 1024) } } }))).status).toBe(201);
  });

  describe("input_schema", () => {
    let typed = "";
    beforeAll(async () => {
      const schema = {
        type: "object", required: ["email", "plan"], additionalProperties: false,
        properties: { email: { type: "string", minLength: 3 }, plan: { enum: ["free", "pro"] }, seats: { type: "integer", minimum: 1 } },
      };
      const reply = await call(db, "POST", "/sequences", { key: acme.key, body: sequenceJson(acme.id, { input_schema: schema }) });
      expect(reply.status).toBe(201);
      typed = (reply.json() as { id: string }).id;
    });

    it("creates an instance whose context.data matches", async () => {
      expect((await post(request({ sequence_id: typed, context: { data: { email: "a@b.c", plan: "pro", seats: 3 } } }))).status).toBe(201);
    });

    it("422 JSON naming the first mismatch, writing nothing", async () => {
      const before = await instanceCount(acme.id);
      const cases: [unknown, string][] = [
        [undefined, "/: must be an object"],
        [{ plan: "pro" }, "/email: is required"],
        [{ email: "a@b.c", plan: "gold" }, '/plan: must be one of "free", "pro"'],
        [{ email: "a@b.c", plan: "free", seats: 1.5 }, "/seats: must be an integer"],
        [{ email: "a@b.c", plan: "free", extra: true }, "/extra: is not allowed"],
      ];
      for (const [data, violation] of cases) {
        const reply = await post(request({ sequence_id: typed, context: data === undefined ? {} : { data } }));
        expect(reply.status, JSON.stringify(data)).toBe(422);
        expect(reply.json()).toEqual({ error: `unprocessable entity: context.data does not match the sequence's input_schema: ${violation}` });
      }
      expect(await instanceCount(acme.id)).toBe(before);
    });

    it("refuses a whole batch for one mismatching item, naming it", async () => {
      const before = await instanceCount(acme.id);
      const good = request({ sequence_id: typed, context: { data: { email: "a@b.c", plan: "pro" } } });
      const bad = request({ sequence_id: typed, context: { data: { email: "a@b.c" } } });
      const reply = await call(db, "POST", "/instances/batch", { key: acme.key, body: { instances: [good, bad] } });
      expect(reply.status).toBe(422);
      expect(reply.json()).toEqual({ error: "unprocessable entity: instances[1]: context.data does not match the sequence's input_schema: /plan: is required" });
      expect(await instanceCount(acme.id)).toBe(before);
    });

    it("another tenant's sequence with a schema is still just not found, whatever the data", async () => {
      const reply = await call(db, "POST", "/sequences", { key: globex.key, body: sequenceJson(globex.id, { input_schema: { type: "string" } }) });
      const theirs = (reply.json() as { id: string }).id;
      const foreign = await post(request({ sequence_id: theirs, context: { data: { not: "a string" } } }));
      const random = await post(request({ sequence_id: randomUUID(), context: { data: { not: "a string" } } }));
      expect(foreign.status).toBe(404);
      expectSameReply(foreign, random);
    });
  });

  it("400 JSON, not a 500, for text PostgreSQL cannot store", async () => {
    const reply = await post(request({ metadata: { note: "nul \u0000 here" } }));
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "invalid argument: metadata.note: contains a NUL (\\u0000) character" });
  });
});

describe("GET /instances/{id}", () => {
  it("404 for an unknown id and, byte for byte the same, for another tenant's instance however it is asked", async () => {
    const theirs = await createInstance(db, globex, globexSequence);
    const missing = await call(db, "GET", `/instances/${randomUUID()}`, { key: acme.key });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: instance not found" });
    expectSameReply(await call(db, "GET", `/instances/${theirs}`, { key: acme.key }), missing);
    expectSameReply(await call(db, "GET", `/instances/${theirs}?tenant_id=${globex.id}`, { key: acme.key }), missing);
    expectSameReply(await call(db, "GET", `/instances/${theirs}`, { key: acme.key, headers: { "x-tenant-id": globex.id } }), missing);
    expect((await call(db, "GET", `/instances/${theirs}`, { key: globex.key })).status).toBe(200);
  });
});

describe("GET /instances", () => {
  let tenant: { id: string; key: string };
  let sequenceA: string;
  let sequenceB: string;
  const ids: Record<string, string> = {};
  const list = async (query: string) => {
    const reply = await call(db, "GET", `/instances${query}`, { key: tenant.key });
    expect(reply.status, reply.text).toBe(200);
    return reply.json() as { items: { id: string }[]; has_more: boolean };
  };
  const idsOf = (page: { items: { id: string }[] }) => page.items.map((item) => item.id);

  beforeAll(async () => {
    tenant = await tenantWithKey(db);
    sequenceA = await createSequence(db, tenant);
    sequenceB = await createSequence(db, tenant);
    // Created one after the other: the list is newest first.
    ids.first = await createInstance(db, tenant, sequenceA, { metadata: { campaign: "spring", tier: 1 } });
    ids.second = await createInstance(db, tenant, sequenceB, { namespace: "billing", metadata: { campaign: "autumn" } });
    ids.third = await createInstance(db, tenant, sequenceA, { namespace: "billing", metadata: { campaign: "spring" } });
    await db.sql.query("UPDATE task_instances SET state = 'completed', next_fire_at = NULL WHERE id = $1", [ids.third]);
    await db.sql.query("UPDATE task_instances SET created_at = created_at - interval '1 second' * $2 WHERE id = $1", [ids.first, 2]);
    await db.sql.query("UPDATE task_instances SET created_at = created_at - interval '1 second' * $2 WHERE id = $1", [ids.second, 1]);
  });

  it("lists the tenant's own instances, newest first, as <Instance> objects", async () => {
    const page = await list("");
    expect(idsOf(page)).toEqual([ids.third, ids.second, ids.first]);
    expect(page.has_more).toBe(false);
    expect(page.items[0]).toMatchObject({ id: ids.third, state: "completed", next_fire_at: null, priority: "Normal" });
  });

  it("filters by namespace, sequence_id, a state list and metadata", async () => {
    expect(idsOf(await list("?namespace=billing"))).toEqual([ids.third, ids.second]);
    expect(idsOf(await list(`?sequence_id=${sequenceA}`))).toEqual([ids.third, ids.first]);
    expect(idsOf(await list("?state=completed,failed"))).toEqual([ids.third]);
    expect(idsOf(await list("?state=scheduled&state=running"))).toEqual([ids.second, ids.first]);
    expect(idsOf(await list("?metadata.campaign=spring"))).toEqual([ids.third, ids.first]);
    expect(idsOf(await list("?metadata.campaign=spring&metadata.tier=1"))).toEqual([ids.first]);
    expect(idsOf(await list("?metadata.campaign=spring&namespace=billing&state=completed"))).toEqual([ids.third]);
    expect(idsOf(await list("?metadata.campaign=winter"))).toEqual([]);
  });

  it("pages with offset and limit, saying whether more follow", async () => {
    expect(await list("?limit=2")).toMatchObject({ has_more: true });
    expect(idsOf(await list("?limit=2"))).toEqual([ids.third, ids.second]);
    const last = await list("?limit=2&offset=2");
    expect(idsOf(last)).toEqual([ids.first]);
    expect(last.has_more).toBe(false);
    expect(idsOf(await list("?limit=5000"))).toHaveLength(3);
  });

  it("400 JSON for an unknown state; 400 plain text for a malformed limit, offset or sequence_id", async () => {
    const state = await call(db, "GET", "/instances?state=scheduled,sleeping", { key: tenant.key });
    expect(state.status).toBe(400);
    expect(state.json()).toEqual({ error: 'invalid argument: unknown state "sleeping"' });
    for (const query of ["limit=-1", "limit=0", "limit=ten", "offset=1.5", "sequence_id=abc"]) {
      const reply = await call(db, "GET", `/instances?${query}`, { key: tenant.key });
      expect(reply.status, query).toBe(400);
      expect(reply.contentType).toBe(PLAIN);
      expect(reply.text).toMatch(/^Failed to deserialize query string: /);
    }
  });

  it("404 for a tenant_id naming another tenant, exactly as for one that does not exist", async () => {
    const foreign = await call(db, "GET", `/instances?tenant_id=${acme.id}`, { key: tenant.key });
    const missing = await call(db, "GET", "/instances?tenant_id=no-such-tenant", { key: tenant.key });
    expect(foreign.status).toBe(404);
    expect(foreign.json()).toEqual({ error: "not found: tenant not found" });
    expectSameReply(foreign, missing);
    expect(idsOf(await list(`?tenant_id=${tenant.id}`))).toHaveLength(3);
  });
});

describe("GET /instances/{id}/outputs", () => {
  const insertOutput = (instanceId: string, tenantId: string, blockId: string, createdAt: string, extra: { id?: string; ref?: string } = {}) =>
    db.sql.query(
      `INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output, output_ref, output_size, attempt, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 7, 1, $7)`,
      [extra.id ?? randomUUID(), tenantId, instanceId, blockId, JSON.stringify({ block: blockId }), extra.ref ?? null, createdAt],
    );

  it("200 with the outputs oldest first (created_at, then id), internal rows hidden once a real one exists", async () => {
    const id = await createInstance(db, acme, acmeSequence);
    await insertOutput(id, acme.id, "second", "2026-01-01T00:00:02Z");
    await insertOutput(id, acme.id, "tie-b", "2026-01-01T00:00:03Z", { id: "00000000-0000-4000-8000-00000000000b" });
    await insertOutput(id, acme.id, "tie-a", "2026-01-01T00:00:03Z", { id: "00000000-0000-4000-8000-00000000000a" });
    await insertOutput(id, acme.id, "first", "2026-01-01T00:00:01Z");
    // `first` has a real row, so its retry marker is hidden; `pending` has only its marker, which shows.
    await insertOutput(id, acme.id, "first", "2026-01-01T00:00:00Z", { ref: "__retry__" });
    await insertOutput(id, acme.id, "pending", "2026-01-01T00:00:04Z", { ref: "__in_progress__" });

    const reply = await call(db, "GET", `/instances/${id}/outputs`, { key: acme.key });
    expect(reply.status).toBe(200);
    const outputs = reply.json() as Record<string, unknown>[];
    expect(outputs.map((output) => output.block_id)).toEqual(["first", "second", "tie-a", "tie-b", "pending"]);
    expect(outputs[0]).toEqual({
      id: expect.any(String),
      instance_id: id,
      block_id: "first",
      output: { block: "first" },
      output_ref: null,
      output_size: 7,
      attempt: 1,
      created_at: "2026-01-01T00:00:01.000Z",
    });
    expect(outputs[4]).toMatchObject({ output_ref: "__in_progress__" });
  });

  it("200 with [] for an instance without outputs", async () => {
    const id = await createInstance(db, acme, acmeSequence);
    const reply = await call(db, "GET", `/instances/${id}/outputs`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("[]");
  });

  it("404 for an unknown instance and, byte for byte the same, for another tenant's", async () => {
    const theirs = await createInstance(db, globex, globexSequence);
    await insertOutput(theirs, globex.id, "secret", "2026-01-01T00:00:00Z");
    const missing = await call(db, "GET", `/instances/${randomUUID()}/outputs`, { key: acme.key });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: instance not found" });
    expectSameReply(await call(db, "GET", `/instances/${theirs}/outputs`, { key: acme.key }), missing);
    expectSameReply(await call(db, "GET", `/instances/${theirs}/outputs?tenant_id=${globex.id}`, { key: acme.key }), missing);
    expect((await call(db, "GET", `/instances/${theirs}/outputs`, { key: globex.key })).json()).toHaveLength(1);
  });
});

describe("operator keys", () => {
  it("create an instance for the tenant the body names; read it by id without naming the tenant", async () => {
    const key = await operatorKey(db);
    const created = await post({ sequence_id: globexSequence, tenant_id: globex.id, namespace: "ops" }, { key });
    expect(created.status).toBe(201);
    const { id } = created.json() as { id: string };
    const read = await call(db, "GET", `/instances/${id}`, { key });
    expect(read.status).toBe(200);
    expect(read.json()).toMatchObject({ id, tenant_id: globex.id, namespace: "ops" });
    expect((await call(db, "GET", `/instances/${id}/outputs`, { key })).status).toBe(200);

    // Naming a tenant narrows the read to it.
    const missing = await call(db, "GET", `/instances/${randomUUID()}`, { key });
    expectSameReply(await call(db, "GET", `/instances/${id}`, { key, headers: { "x-tenant-id": acme.id } }), missing);
    expect((await call(db, "GET", `/instances/${id}`, { key, headers: { "x-tenant-id": globex.id } })).status).toBe(200);
  });

  it("must name the tenant to list or to create for a tenant that exists", async () => {
    const key = await operatorKey(db);
    const unnamed = await call(db, "GET", "/instances", { key });
    expect(unnamed.status).toBe(400);
    expect(unnamed.json()).toEqual({ error: "invalid argument: an operator key must name the tenant (X-Tenant-Id header or tenant_id)" });
    const named = await call(db, "GET", "/instances", { key, headers: { "x-tenant-id": globex.id } });
    expect(named.status).toBe(200);
    expect((named.json() as { items: { tenant_id: string }[] }).items.every((item) => item.tenant_id === globex.id)).toBe(true);

    const nowhere = await post({ sequence_id: globexSequence, tenant_id: "no-such-tenant", namespace: "ops" }, { key });
    expect(nowhere.status).toBe(404);
    expect(nowhere.json()).toEqual({ error: "not found: sequence not found" });
  });
});

describe("GET /instances/{id}/children (wire-format V)", () => {
  it("lists an instance's sub-sequence children, oldest first, as <Instance> objects; none is an empty list; a foreign parent is a 404", async () => {
    const parent = await createInstance(db, acme, acmeSequence);
    const childless = await createInstance(db, acme, acmeSequence);
    const children = [await createInstance(db, acme, acmeSequence), await createInstance(db, acme, acmeSequence)];
    await db.sql.query("UPDATE task_instances SET parent_instance_id = $1, created_at = created_at + (array_position($2::uuid[], id) * interval '1 ms') WHERE id = ANY($2::uuid[])", [parent, children]);
    const listed = await call(db, "GET", `/instances/${parent}/children`, { key: acme.key });
    expect(listed.status).toBe(200);
    const body = listed.json() as { id: string; state: string; tenant_id: string }[];
    expect(body.map((child) => child.id)).toEqual(children);
    expect(body[0]).toMatchObject({ state: "scheduled", tenant_id: acme.id });
    expect((await call(db, "GET", `/instances/${childless}/children`, { key: acme.key })).json()).toEqual([]);
    const missing = await call(db, "GET", `/instances/${randomUUID()}/children`, { key: acme.key });
    expect(missing.json()).toEqual({ error: "not found: instance not found" });
    expectSameReply(await call(db, "GET", `/instances/${parent}/children`, { key: globex.key }), missing);
  });
});
