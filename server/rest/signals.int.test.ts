// POST /instances/{id}/signals, PATCH /instances/{id}/state, PATCH /instances/{id}/context and
// POST /instances/{id}/retry (wire-format E.10-E.12, E.14, F.2, G.1): status codes, bodies, and
// another tenant's id answered byte for byte like a random one on every route.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createInstance, createSequence, expectSameReply, operatorKey, sequenceJson, tenantWithKey, type Reply } from "./testing.ts";

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
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A new instance of acme's (or globex's) moved straight to `state` in the table. */
async function instanceIn(state: string, tenant: "acme" | "globex" = "acme"): Promise<string> {
  const id = tenant === "acme" ? await createInstance(db, acme, acmeSequence) : await createInstance(db, globex, globexSequence);
  await db.sql.query("UPDATE task_instances SET state = $2, next_fire_at = CASE WHEN $2 = 'scheduled' THEN next_fire_at END WHERE id = $1", [id, state]);
  return id;
}

async function stored(id: string) {
  const { rows } = await db.sql.query("SELECT state, next_fire_at, context, completed_at, lease_epoch FROM task_instances WHERE id = $1", [id]);
  return rows[0] as { state: string; next_fire_at: Date | null; context: unknown; completed_at: Date | null; lease_epoch: number };
}

const signalsOf = async (id: string) =>
  (await db.sql.query("SELECT id, tenant_id, signal_type, payload FROM signals WHERE instance_id = $1 ORDER BY created_at, id", [id])).rows;

const signal = (id: string, body: unknown, key = acme.key) => call(db, "POST", `/instances/${id}/signals`, { key, body });
const patchState = (id: string, body: unknown, key = acme.key) => call(db, "PATCH", `/instances/${id}/state`, { key, body });
const patchContext = (id: string, body: unknown, key = acme.key) => call(db, "PATCH", `/instances/${id}/context`, { key, body });
const retry = (id: string, key = acme.key) => call(db, "POST", `/instances/${id}/retry`, { key, body: {} });

function expectPlain422(reply: Reply, pattern: RegExp) {
  expect(reply.status).toBe(422);
  expect(reply.contentType).toBe(PLAIN);
  expect(reply.text).toMatch(/^Failed to deserialize the JSON body into the target type: /);
  expect(reply.text).toMatch(pattern);
}

describe("POST /instances/{id}/signals", () => {
  it.each([
    ["pause", "pause"],
    ["resume", "resume"],
    ["cancel", "cancel"],
    ["update_context", "update_context"],
    [{ custom: "order:paid" }, "custom:order:paid"],
  ])("201 with the signal id for %j, stored as %s", async (wire, text) => {
    const id = await instanceIn("running");
    const reply = await signal(id, { signal_type: wire, payload: { data: { x: 1 } } });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.json() as object)).toEqual(["signal_id"]);
    const { signal_id: signalId } = reply.json() as { signal_id: string };
    expect(signalId).toMatch(UUID);
    expect(await signalsOf(id)).toEqual([{ id: signalId, tenant_id: acme.id, signal_type: text, payload: { data: { x: 1 } } }]);
  });

  it("takes a missing payload as null and ignores unknown fields", async () => {
    const id = await instanceIn("running");
    expect((await signal(id, { signal_type: "pause", whatever: true })).status).toBe(201);
    expect(await signalsOf(id)).toEqual([expect.objectContaining({ signal_type: "pause", payload: null })]);
  });

  it("makes a scheduled instance due now", async () => {
    const id = await createInstance(db, acme, acmeSequence, { next_fire_at: "2099-01-01T00:00:00Z" });
    expect((await signal(id, { signal_type: "cancel" })).status).toBe(201);
    const { state, next_fire_at: due } = await stored(id);
    expect(state).toBe("scheduled");
    expect(Math.abs(due!.getTime() - Date.now())).toBeLessThan(5_000);
  });

  it.each([
    ["custom:x", /signal_type: unknown variant `custom:x`/],
    ["invalid_signal_type", /signal_type: unknown variant `invalid_signal_type`/],
    [{ custom: 7 }, /signal_type: /],
    [undefined, /signal_type: missing field `signal_type`/],
  ])("422 in plain text for signal_type %j, and stores nothing", async (wire, pattern) => {
    const id = await instanceIn("running");
    expectPlain422(await signal(id, { signal_type: wire }), pattern);
    expect(await signalsOf(id)).toEqual([]);
  });

  it.each(["completed", "failed", "cancelled"])("400 for a %s instance", async (state) => {
    const id = await instanceIn(state);
    const reply = await signal(id, { signal_type: "resume" });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: `invalid argument: cannot send signal to instance ${id}: target is in a terminal state` });
    expect(await signalsOf(id)).toEqual([]);
  });

  it("413 for a payload over 256 KiB, the web app's cap too, and stores nothing", async () => {
    const id = await instanceIn("running");
    const reply = await signal(id, { signal_type: { custom: "big" }, payload: { blob: "x".repeat(300 * 1024) } });
    expect(reply.status).toBe(413);
    expect(reply.json()).toEqual({ error: expect.stringMatching(/^payload too large: payload is \d+ bytes, exceeding the maximum of 262144 bytes$/) });
    expect(await signalsOf(id)).toEqual([]);
  });

  it("404 for an unknown instance", async () => {
    const reply = await signal(randomUUID(), { signal_type: "pause" });
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: "not found: instance not found" });
  });
});

