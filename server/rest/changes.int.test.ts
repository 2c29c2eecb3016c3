// GET /changes, GET /changes/stream (wire-format S) and GET /instances/{id}/audit (P) through the
// REST dispatcher on a real PostgreSQL: shapes, paging, cursors, the tenant scope rules, the
// stream's resume point, and the shared stream budget.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import type { Services } from "../services.ts";
import { call, createInstance, createSequence, expectSameReply, openStream, operatorKey, tenantWithKey } from "./testing.ts";

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

/** A state change as the engine makes one (the audit trigger records it). */
const transition = (id: string, state: string) => db.sql.query("UPDATE task_instances SET state = $2 WHERE id = $1", [id, state]);

interface Feed {
  changes: { id: string; instance_id: string; tenant_id: string; event_type: string; from_state?: string; to_state?: string; created_at: string }[];
  next_cursor?: string;
  has_more: boolean;
}

describe("GET /changes", () => {
  it("pages the tenant's transitions oldest first; next_cursor on every non-empty page; nothing for creation", async () => {
    const tenant = await tenantWithKey(db);
    const sequence = await createSequence(db, tenant);
    const ids = [await createInstance(db, tenant, sequence), await createInstance(db, tenant, sequence), await createInstance(db, tenant, sequence)];
    expect((await call(db, "GET", "/changes", { key: tenant.key })).json()).toEqual({ changes: [], has_more: false });
    for (const id of ids) await transition(id, "waiting");

    const first = (await call(db, "GET", "/changes?limit=2", { key: tenant.key })).json() as Feed;
    expect(first.changes.map((c) => [c.instance_id, c.event_type, c.from_state, c.to_state])).toEqual(
      ids.slice(0, 2).map((id) => [id, "state_transition", "scheduled", "waiting"]),
    );
    expect(first).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    const rest = (await call(db, "GET", `/changes?limit=2&cursor=${first.next_cursor}`, { key: tenant.key })).json() as Feed;
    expect(rest.changes.map((c) => c.instance_id)).toEqual([ids[2]]);
    expect(rest).toMatchObject({ has_more: false, next_cursor: expect.any(String) });
    expect((await call(db, "GET", `/changes?cursor=${rest.next_cursor}`, { key: tenant.key })).json()).toEqual({ changes: [], has_more: false });
    // limit 0 reads as 1; beyond 500 is 500.
    expect(((await call(db, "GET", "/changes?limit=0", { key: tenant.key })).json() as Feed).changes).toHaveLength(1);
    expect(((await call(db, "GET", "/changes?limit=100000", { key: tenant.key })).json() as Feed).changes).toHaveLength(3);
  });

  it("refuses a cursor that does not decode, and an absent or empty tenant scope", async () => {
    const bad = await call(db, "GET", "/changes?cursor=not*base64", { key: acme.key });
    expect([bad.status, bad.json()]).toEqual([400, { error: "invalid argument: malformed change cursor" }]);
    const empty = await call(db, "GET", "/changes?tenant_id=", { key: acme.key });
    expect([empty.status, empty.json()]).toEqual([400, { error: "invalid argument: tenant scope is required" }]);
    const operator = await operatorKey(db);
    const unscoped = await call(db, "GET", "/changes", { key: operator });
    expect([unscoped.status, unscoped.json()]).toEqual([400, { error: "invalid argument: X-Tenant-Id header is required" }]);
  });

  it("is always the acting tenant's feed: another tenant named answers as a missing one, its entries never show", async () => {
    const theirs = await createInstance(db, globex, globexSequence);
    await transition(theirs, "paused");
    const named = await call(db, "GET", `/changes?tenant_id=${globex.id}`, { key: acme.key });
    const missing = await call(db, "GET", `/changes?tenant_id=no-such-${randomUUID().slice(0, 8)}`, { key: acme.key });
    expect(named.status).toBe(404);
    expectSameReply(named, missing);
    const own = (await call(db, "GET", `/changes?tenant_id=${acme.id}&limit=500`, { key: acme.key })).json() as Feed;
    expect(own.changes.every((c) => c.tenant_id === acme.id)).toBe(true);
    // Their cursor only positions within our feed.
    const theirCursor = ((await call(db, "GET", "/changes", { key: globex.key })).json() as Feed).next_cursor!;
    const positioned = (await call(db, "GET", `/changes?cursor=${theirCursor}&limit=500`, { key: acme.key })).json() as Feed;
    expect(positioned.changes.every((c) => c.tenant_id === acme.id)).toBe(true);
    // An operator key naming the tenant reads that tenant's feed.
    const operator = await operatorKey(db);
    const asOperator = (await call(db, "GET", "/changes?limit=500", { key: operator, headers: { "x-tenant-id": globex.id } })).json() as Feed;
    expect(asOperator.changes.map((c) => c.instance_id)).toContain(theirs);
  });
});

