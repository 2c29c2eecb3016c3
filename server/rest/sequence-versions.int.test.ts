// Sequence versioning over REST (wire-format Q): GET /sequences/versions, GET /sequences/by-name,
// GET /sequences, POST /sequences/{id}/deprecate and /status, POST /sequences/migrate-instance and
// DELETE /sequences/{id}, on a real PostgreSQL.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createInstance, expectSameReply, operatorKey, sequenceJson, tenantWithKey } from "./testing.ts";

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

/** Versions 1..n of a fresh name of the tenant's; their ids, by version. */
async function versions(tenant: { id: string; key: string }, n: number, name = `seq-${randomUUID().slice(0, 8)}`) {
  const ids: string[] = [];
  for (let version = 1; version <= n; version++) {
    const body = sequenceJson(tenant.id, { name, version, blocks: [{ type: "step", id: `v${version}`, handler: "noop" }] });
    const reply = await call(db, "POST", "/sequences", { key: tenant.key, body });
    expect(reply.status).toBe(201);
    ids.push(body.id);
  }
  return { name, ids };
}

const deprecate = (id: string, key = acme.key) => call(db, "POST", `/sequences/${id}/deprecate`, { key, body: {} });
const remove = (id: string, key = acme.key) => call(db, "DELETE", `/sequences/${id}`, { key });
const setState = (id: string, state: string) => db.sql.query("UPDATE task_instances SET state = $2 WHERE id = $1", [id, state]);

describe("GET /sequences", () => {
  it("pages through the tenant's versions, deprecated ones too, by namespace, name and version descending", async () => {
    const tenant = await tenantWithKey(db);
    const b = await versions(tenant, 2, "b-seq");
    const a = await versions(tenant, 1, "a-seq");
    const other = sequenceJson(tenant.id, { namespace: "zz", name: "a-seq" });
    expect((await call(db, "POST", "/sequences", { key: tenant.key, body: other })).status).toBe(201);
    await call(db, "POST", `/sequences/${b.ids[0]}/deprecate`, { key: tenant.key });
    await versions(globex, 1, "a-seq");

    const all = await call(db, "GET", "/sequences", { key: tenant.key });
    expect(all.status).toBe(200);
    const body = all.json() as { items: { id: string; deprecated: boolean }[]; has_more: boolean };
    expect(body.items.map((s) => s.id)).toEqual([a.ids[0], b.ids[1], b.ids[0], other.id]);
    expect(body.items[2]).toMatchObject({ deprecated: true, tenant_id: tenant.id });
    expect(body.has_more).toBe(false);

    const page = await call(db, "GET", "/sequences?limit=2&offset=1", { key: tenant.key });
    expect(page.json()).toMatchObject({ items: [{ id: b.ids[1] }, { id: b.ids[0] }], has_more: true });
    const last = await call(db, "GET", "/sequences?limit=2&offset=2", { key: tenant.key });
    expect(last.json()).toMatchObject({ items: [{ id: b.ids[0] }, { id: other.id }], has_more: false });
    const zz = await call(db, "GET", `/sequences?namespace=zz&tenant_id=${tenant.id}`, { key: tenant.key });
    expect((zz.json() as { items: { id: string }[] }).items.map((s) => s.id)).toEqual([other.id]);
  });

  it("accepts a limit over 1000 (capped, not refused); a malformed limit is a 400 in plain text; another tenant named is a 404", async () => {
    expect((await call(db, "GET", "/sequences?limit=100000", { key: acme.key })).status).toBe(200);
    const bad = await call(db, "GET", "/sequences?limit=x", { key: acme.key });
    expect({ status: bad.status, type: bad.contentType }).toEqual({ status: 400, type: PLAIN });
    expect((await call(db, "GET", `/sequences?tenant_id=${globex.id}`, { key: acme.key })).status).toBe(404);
  });
});

