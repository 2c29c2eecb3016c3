// The dead-letter queue over REST (wire-format J): GET /instances/dlq (filters, order, offset and
// the 1000 cap, a plain array, cancelled never in it), POST /instances/{id}/retry and
// POST /instances/{id}/resume-from/{block_id}: bodies, errors, audit lines, who may act, and
// another tenant's instance answered byte for byte like a random id.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createSequence, expectSameReply, operatorKey, sequenceJson, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let flatSequence: string;
let globexSequence: string;
beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  const flat = sequenceJson(acme.id, { blocks: [{ type: "step", id: "a", handler: "noop" }, { type: "step", id: "b", handler: "noop" }, { type: "step", id: "c", handler: "noop" }] });
  expect((await call(db, "POST", "/sequences", { key: acme.key, body: flat })).status).toBe(201);
  flatSequence = flat.id;
  globexSequence = await createSequence(db, globex);
});
afterAll(() => db.drop());

const PLAIN = "text/plain; charset=utf-8";

/** An instance of the tenant in `state`, last updated `ageMs` ago. */
async function instanceIn(state: string, options: { tenantId?: string; sequenceId?: string; namespace?: string; ageMs?: number; cursor?: unknown } = {}) {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, updated_at, completed_at, cursor, metadata)
     VALUES (gen_random_uuid(), $1, $2, $3, $4::text, CASE WHEN $4 = 'scheduled' THEN now() END, now() - $5 * interval '1 millisecond',
             CASE WHEN $4 IN ('completed', 'failed', 'cancelled') THEN now() END, $6, '{"k": "v"}')
     RETURNING id`,
    [
      options.tenantId ?? acme.id, options.namespace ?? "default", options.sequenceId ?? flatSequence, state, options.ageMs ?? 0,
      options.cursor === undefined ? null : JSON.stringify(options.cursor),
    ],
  );
  return rows[0]!.id;
}

const dlq = (query = "", key = acme.key, headers: Record<string, string> = {}) => call(db, "GET", `/instances/dlq${query}`, { key, headers });
const ids = (reply: { json(): unknown }) => (reply.json() as { id: string }[]).map((i) => i.id);
const audit = async (action: string) =>
  (await db.sql.query("SELECT actor, details FROM audit_log WHERE tenant_id = $1 AND action = $2 ORDER BY id", [acme.id, action])).rows;

describe("GET /instances/dlq", () => {
  it("is a plain array of the tenant's failed instances, most recently updated first; cancelled and others never in it", async () => {
    const tenant = await tenantWithKey(db);
    const sequenceId = await createSequence(db, tenant);
    const old = await instanceIn("failed", { tenantId: tenant.id, sequenceId, ageMs: 60_000 });
    const recent = await instanceIn("failed", { tenantId: tenant.id, sequenceId, ageMs: 1_000 });
    for (const state of ["cancelled", "completed", "scheduled", "paused", "running", "waiting"]) await instanceIn(state, { tenantId: tenant.id, sequenceId });
    await instanceIn("failed", { tenantId: globex.id, sequenceId: globexSequence });
    const reply = await dlq("", tenant.key);
    expect(reply.status).toBe(200);
    expect(reply.text.startsWith("[")).toBe(true);
    expect(ids(reply)).toEqual([recent, old]);
    const [first] = reply.json() as Record<string, unknown>[];
    expect(first).toMatchObject({ id: recent, tenant_id: tenant.id, sequence_id: sequenceId, state: "failed", metadata: { k: "v" } });
    expect(Object.keys(first!)).toEqual(expect.arrayContaining(["id", "sequence_id", "tenant_id", "namespace", "state", "next_fire_at", "priority", "context", "updated_at"]));
  });

  it("ANDs the tenant, namespace and sequence filters; ignores state and metadata.*", async () => {
    const tenant = await tenantWithKey(db);
    const [one, two] = [await createSequence(db, tenant), await createSequence(db, tenant)];
    const hit = await instanceIn("failed", { tenantId: tenant.id, sequenceId: one, namespace: "eu" });
    await instanceIn("failed", { tenantId: tenant.id, sequenceId: two, namespace: "eu" });
    await instanceIn("failed", { tenantId: tenant.id, sequenceId: one, namespace: "us" });
    expect(ids(await dlq(`?namespace=eu&sequence_id=${one.toUpperCase()}`, tenant.key))).toEqual([hit]);
    expect(ids(await dlq(`?tenant_id=${tenant.id}&namespace=eu&sequence_id=${one}&state=running&metadata.k=nope`, tenant.key))).toEqual([hit]);
    expect(await dlq(`?sequence_id=${randomUUID()}`, tenant.key).then((r) => r.json())).toEqual([]);
  });

  it("pages with offset and limit (default 100), the limit silently capped at 1000", async () => {
    const tenant = await tenantWithKey(db);
    await db.sql.query(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, updated_at)
       SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), 'failed', now() - i * interval '1 millisecond' FROM generate_series(1, 1005) AS i`,
      [tenant.id],
    );
    expect(ids(await dlq("", tenant.key))).toHaveLength(100);
    const all = ids(await dlq("?limit=5000", tenant.key));
    expect(all).toHaveLength(1000);
    expect(ids(await dlq("?offset=998&limit=5", tenant.key))).toEqual([...all.slice(998), ...ids(await dlq("?offset=1000&limit=5", tenant.key)).slice(0, 3)]);
    expect(ids(await dlq("?offset=1000&limit=1000", tenant.key))).toHaveLength(5);
  });

  it("answers a malformed sequence_id, offset or limit with a plain-text 400", async () => {
    for (const query of ["?sequence_id=not-a-uuid", "?offset=-1", "?limit=abc"]) {
      const reply = await dlq(query);
      expect({ status: reply.status, type: reply.contentType }).toEqual({ status: 400, type: PLAIN });
      expect(reply.text).toMatch(/^Failed to deserialize query string: /);
    }
  });

  it("answers a tenant_id naming another tenant like a tenant that does not exist", async () => {
    const foreign = await dlq(`?tenant_id=${globex.id}`);
    expect(foreign.status).toBe(404);
    expectSameReply(foreign, await dlq("?tenant_id=no-such-tenant"));
  });

  it("wants X-Tenant-Id from an operator key, and then serves that tenant", async () => {
    const key = await operatorKey(db);
    const refused = await dlq(`?tenant_id=${acme.id}`, key);
    expect({ status: refused.status, body: refused.json() }).toEqual({ status: 400, body: { error: "invalid argument: X-Tenant-Id header is required" } });
    const served = await dlq("", key, { "x-tenant-id": globex.id });
    expect(served.status).toBe(200);
    expect((served.json() as { tenant_id: string }[]).every((i) => i.tenant_id === globex.id)).toBe(true);
  });
});