describe("POST /instances/{id}/signals with a human_input answer", () => {
  let gated: string;
  beforeAll(async () => {
    const body = sequenceJson(acme.id, {
      name: "gated",
      blocks: [
        { type: "step", id: "prepare", handler: "noop" },
        { type: "step", id: "approve", handler: "noop", wait_for_input: { prompt: "Ship it?" } },
      ],
    });
    const reply = await call(db, "POST", "/sequences", { key: acme.key, body });
    expect(reply.status).toBe(201);
    gated = (reply.json() as { id: string }).id;
  });

  /** An instance of the gated sequence in `state`, its cursor as the engine leaves it at `approve` (or `cursor`). */
  async function atGate(state: string, cursor: unknown = { v: 2, nodes: { prepare: { status: "completed" }, approve: { status: "active", attempt: 0, reachedAt: new Date().toISOString() } } }) {
    const id = await createInstance(db, acme, gated);
    await db.sql.query(
      "UPDATE task_instances SET state = $2, cursor = $3, next_fire_at = CASE WHEN $2 = 'scheduled' THEN now() + interval '1 hour' END WHERE id = $1",
      [id, state, cursor === null ? null : JSON.stringify(cursor)],
    );
    return id;
  }
  const answer = (id: string, block: string) => signal(id, { signal_type: { custom: `human_input:${block}` }, payload: { value: "yes" } });

  it("201 for the block whose gate is waiting", async () => {
    const id = await atGate("waiting");
    const reply = await answer(id, "approve");
    expect(reply.status).toBe(201);
    expect(await signalsOf(id)).toEqual([expect.objectContaining({ signal_type: "custom:human_input:approve", payload: { value: "yes" } })]);
  });

  it.each([
    ["a mistyped block id", "aprove", "waiting", undefined],
    ["a block that has no gate", "prepare", "waiting", undefined],
    ["a gate not reached yet", "approve", "running", { v: 2, nodes: { prepare: { status: "running", attempt: 0 } } }],
    ["a gate already answered", "approve", "scheduled", { v: 2, nodes: { approve: { status: "active", attempt: 0, reachedAt: new Date().toISOString(), input: { value: "no" } } } }],
    ["an instance with no cursor yet", "approve", "scheduled", null],
  ])("422 naming the block for %s, and stores nothing", async (_case, block, state, cursor) => {
    const id = await atGate(state, cursor);
    const reply = await answer(id, block);
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({ error: `unprocessable entity: block "${block}" of instance ${id} is not waiting for input` });
    expect(await signalsOf(id)).toEqual([]);
  });

  it("400 for a terminal instance, as for any signal", async () => {
    const id = await atGate("completed");
    const reply = await answer(id, "aprove");
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: `invalid argument: cannot send signal to instance ${id}: target is in a terminal state` });
  });

  it("404 for an unknown instance", async () => {
    const reply = await answer(randomUUID(), "approve");
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: "not found: instance not found" });
  });
});