describe("GET /sequences/versions", () => {
  it("lists the name's versions that are not deprecated, highest first, as Sequence objects", async () => {
    const { name, ids } = await versions(acme, 3);
    expect((await deprecate(ids[1]!)).status).toBe(204);
    const reply = await call(db, "GET", `/sequences/versions?tenant_id=${acme.id}&namespace=default&name=${name}`, { key: acme.key });
    expect(reply.status).toBe(200);
    const list = reply.json() as { id: string; version: number; name: string; tenant_id: string; deprecated: boolean; blocks: unknown[] }[];
    expect(list.map((s) => [s.id, s.version])).toEqual([[ids[2], 3], [ids[0], 1]]);
    expect(list[0]).toMatchObject({ name, tenant_id: acme.id, namespace: "default", deprecated: false, blocks: [{ id: "v3", type: "step" }] });
  });

  it("answers [] for a name without versions, and never lists another tenant's", async () => {
    const { name } = await versions(globex, 1);
    const reply = await call(db, "GET", `/sequences/versions?namespace=default&name=${name}`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([]);
  });

  it("400 in plain text when namespace or name is missing", async () => {
    for (const query of ["namespace=default", "name=x", ""]) {
      const reply = await call(db, "GET", `/sequences/versions?${query}`, { key: acme.key });
      expect(reply.status, query).toBe(400);
      expect(reply.contentType).toBe(PLAIN);
      expect(reply.text).toMatch(/^Failed to deserialize query string: missing field `(namespace|name)`$/);
    }
  });

  it("400 naming the field for a NUL, which PostgreSQL cannot store, on both lookups (a query cannot carry a lone surrogate)", async () => {
    for (const [path, field] of [["/sequences/versions?namespace=default&name=a%00b", "name"], ["/sequences/by-name?namespace=%00&name=x", "namespace"]] as const) {
      const reply = await call(db, "GET", path, { key: acme.key });
      expect(reply.status, path).toBe(400);
      expect(reply.json()).toEqual({ error: `invalid argument: ${field}: contains a NUL (\\u0000) character` });
    }
  });

  it("404 (not []) for a query tenant_id naming another tenant, like one naming nobody", async () => {
    const { name } = await versions(globex, 1);
    const theirs = await call(db, "GET", `/sequences/versions?tenant_id=${globex.id}&namespace=default&name=${name}`, { key: acme.key });
    const nobody = await call(db, "GET", `/sequences/versions?tenant_id=no-such-tenant&namespace=default&name=${name}`, { key: acme.key });
    expect(theirs.status).toBe(404);
    expectSameReply(theirs, nobody);
  });

  it("wants X-Tenant-Id from an operator key, then answers as the tenant", async () => {
    const { name, ids } = await versions(acme, 1);
    const key = await operatorKey(db);
    const bare = await call(db, "GET", `/sequences/versions?namespace=default&name=${name}`, { key });
    expect(bare.status).toBe(400);
    expect(bare.json()).toEqual({ error: "invalid argument: X-Tenant-Id header is required" });
    const named = await call(db, "GET", `/sequences/versions?namespace=default&name=${name}`, { key, headers: { "x-tenant-id": acme.id } });
    expect((named.json() as { id: string }[]).map((s) => s.id)).toEqual(ids);
  });
});

describe("GET /sequences/by-name", () => {
  it("without a version: the highest version that is not deprecated", async () => {
    const { name, ids } = await versions(acme, 3);
    await deprecate(ids[2]!);
    const reply = await call(db, "GET", `/sequences/by-name?namespace=default&name=${name}`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({ id: ids[1], version: 2, name, deprecated: false });
  });

  it("with a version: exactly that one, even deprecated", async () => {
    const { name, ids } = await versions(acme, 2);
    await deprecate(ids[0]!);
    const reply = await call(db, "GET", `/sequences/by-name?tenant_id=${acme.id}&namespace=default&name=${name}&version=1`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({ id: ids[0], version: 1, deprecated: true });
  });

  it("404 `not found: sequence <name>` when every version is deprecated, for a missing version, and for another tenant's name", async () => {
    const { name, ids } = await versions(acme, 1);
    await deprecate(ids[0]!);
    const all = await call(db, "GET", `/sequences/by-name?namespace=default&name=${name}`, { key: acme.key });
    expect(all.status).toBe(404);
    expect(all.json()).toEqual({ error: `not found: sequence ${name}` });
    const absent = await call(db, "GET", `/sequences/by-name?namespace=default&name=${name}&version=9`, { key: acme.key });
    expect(absent.json()).toEqual({ error: `not found: sequence ${name}` });

    const theirs = await versions(globex, 1);
    const foreign = await call(db, "GET", `/sequences/by-name?namespace=default&name=${theirs.name}`, { key: acme.key });
    expect(foreign.status).toBe(404);
    expect(foreign.json()).toEqual({ error: `not found: sequence ${theirs.name}` });
    // In another namespace of the tenant's own, the name is missing too.
    const elsewhere = await call(db, "GET", `/sequences/by-name?namespace=other&name=${name}&version=1`, { key: acme.key });
    expect(elsewhere.status).toBe(404);
  });

  it("400 in plain text without a name; a query tenant_id naming another tenant is a 404", async () => {
    const missing = await call(db, "GET", "/sequences/by-name?namespace=default", { key: acme.key });
    expect({ status: missing.status, type: missing.contentType, text: missing.text }).toEqual({
      status: 400, type: PLAIN, text: "Failed to deserialize query string: missing field `name`",
    });
    const { name } = await versions(globex, 1);
    const theirs = await call(db, "GET", `/sequences/by-name?tenant_id=${globex.id}&namespace=default&name=${name}`, { key: acme.key });
    expect(theirs.status).toBe(404);
  });
});

describe("POST /sequences/{id}/deprecate", () => {
  it("204, idempotent; GET /sequences/{id} still serves it with deprecated: true, and instances can still be created on it", async () => {
    const { ids } = await versions(acme, 1);
    const first = await deprecate(ids[0]!);
    expect({ status: first.status, text: first.text }).toEqual({ status: 204, text: "" });
    expect((await deprecate(ids[0]!)).status).toBe(204);
    const got = await call(db, "GET", `/sequences/${ids[0]}`, { key: acme.key });
    expect(got.json()).toMatchObject({ id: ids[0], deprecated: true });
    await createInstance(db, acme, ids[0]!);
  });

  it("ignores the body, or its absence", async () => {
    const { ids } = await versions(acme, 1);
    expect((await call(db, "POST", `/sequences/${ids[0]}/deprecate`, { key: acme.key })).status).toBe(204);
    expect((await call(db, "POST", `/sequences/${ids[0]}/deprecate`, { key: acme.key, body: { anything: [1] } })).status).toBe(204);
  });

  it("404 for a missing id, and byte for byte the same for another tenant's, which stays as it was", async () => {
    const theirs = await versions(globex, 1);
    const missing = await deprecate(randomUUID());
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: sequence not found" });
    expectSameReply(await deprecate(theirs.ids[0]!), missing);
    const { rows } = await db.sql.query("SELECT deprecated FROM sequences WHERE id = $1", [theirs.ids[0]]);
    expect(rows).toEqual([{ deprecated: false }]);
  });
});

describe("POST /sequences/{id}/status", () => {
  const setStatus = (id: string, status: unknown, key = acme.key) => call(db, "POST", `/sequences/${id}/status`, { key, body: { status } });
  const draft = async () => {
    const body = sequenceJson(acme.id, { status: "draft" });
    expect((await call(db, "POST", "/sequences", { key: acme.key, body })).status).toBe(201);
    return body.id;
  };
  const row = async (id: string) => (await db.sql.query("SELECT status, deprecated FROM sequences WHERE id = $1", [id])).rows[0];

  it("204 along draft → staging → production → unpublished; unpublishing also deprecates, and the version is still served", async () => {
    const id = await draft();
    for (const status of ["staging", "production"]) {
      const reply = await setStatus(id, status);
      expect({ status: reply.status, text: reply.text }).toEqual({ status: 204, text: "" });
      expect(await row(id)).toEqual({ status, deprecated: false });
    }
    expect((await setStatus(id, "unpublished")).status).toBe(204);
    expect(await row(id)).toEqual({ status: "unpublished", deprecated: true });
    expect((await call(db, "GET", `/sequences/${id}`, { key: acme.key })).json()).toMatchObject({ status: "unpublished", deprecated: true });
  });

  it("draft may go straight to unpublished; staging may too", async () => {
    const id = await draft();
    expect((await setStatus(id, "unpublished")).status).toBe(204);
    const other = await draft();
    await setStatus(other, "staging");
    expect((await setStatus(other, "unpublished")).status).toBe(204);
  });

  it("400 naming the transition and what is allowed, changing nothing", async () => {
    const id = await draft();
    const skip = await setStatus(id, "production");
    expect(skip.status).toBe(400);
    expect(skip.json()).toEqual({ error: "invalid argument: invalid transition: draft → production (allowed: staging, unpublished)" });
    const same = await setStatus(id, "draft");
    expect(same.json()).toEqual({ error: "invalid argument: invalid transition: draft → draft (allowed: staging, unpublished)" });
    expect(await row(id)).toEqual({ status: "draft", deprecated: false });
    await setStatus(id, "unpublished");
    const final = await setStatus(id, "staging");
    expect(final.json()).toEqual({ error: "invalid argument: invalid transition: unpublished → staging (allowed: none)" });
  });

  it("does not change which version by-name calls latest (deprecated does, status does not)", async () => {
    const { name, ids } = await versions(acme, 2);
    // Both are production: production → unpublished is the only move, and it deprecates v2.
    await setStatus(ids[1]!, "unpublished");
    const latest = await call(db, "GET", `/sequences/by-name?namespace=default&name=${name}`, { key: acme.key });
    expect(latest.json()).toMatchObject({ id: ids[0], version: 1 });
  });

  it("422 in plain text for an unknown or missing status", async () => {
    const id = await draft();
    for (const body of [{ status: "live" }, {}]) {
      const reply = await call(db, "POST", `/sequences/${id}/status`, { key: acme.key, body });
      expect({ status: reply.status, type: reply.contentType }).toEqual({ status: 422, type: PLAIN });
    }
  });

  it("404 for a missing id, byte for byte the same for another tenant's, which keeps its status", async () => {
    const theirs = await versions(globex, 1);
    const missing = await setStatus(randomUUID(), "unpublished");
    expect(missing.json()).toEqual({ error: "not found: sequence not found" });
    expectSameReply(await setStatus(theirs.ids[0]!, "unpublished"), missing);
    expect(await row(theirs.ids[0]!)).toEqual({ status: "production", deprecated: false });
  });
});

describe("POST /sequences/migrate-instance", () => {
  const migrate = (body: unknown, key = acme.key) => call(db, "POST", "/sequences/migrate-instance", { key, body });

  it("200 rebinds a non-terminal instance to another version, keeping its state and context; a delete of the old version then goes through", async () => {
    const { ids } = await versions(acme, 2);
    const [from, to] = [ids[0]!, ids[1]!];
    const instance = await createInstance(db, acme, from, { context: { data: { kept: true } } });
    await setState(instance, "paused");
    const reply = await migrate({ instance_id: instance.toUpperCase(), target_sequence_id: to });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ migrated: true, instance_id: instance, from_sequence_id: from, to_sequence_id: to });
    const { rows } = await db.sql.query("SELECT sequence_id, state, context->'data' AS data FROM task_instances WHERE id = $1", [instance]);
    expect(rows).toEqual([{ sequence_id: to, state: "paused", data: { kept: true } }]);
    expect((await remove(from)).status).toBe(204);
    expect((await remove(to)).status).toBe(409);
  });

  it("400 for an instance in a terminal state, changing nothing", async () => {
    const { ids } = await versions(acme, 2);
    const instance = await createInstance(db, acme, ids[0]!);
    await setState(instance, "completed");
    const reply = await migrate({ instance_id: instance, target_sequence_id: ids[1] });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: `invalid argument: instance ${instance} is in terminal state completed` });
    expect((await db.sql.query("SELECT sequence_id FROM task_instances WHERE id = $1", [instance])).rows[0].sequence_id).toBe(ids[0]);
  });

  it("404 for a missing instance or target; another tenant's instance or target answers the same, and nothing moves", async () => {
    const mine = await versions(acme, 1);
    const instance = await createInstance(db, acme, mine.ids[0]!);
    const theirs = await versions(globex, 1);
    const theirInstance = await createInstance(db, globex, theirs.ids[0]!);

    const noInstance = await migrate({ instance_id: randomUUID(), target_sequence_id: mine.ids[0] });
    expect(noInstance.status).toBe(404);
    expect(noInstance.json()).toEqual({ error: "not found: instance not found" });
    expectSameReply(await migrate({ instance_id: theirInstance, target_sequence_id: mine.ids[0] }), noInstance);

    const noTarget = await migrate({ instance_id: instance, target_sequence_id: randomUUID() });
    expect(noTarget.json()).toEqual({ error: "not found: sequence not found" });
    expectSameReply(await migrate({ instance_id: instance, target_sequence_id: theirs.ids[0] }), noTarget);
    const { rows } = await db.sql.query("SELECT id, sequence_id FROM task_instances WHERE id = ANY($1::uuid[]) ORDER BY id", [[instance, theirInstance]]);
    expect(new Map(rows.map((r: { id: string; sequence_id: string }) => [r.id, r.sequence_id]))).toEqual(new Map([[instance, mine.ids[0]], [theirInstance, theirs.ids[0]]]));
  });

  it("422 in plain text for a body without the ids or with one that is not a UUID", async () => {
    for (const body of [{}, { instance_id: randomUUID() }, { instance_id: "x", target_sequence_id: randomUUID() }]) {
      const reply = await migrate(body);
      expect({ status: reply.status, type: reply.contentType }).toEqual({ status: 422, type: PLAIN });
    }
  });
});