describe("POST /instances/{id}/retry", () => {
  it("takes the instance out of the DLQ, drops its failed run's markers, and records who retried it", async () => {
    const id = await instanceIn("failed", { cursor: { v: 2, nodes: { a: { status: "completed" }, b: { status: "failed", attempt: 0 } } } });
    await db.sql.query(
      `INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output, output_ref)
       VALUES (gen_random_uuid(), $1, $2, 'a', '{"ok": 1}', NULL), (gen_random_uuid(), $1, $2, 'b', '{"__error__": true}', '__error__')`,
      [acme.id, id],
    );
    expect(ids(await dlq())).toContain(id);
    const reply = await call(db, "POST", `/instances/${id}/retry`, { key: acme.key, body: {} });
    expect({ status: reply.status, text: reply.text }).toEqual({ status: 200, text: JSON.stringify({ id, state: "scheduled" }) });
    expect(ids(await dlq())).not.toContain(id);
    const outputs = await call(db, "GET", `/instances/${id}/outputs`, { key: acme.key });
    expect((outputs.json() as { block_id: string }[]).map((o) => o.block_id)).toEqual(["a"]);
    const instance = (await call(db, "GET", `/instances/${id}`, { key: acme.key })).json() as { context: { runtime: Record<string, unknown> } };
    expect(instance.context.runtime).toMatchObject({ total_steps_executed: 0, started_at: null, current_step: null, run_id: expect.any(String) });
    expect(await audit("instance.retry")).toContainEqual({ actor: expect.stringMatching(/^bh_/), details: { instance_id: id, count: 1 } });
  });

  it("answers another tenant's failed instance byte for byte like a random id, and leaves it failed", async () => {
    const theirs = await instanceIn("failed", { tenantId: globex.id, sequenceId: globexSequence });
    const missing = await call(db, "POST", `/instances/${randomUUID()}/retry`, { key: acme.key, body: {} });
    expect(missing.status).toBe(404);
    expectSameReply(await call(db, "POST", `/instances/${theirs}/retry`, { key: acme.key, body: {} }), missing);
    expect((await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [theirs])).rows[0].state).toBe("failed");
  });
});