describe("GET /changes/stream", () => {
  it("streams each entry as a change event whose id resumes right after it", async () => {
    const tenant = await tenantWithKey(db);
    const sequence = await createSequence(db, tenant);
    const [a, b] = [await createInstance(db, tenant, sequence), await createInstance(db, tenant, sequence)];
    await transition(a, "paused");
    const stream = await openStream(db, "/changes/stream", tenant.key);
    expect(stream.response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const first = await stream.next();
    expect(first).toMatchObject({ event: "change", data: { instance_id: a, to_state: "paused" }, id: expect.any(String) });
    await transition(b, "paused");
    expect(await stream.next()).toMatchObject({ event: "change", data: { instance_id: b } });
    stream.close();

    const resumed = await openStream(db, "/changes/stream", tenant.key, { "last-event-id": first!.id! });
    expect(await resumed.next()).toMatchObject({ event: "change", data: { instance_id: b } });
    resumed.close();
    // The cursor query wins over Last-Event-ID.
    const fromCursor = await openStream(db, `/changes/stream?cursor=${first!.id}`, tenant.key, { "last-event-id": "ignored" });
    expect(await fromCursor.next()).toMatchObject({ data: { instance_id: b } });
    fromCursor.close();
    expect((await call(db, "GET", "/changes/stream?cursor=%%", { key: tenant.key })).status).toBe(400);
  });

  it("shares the stream budget with instance streams: 429 for the tenant at its share, another tenant still streams", async () => {
    const services: Services = { ...db, config: { ...db.config, BULKHEAD_STREAMS: 4, BULKHEAD_STREAMS_PER_TENANT: 2 } };
    const mine = await createInstance(db, acme, acmeSequence);
    const held = [await openStream(services, `/instances/${mine}/stream`, acme.key), await openStream(services, "/changes/stream", acme.key)];
    const refused = await openStream(services, "/changes/stream", acme.key);
    expect(refused.response.status).toBe(429);
    expect(await refused.response.text()).toBe('{"error":"rate limit exceeded: concurrent change stream limit reached"}');
    const neighbour = await openStream(services, "/changes/stream", globex.key);
    expect(neighbour.response.status).toBe(200);
    for (const stream of [...held, neighbour]) stream.close();
  });
});

describe("GET /instances/{id}/audit", () => {
  it("lists the instance's entries newest first; another tenant's instance answers as a missing one", async () => {
    const id = await createInstance(db, acme, acmeSequence);
    await transition(id, "waiting");
    await transition(id, "scheduled");
    const audit = await call(db, "GET", `/instances/${id}/audit`, { key: acme.key });
    expect(audit.status).toBe(200);
    expect((audit.json() as Feed["changes"]).map((e) => `${e.from_state}>${e.to_state}`)).toEqual(["waiting>scheduled", "scheduled>waiting"]);
    const theirs = await createInstance(db, globex, globexSequence);
    const foreign = await call(db, "GET", `/instances/${theirs}/audit`, { key: acme.key });
    expect(foreign.status).toBe(404);
    expectSameReply(foreign, await call(db, "GET", `/instances/${randomUUID()}/audit`, { key: acme.key }));
  });
});
