// Sessions (wire-format O) over REST: create, read by id and by key, replace data, set state and
// list a session's instances, with O's shapes, codes and words; instances attach with session_id
// (Bulkhead) and their sub-sequence children inherit it; a state change reaches the attached
// instances as pause, resume or cancel signals, and a running engine applies them. Another
// tenant's session answers like a missing one.
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChildInstance } from "../../engine/storage/children.ts";
import { asTenantId } from "../../engine/storage/index.ts";
import type { Scheduler } from "../../engine/scheduler/scheduler.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { call, createInstance, createSequence, expectSameReply, operatorKey, sequenceJson, tenantWithKey, type Reply } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let sequence: string;

const errorOf = (reply: Reply) => (reply.json() as { error: string }).error;
const keyOf = () => `cart-${randomBytes(4).toString("hex")}`;
async function newSession(tenant: { id: string; key: string }, body: Record<string, unknown> = {}) {
  const reply = await call(db, "POST", "/sessions", { key: tenant.key, body: { tenant_id: tenant.id, session_key: keyOf(), ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.json() as { id: string; session_key: string; state: string; data: unknown };
}
const signalsOf = async (instanceId: string) =>
  (await db.sql.query("SELECT signal_type FROM signals WHERE instance_id = $1 ORDER BY created_at", [instanceId])).rows.map((r) => r.signal_type);

beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  sequence = await createSequence(db, acme);
});
afterAll(() => db.drop());

describe("POST /sessions", () => {
  it("creates an active session (201) with data null by default, readable by id and by key", async () => {
    const key = keyOf();
    const created = await call(db, "POST", "/sessions", { key: acme.key, body: { tenant_id: acme.id, session_key: key } });
    expect(created.status).toBe(201);
    const session = created.json() as { id: string };
    expect(session).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), tenant_id: acme.id, session_key: key, data: null, state: "active",
      created_at: expect.stringMatching(/Z$/), updated_at: expect.stringMatching(/Z$/),
    });
    expect((await call(db, "GET", `/sessions/${session.id}`, { key: acme.key })).json()).toEqual(session);
    expect((await call(db, "GET", `/sessions/by-key/${acme.id}/${key}`, { key: acme.key })).json()).toEqual(session);
    const longKey = await call(db, "GET", `/sessions/by-key/${acme.id}/${"k".repeat(513)}`, { key: acme.key });
    expect([longKey.status, errorOf(longKey)]).toEqual([400, "invalid argument: session_key must be between 1 and 512 characters"]);

    const withAll = await newSession(acme, { data: { cart: [1] }, expires_at: "2030-01-01T00:00:00Z" });
    expect(withAll).toMatchObject({ data: { cart: [1] }, expires_at: "2030-01-01T00:00:00.000Z" });
  });

  it("refuses a key used in the tenant (409), a key of 0 or 513 characters (400), a blank tenant or no key (422)", async () => {
    const { session_key: taken } = await newSession(acme);
    const again = await call(db, "POST", "/sessions", { key: acme.key, body: { tenant_id: acme.id, session_key: taken } });
    expect(again.status).toBe(409);
    // Keys are per tenant: another tenant may use the same one.
    expect((await call(db, "POST", "/sessions", { key: globex.key, body: { tenant_id: globex.id, session_key: taken } })).status).toBe(201);
    for (const sessionKey of ["", "k".repeat(513)]) {
      const reply = await call(db, "POST", "/sessions", { key: acme.key, body: { tenant_id: acme.id, session_key: sessionKey } });
      expect(reply.status).toBe(400);
      expect(errorOf(reply)).toBe("invalid argument: session_key must be between 1 and 512 characters");
    }
    expect((await call(db, "POST", "/sessions", { key: acme.key, body: { tenant_id: acme.id, session_key: "k".repeat(512) } })).status).toBe(201);
    expect((await call(db, "POST", "/sessions", { key: acme.key, body: { tenant_id: " ", session_key: keyOf() } })).status).toBe(422);
    expect((await call(db, "POST", "/sessions", { key: acme.key, body: { tenant_id: acme.id } })).status).toBe(422);
  });
});