describe("DELETE /sequences/{id}", () => {
  it("409 with the count while scheduled, running, waiting or paused instances use the version; nothing is deleted", async () => {
    const { ids } = await versions(acme, 1);
    const id = ids[0]!;
    const instances = [];
    for (const state of ["scheduled", "running", "waiting", "paused", "completed"]) {
      const instance = await createInstance(db, acme, id);
      await setState(instance, state);
      instances.push(instance);
    }
    const reply = await remove(id);
    expect(reply.status).toBe(409);
    expect(reply.json()).toEqual({ error: `conflict: cannot delete sequence ${id}: 4 active instance(s) still reference it` });
    expect((await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE sequence_id = $1", [id])).rows[0].n).toBe(5);
    expect((await db.sql.query("SELECT count(*)::int AS n FROM sequences WHERE id = $1", [id])).rows[0].n).toBe(1);

    // One left active: still refused, with the new count.
    for (const instance of instances.slice(0, 3)) await setState(instance, "cancelled");
    expect((await remove(id)).json()).toEqual({ error: `conflict: cannot delete sequence ${id}: 1 active instance(s) still reference it` });
  });

  it("204 once only terminal instances remain: the version goes with its instances, their outputs and signals; other versions stay", async () => {
    const { name, ids } = await versions(acme, 2);
    const [old, kept] = [ids[0]!, ids[1]!];
    const done = await createInstance(db, acme, old);
    const other = await createInstance(db, acme, kept);
    await setState(done, "completed");
    await db.sql.query(
      "INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output, attempt) VALUES ($1, $2, $3, 'v1', '{}', 0)",
      [randomUUID(), acme.id, done],
    );
    const reply = await remove(old);
    expect({ status: reply.status, text: reply.text }).toEqual({ status: 204, text: "" });
    expect((await call(db, "GET", `/sequences/${old}`, { key: acme.key })).status).toBe(404);
    expect((await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE id = $1", [done])).rows[0].n).toBe(0);
    expect((await db.sql.query("SELECT count(*)::int AS n FROM block_outputs WHERE instance_id = $1", [done])).rows[0].n).toBe(0);
    expect((await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE id = $1", [other])).rows[0].n).toBe(1);
    const left = await call(db, "GET", `/sequences/versions?namespace=default&name=${name}`, { key: acme.key });
    expect((left.json() as { id: string }[]).map((s) => s.id)).toEqual([kept]);
    // Deleted is missing from then on.
    expect((await remove(old)).json()).toEqual({ error: "not found: sequence not found" });
  });

  it("answers another tenant's id byte for byte like a random one, and deletes nothing of theirs", async () => {
    const theirs = await versions(globex, 1);
    const missing = await remove(randomUUID());
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: sequence not found" });
    expectSameReply(await remove(theirs.ids[0]!), missing);
    expect((await call(db, "GET", `/sequences/${theirs.ids[0]}`, { key: globex.key })).status).toBe(200);
  });

  it("400 for an id that is not a UUID; an operator key must send X-Tenant-Id", async () => {
    expect((await call(db, "DELETE", "/sequences/not-a-uuid", { key: acme.key })).status).toBe(400);
    const { ids } = await versions(acme, 1);
    const key = await operatorKey(db);
    const bare = await remove(ids[0]!, key);
    expect(bare.status).toBe(400);
    expect(bare.json()).toEqual({ error: "invalid argument: X-Tenant-Id header is required" });
    const named = await call(db, "DELETE", `/sequences/${ids[0]}`, { key, headers: { "x-tenant-id": acme.id } });
    expect(named.status).toBe(204);
  });
});