describe("POST /instances/{id}/resume-from/{block_id}", () => {
  const resume = (id: string, block: string, body?: unknown, key = acme.key) =>
    call(db, "POST", `/instances/${id}/resume-from/${block}`, { key, ...(body === undefined ? {} : { body }) });
  const done = () => instanceIn("completed", { cursor: { v: 2, nodes: { a: { status: "completed" }, b: { status: "completed" }, c: { status: "completed" } } } });

  it("200 with what it did; the block and the later ones run again, context merged, signals queued", async () => {
    const id = await done();
    await db.sql.query(
      `INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output)
       SELECT gen_random_uuid(), $1, $2, b, '{}' FROM unnest(ARRAY['a', 'b', 'c']) AS b`,
      [acme.id, id],
    );
    const reply = await resume(id, "b", { context: { fixed: true }, signals: [{ signal_type: "pause" }, { signal_type: { custom: "go" }, payload: 7 }] });
    expect({ status: reply.status, text: reply.text }).toEqual({
      status: 200, text: JSON.stringify({ id, state: "scheduled", resumed_from: "b", outputs_deleted: 2, signals_enqueued: 2 }),
    });
    const { rows } = await db.sql.query("SELECT state, context -> 'data' AS data FROM task_instances WHERE id = $1", [id]);
    expect(rows).toEqual([{ state: "scheduled", data: { fixed: true } }]);
    expect((await db.sql.query("SELECT signal_type FROM signals WHERE instance_id = $1 ORDER BY created_at", [id])).rows.map((r) => r.signal_type)).toEqual([
      "pause", "custom:go",
    ]);
    expect(await audit("instance.resume_from")).toContainEqual({
      actor: expect.stringMatching(/^bh_/), details: { instance_id: id, block_id: "b", count: 1, outputs_deleted: 2, signals_enqueued: 2 },
    });
  });

  it("takes no body at all, or {}", async () => {
    expect((await resume(await done(), "c")).status).toBe(200);
    expect((await resume(await done(), "a", {})).status).toBe(200);
  });

  it("400 for a state it cannot start from, a block that is not top-level, a context that is not an object", async () => {
    const running = await instanceIn("running");
    const answers = [
      await resume(running, "a", {}),
      await resume(await done(), "nope", {}),
      await resume(await done(), "a", { context: [1, 2] }),
    ];
    expect(answers.map((r) => ({ status: r.status, body: r.json() }))).toEqual([
      { status: 400, body: { error: "invalid argument: cannot resume-from in state running: pause or cancel the instance first" } },
      { status: 400, body: { error: `invalid argument: block 'nope' is not a top-level block of sequence ${flatSequence}` } },
      { status: 400, body: { error: "invalid argument: context patch must be a JSON object" } },
    ]);
  });

  it("422 in plain text for a signal it cannot decode", async () => {
    const reply = await resume(await done(), "a", { signals: [{ signal_type: "custom:x" }] });
    expect({ status: reply.status, type: reply.contentType }).toEqual({ status: 422, type: PLAIN });
  });

  it("answers another tenant's instance byte for byte like a random id, changing nothing", async () => {
    const theirs = await instanceIn("completed", { tenantId: globex.id, sequenceId: globexSequence });
    const missing = await resume(randomUUID(), "one", {});
    expect(missing.json()).toEqual({ error: "not found: instance not found" });
    expectSameReply(await resume(theirs, "one", {}), missing);
    expect((await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [theirs])).rows[0].state).toBe("completed");
  });

  it("wants X-Tenant-Id from an operator key", async () => {
    const key = await operatorKey(db);
    const refused = await resume(await done(), "a", {}, key);
    expect(refused.json()).toEqual({ error: "invalid argument: X-Tenant-Id header is required" });
    const served = await call(db, "POST", `/instances/${await done()}/resume-from/a`, { key, body: {}, headers: { "x-tenant-id": acme.id } });
    expect(served.status).toBe(200);
  });
});