describe("PATCH /sessions/{id}/data and /state", () => {
  it("replaces data whole (200, empty), refusing more than the context limit (413)", async () => {
    const session = await newSession(acme, { data: { a: 1, b: 2 } });
    const replaced = await call(db, "PATCH", `/sessions/${session.id}/data`, { key: acme.key, body: { data: { c: 3 } } });
    expect([replaced.status, replaced.text]).toEqual([200, ""]);
    expect((await call(db, "GET", `/sessions/${session.id}`, { key: acme.key })).json()).toMatchObject({ data: { c: 3 } });
    const big = await call(db, "PATCH", `/sessions/${session.id}/data`, { key: acme.key, body: { data: "x".repeat(300_000) } });
    expect(big.status).toBe(413);
    expect(errorOf(big)).toBe("payload too large: session data is 300002 bytes, max is 262144");
    expect((await call(db, "PATCH", `/sessions/${session.id}/data`, { key: acme.key, body: {} })).status).toBe(422);
  });

  it("takes any state from any state (200, empty); an unknown state is 422", async () => {
    const session = await newSession(acme);
    for (const state of ["completed", "active", "expired", "paused", "active"]) {
      const reply = await call(db, "PATCH", `/sessions/${session.id}/state`, { key: acme.key, body: { state } });
      expect([reply.status, reply.text]).toEqual([200, ""]);
      expect((await call(db, "GET", `/sessions/${session.id}`, { key: acme.key })).json()).toMatchObject({ state });
    }
    expect((await call(db, "PATCH", `/sessions/${session.id}/state`, { key: acme.key, body: { state: "asleep" } })).status).toBe(422);
  });
});

describe("a session's instances", () => {
  it("are those created with its session_id, one by one or in a batch, and their sub-sequence children", async () => {
    const session = await newSession(acme);
    expect((await call(db, "GET", `/sessions/${session.id}/instances`, { key: acme.key })).json()).toEqual([]);
    const one = await createInstance(db, acme, sequence, { session_id: session.id });
    const batch = await call(db, "POST", "/instances/batch", {
      key: acme.key, body: { instances: [1, 2].map(() => ({ sequence_id: sequence, tenant_id: acme.id, namespace: "default", session_id: session.id })) },
    });
    expect(batch.status).toBe(201);
    await createInstance(db, acme, sequence); // not in the session
    await db.sql.query("UPDATE task_instances SET state = 'running', lease_epoch = 1 WHERE id = $1", [one]);
    const child = await createChildInstance(db.sql, { instanceId: one, tenantId: asTenantId(acme.id), leaseEpoch: 1 }, { sequenceId: sequence, blockId: "sub", input: null });
    const listed = (await call(db, "GET", `/sessions/${session.id}/instances`, { key: acme.key })).json() as { id: string; session_id: string }[];
    expect(listed).toHaveLength(4);
    expect(listed.map((i) => i.id)).toEqual(expect.arrayContaining([one, "childId" in child ? child.childId : "no child"]));
    expect(new Set(listed.map((i) => i.session_id))).toEqual(new Set([session.id]));
    expect((await call(db, "GET", `/instances/${one}`, { key: acme.key })).json()).toMatchObject({ session_id: session.id });
  });

  it("refuses an instance naming a session the tenant does not have (404), creating nothing", async () => {
    const theirs = await newSession(globex);
    const before = (await db.sql.query("SELECT count(*)::int AS n FROM task_instances")).rows[0].n;
    for (const sessionId of [theirs.id, randomUUID()]) {
      const one = await call(db, "POST", "/instances", { key: acme.key, body: { sequence_id: sequence, tenant_id: acme.id, namespace: "default", session_id: sessionId } });
      expect([one.status, errorOf(one)]).toEqual([404, "not found: session not found"]);
      const batch = await call(db, "POST", "/instances/batch", {
        key: acme.key, body: { instances: [{ sequence_id: sequence, tenant_id: acme.id, namespace: "default", session_id: sessionId }] },
      });
      expect(batch.status).toBe(404);
    }
    expect((await db.sql.query("SELECT count(*)::int AS n FROM task_instances")).rows[0].n).toBe(before);
  });
});