describe("PATCH /instances/{id}/state", () => {
  it("200 with an empty body, and the instance in its new state", async () => {
    const id = await instanceIn("running");
    const epoch = (await stored(id)).lease_epoch;
    const reply = await patchState(id, { state: "paused" });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
    expect(await stored(id)).toMatchObject({ state: "paused", next_fire_at: null, lease_epoch: epoch + 1 });
    const read = await call(db, "GET", `/instances/${id}`, { key: acme.key });
    expect(read.json()).toMatchObject({ id, state: "paused", next_fire_at: null });
  });

  it("honours next_fire_at for a scheduled target", async () => {
    const id = await instanceIn("paused");
    expect((await patchState(id, { state: "scheduled", next_fire_at: "2030-05-06T07:08:09.123+02:00" })).status).toBe(200);
    expect((await stored(id)).next_fire_at).toEqual(new Date("2030-05-06T05:08:09.123Z"));
  });

  it("400 for a transition F.2 does not allow", async () => {
    const id = await instanceIn("waiting");
    const reply = await patchState(id, { state: "paused" });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "invalid argument: cannot transition from waiting to paused" });
    expect((await stored(id)).state).toBe("waiting");
  });

  it("422 in plain text for an unknown state string, a missing state, or a bad next_fire_at", async () => {
    const id = await instanceIn("running");
    expectPlain422(await patchState(id, { state: "sleeping" }), /state: /);
    expectPlain422(await patchState(id, { state: "Paused" }), /state: /);
    expectPlain422(await patchState(id, {}), /state: /);
    expectPlain422(await patchState(id, { state: "scheduled", next_fire_at: "tomorrow" }), /next_fire_at: /);
    expect((await stored(id)).state).toBe("running");
  });

  it("404 for an unknown instance", async () => {
    const reply = await patchState(randomUUID(), { state: "cancelled" });
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: "not found: instance not found" });
  });
});

describe("PATCH /instances/{id}/context", () => {
  it("200 with an empty body; the context is replaced and missing sections reset to their defaults", async () => {
    const id = await createInstance(db, acme, acmeSequence, {
      context: { data: { old: true }, config: { tier: 1 }, audit: [{ timestamp: "2026-01-01T00:00:00Z", event: "imported" }] },
    });
    const reply = await patchContext(id, { context: { data: { fresh: 1 } } });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
    const read = (await call(db, "GET", `/instances/${id}`, { key: acme.key })).json() as { context: unknown };
    expect(read.context).toEqual({
      data: { fresh: 1 },
      config: null,
      audit: [],
      runtime: {
        current_step: null, attempt: 0, started_at: null, current_step_started_at: null, resource_key: null,
        total_steps_executed: 0, dry_run: false, dry_run_auto_approve: false,
      },
    });
  });

  it("413 for a context over 256 KiB, leaving the old one", async () => {
    const id = await instanceIn("running");
    const before = (await stored(id)).context;
    const reply = await patchContext(id, { context: { data: { blob: "x".repeat(256 * 1024) } } });
    expect(reply.status).toBe(413);
    expect((reply.json() as { error: string }).error).toMatch(/^payload too large: context is \d+ bytes, exceeding the maximum of 262144 bytes$/);
    expect((await stored(id)).context).toEqual(before);
  });

  it("422 in plain text without a context object", async () => {
    const id = await instanceIn("running");
    expectPlain422(await patchContext(id, {}), /context: /);
    expectPlain422(await patchContext(id, { context: null }), /context: /);
    expectPlain422(await patchContext(id, { context: { audit: "none" } }), /context\.audit: /);
  });

  it("404 for an unknown instance", async () => {
    const reply = await patchContext(randomUUID(), { context: {} });
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: "not found: instance not found" });
  });
});

describe("POST /instances/{id}/retry", () => {
  it("200 with the id and state scheduled for a failed instance, due now", async () => {
    const id = await instanceIn("failed");
    const reply = await retry(id);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(JSON.stringify({ id, state: "scheduled" }));
    const after = await stored(id);
    expect(after).toMatchObject({ state: "scheduled", completed_at: null });
    expect(Math.abs(after.next_fire_at!.getTime() - Date.now())).toBeLessThan(5_000);
  });

  it("reads no body: none at all is as good as {}", async () => {
    const id = await instanceIn("failed");
    expect((await call(db, "POST", `/instances/${id}/retry`, { key: acme.key })).status).toBe(200);
  });

  it("400 for an instance that is not failed", async () => {
    const id = await instanceIn("completed");
    const reply = await retry(id);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "invalid argument: can only retry failed instances, current state: completed" });
    expect((await stored(id)).state).toBe("completed");
  });

  it("404 for an unknown instance", async () => {
    const reply = await retry(randomUUID());
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: "not found: instance not found" });
  });
});

describe("another tenant's instance", () => {
  // Each route with a request that would change the foreign instance (or, for a terminal one,
  // be refused with 400) if it were acme's: the answer must still be the random id's 404.
  const cases = [
    { route: "POST /instances/{id}/signals", state: "running", send: (id: string, o: Extra) => call(db, "POST", `/instances/${id}/signals`, { body: { signal_type: "cancel" }, ...o }) },
    { route: "POST /instances/{id}/signals", state: "completed", send: (id: string, o: Extra) => call(db, "POST", `/instances/${id}/signals`, { body: { signal_type: "cancel" }, ...o }) },
    // A human_input answer is checked against the instance's gates: a foreign one's must not show through.
    { route: "POST /instances/{id}/signals", state: "waiting", send: (id: string, o: Extra) => call(db, "POST", `/instances/${id}/signals`, { body: { signal_type: { custom: "human_input:one" } }, ...o }) },
    { route: "POST /instances/{id}/signals", state: "running", send: (id: string, o: Extra) => call(db, "POST", `/instances/${id}/signals`, { body: { signal_type: { custom: "human_input:nope" } }, ...o }) },
    { route: "PATCH /instances/{id}/state", state: "running", send: (id: string, o: Extra) => call(db, "PATCH", `/instances/${id}/state`, { body: { state: "cancelled" }, ...o }) },
    { route: "PATCH /instances/{id}/state", state: "waiting", send: (id: string, o: Extra) => call(db, "PATCH", `/instances/${id}/state`, { body: { state: "paused" }, ...o }) },
    { route: "PATCH /instances/{id}/context", state: "running", send: (id: string, o: Extra) => call(db, "PATCH", `/instances/${id}/context`, { body: { context: { data: 1 } }, ...o }) },
    { route: "POST /instances/{id}/retry", state: "failed", send: (id: string, o: Extra) => call(db, "POST", `/instances/${id}/retry`, { body: {}, ...o }) },
    { route: "POST /instances/{id}/retry", state: "running", send: (id: string, o: Extra) => call(db, "POST", `/instances/${id}/retry`, { body: {}, ...o }) },
  ];
  type Extra = { key: string; headers?: Record<string, string> };

  it.each(cases)("$route ($state) answers byte for byte like a random id, and changes nothing", async ({ state, send }) => {
    const theirs = await instanceIn(state, "globex");
    const own = await instanceIn(state);
    const before = { row: await stored(theirs), signals: await signalsOf(theirs) };
    const missing = await send(randomUUID(), { key: acme.key });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: instance not found" });
    const attempts = [
      send(theirs, { key: acme.key }),
      send(theirs, { key: acme.key, headers: { "x-tenant-id": globex.id } }),
      // Its own instance, asked for in another tenant's name.
      send(own, { key: acme.key, headers: { "x-tenant-id": globex.id } }),
    ];
    for (const reply of await Promise.all(attempts)) expectSameReply(reply, missing);
    expect({ row: await stored(theirs), signals: await signalsOf(theirs) }).toEqual(before);
  });

  it("is reachable by an operator key, which acts through the owner's store", async () => {
    const key = await operatorKey(db);
    const theirs = await instanceIn("running", "globex");
    expect((await call(db, "POST", `/instances/${theirs}/signals`, { key, body: { signal_type: "pause" } })).status).toBe(201);
    expect(await signalsOf(theirs)).toEqual([expect.objectContaining({ tenant_id: globex.id, signal_type: "pause" })]);
    expect((await call(db, "POST", `/instances/${randomUUID()}/retry`, { key, body: {} })).json()).toEqual({ error: "not found: instance not found" });
  });
});