describe("a session's state change", () => {
  it("sends pause, then resume, then cancel to its live instances, and nothing to others", async () => {
    const session = await newSession(acme);
    const attached = [await createInstance(db, acme, sequence, { session_id: session.id }), await createInstance(db, acme, sequence, { session_id: session.id })];
    const finished = await createInstance(db, acme, sequence, { session_id: session.id });
    await db.sql.query("UPDATE task_instances SET state = 'completed' WHERE id = $1", [finished]);
    const outside = await createInstance(db, acme, sequence);
    const setState = (state: string) => call(db, "PATCH", `/sessions/${session.id}/state`, { key: acme.key, body: { state } });

    await setState("paused");
    await setState("paused"); // no change: nothing sent
    for (const id of attached) expect(await signalsOf(id)).toEqual(["pause"]);
    await setState("active");
    for (const id of attached) expect(await signalsOf(id)).toEqual(["pause", "resume"]);
    await setState("completed");
    await setState("expired"); // already ended: nothing more
    await setState("active"); // back from an end: nothing to resume
    for (const id of attached) expect(await signalsOf(id)).toEqual(["pause", "resume", "cancel"]);
    expect(await signalsOf(finished)).toEqual([]);
    expect(await signalsOf(outside)).toEqual([]);
  });

  it("is applied by a running engine: pausing a session pauses its sleeping instance, and completing it cancels", async () => {
    const tenant = await tenantWithKey(db);
    const body = sequenceJson(tenant.id, { blocks: [{ type: "step", id: "nap", handler: "sleep", params: { duration_ms: 600_000 } }] });
    expect((await call(db, "POST", "/sequences", { key: tenant.key, body })).status).toBe(201);
    const session = await newSession(tenant);
    const id = await createInstance(db, tenant, body.id, { session_id: session.id });
    const scheduler: Scheduler = makeScheduler(db);
    await scheduler.start();
    try {
      const stateOf = async () => ((await call(db, "GET", `/instances/${id}`, { key: tenant.key })).json() as { state: string }).state;
      await expect.poll(stateOf, { timeout: 5_000 }).toBe("running");
      await call(db, "PATCH", `/sessions/${session.id}/state`, { key: tenant.key, body: { state: "paused" } });
      await expect.poll(stateOf, { timeout: 5_000 }).toBe("paused");
      await call(db, "PATCH", `/sessions/${session.id}/state`, { key: tenant.key, body: { state: "completed" } });
      await expect.poll(stateOf, { timeout: 5_000 }).toBe("cancelled");
    } finally {
      await scheduler.stop();
    }
  });
});

describe("another tenant's session", () => {
  it("answers every route exactly like a session nobody has, and changes nothing", async () => {
    const theirs = await newSession(globex, { data: { keep: true } });
    const missing = { id: randomUUID(), key: keyOf() };
    const asked = (target: { id: string; key: string }) => Promise.all([
      call(db, "GET", `/sessions/${target.id}`, { key: acme.key }),
      call(db, "GET", `/sessions/by-key/${acme.id}/${target.key}`, { key: acme.key }),
      call(db, "PATCH", `/sessions/${target.id}/data`, { key: acme.key, body: { data: 1 } }),
      call(db, "PATCH", `/sessions/${target.id}/state`, { key: acme.key, body: { state: "expired" } }),
      call(db, "GET", `/sessions/${target.id}/instances`, { key: acme.key }),
    ]);
    const [foreign, absent] = [await asked({ id: theirs.id, key: theirs.session_key }), await asked(missing)];
    expect(absent[0]!.json()).toEqual({ error: "not found: session not found" });
    foreign.forEach((reply, i) => expectSameReply(reply, absent[i]!));
    // by-key names its tenant in the path: only the request tenant's.
    expectSameReply(await call(db, "GET", `/sessions/by-key/${globex.id}/${theirs.session_key}`, { key: acme.key }), absent[1]!);
    expect((await call(db, "GET", `/sessions/${theirs.id}`, { key: globex.key })).json()).toMatchObject({ data: { keep: true }, state: "active" });
  });

  it("is the operator's once it names the tenant in X-Tenant-Id", async () => {
    const theirs = await newSession(globex);
    const key = await operatorKey(db);
    expect((await call(db, "GET", `/sessions/${theirs.id}`, { key, headers: { "x-tenant-id": globex.id } })).json()).toMatchObject({ id: theirs.id });
    expect(errorOf(await call(db, "GET", `/sessions/${theirs.id}`, { key }))).toBe("invalid argument: X-Tenant-Id header is required");
  });
});
