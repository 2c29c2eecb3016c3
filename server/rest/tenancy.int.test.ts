// Who may act for which tenant: "not yours" answers exactly like "missing" on every route that
// takes an id or names a tenant; operator keys act for the tenant they name, read by id through
// the partition router, and create tenants; tenant keys cannot see the operator route.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createInstance, createSequence, expectSameReply, operatorKey, sequenceJson, tenantWithKey } from "./testing.ts";
import { ROUTES } from "./routes.ts";
import { insertWorkerTask } from "../../engine/storage/execution.ts";

/** Everything a request could change, to show that a refused one changed nothing. */
async function snapshot() {
  const tables = ["task_instances", "signals", "worker_tasks", "worker_task_attempts", "sequences"];
  const counts: Record<string, unknown> = {};
  for (const table of tables) counts[table] = (await db.sql.query(`SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) AS h FROM ${table} t`)).rows[0].h;
  return counts;
}

let second: TestDatabase;
let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let objects: Record<"acme" | "globex", Record<string, string>>;
beforeAll(async () => {
  // Two backends: the primary, and "eu-1" (a database of its own) for placement tests.
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  objects = { acme: {}, globex: {} };
  for (const [name, tenant] of [["acme", acme], ["globex", globex]] as const) {
    objects[name].sequence = await createSequence(db, tenant);
    objects[name].instance = await createInstance(db, tenant, objects[name].sequence);
    // A worker task of another instance, handed out the way the engine does it.
    const parked = await createInstance(db, tenant, objects[name].sequence);
    await db.sql.query("UPDATE task_instances SET state = 'running', lease_epoch = 1 WHERE id = $1", [parked]);
    objects[name]["worker task"] = (await insertWorkerTask(db.sql, {
      instanceId: parked, tenantId: tenant.id, leaseEpoch: 1, blockId: "ext", handlerName: "ext_handler",
      queueName: null, params: null, context: null, attempt: 0, timeoutMs: null,
    }))!;
  }
});
afterAll(async () => {
  await db.drop();
  await second.drop();
});

// A valid body for every id route that reads one, so a request gets past the body checks to the
// tenant check. A route added without an entry here fails the coverage test below.
const SAMPLE_BODIES: Record<string, unknown> = {
  "PATCH /instances/{id}/state": { state: "paused" },
  "PATCH /instances/{id}/context": { context: { data: { x: 1 } } },
  "POST /instances/{id}/signals": { signal_type: "pause" },
  "POST /workers/tasks/{id}/complete": { worker_id: "w1", claim_epoch: 1, output: {} },
  "POST /workers/tasks/{id}/fail": { worker_id: "w1", claim_epoch: 1, message: "m" },
  "POST /workers/tasks/{id}/heartbeat": { worker_id: "w1", claim_epoch: 1 },
};

describe("every route that takes an id", () => {
  const idRoutes = ROUTES.filter((route) => route.path.includes("{id}"));
  const name = (route: (typeof ROUTES)[number]) => `${route.method} ${route.path}`;

  it("is covered: a tenant route whose 404 names the object of its id, with a sample body when it reads one", () => {
    expect(idRoutes.length).toBeGreaterThanOrEqual(11);
    for (const route of idRoutes) {
      expect(route.access, name(route)).toBe("tenant");
      expect(["sequence", "instance", "worker task"], name(route)).toContain(route.notFound);
      if (route.body) expect(SAMPLE_BODIES, name(route)).toHaveProperty([name(route)]);
    }
  });

  it("answers another tenant's id, or any request naming another tenant, byte for byte like a missing id", async () => {
    for (const route of idRoutes) {
      const path = (id: string) => route.path.replace("{id}", id);
      const body = SAMPLE_BODIES[name(route)];
      const own = objects.acme[route.notFound]!;
      const theirs = objects.globex[route.notFound]!;
      const before = await snapshot();
      const missing = await call(db, route.method, path(randomUUID()), { key: acme.key, body });
      expect(missing.status, name(route)).toBe(404);
      expect(missing.json()).toEqual({ error: `not found: ${route.notFound} not found` });
      const attempts = [
        call(db, route.method, path(theirs), { key: acme.key, body }),
        call(db, route.method, `${path(theirs)}?tenant_id=${globex.id}`, { key: acme.key, body }),
        call(db, route.method, path(theirs), { key: acme.key, body, headers: { "x-tenant-id": globex.id } }),
        // Its own object, asked for in another tenant's name.
        call(db, route.method, `${path(own)}?tenant_id=${globex.id}`, { key: acme.key, body }),
        call(db, route.method, path(own), { key: acme.key, body, headers: { "x-tenant-id": globex.id } }),
        call(db, route.method, path(own), { key: acme.key, body, headers: { "x-tenant-id": "no-such-tenant" } }),
      ];
      for (const reply of await Promise.all(attempts)) expectSameReply(reply, missing);
      // ...and none of them changed anything.
      expect(await snapshot(), name(route)).toEqual(before);
      if (route.method === "GET") {
        expect((await call(db, route.method, path(own), { key: acme.key })).status, name(route)).toBe(200);
        expect((await call(db, route.method, path(own), { key: acme.key, headers: { "x-tenant-id": acme.id } })).status).toBe(200);
      }
    }
  });

  it("refuses a blank X-Tenant-Id with a 400", async () => {
    const reply = await call(db, "GET", `/instances/${objects.acme.instance}`, { key: acme.key, headers: { "x-tenant-id": " " } });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "invalid argument: X-Tenant-Id must not be blank" });
  });
});

describe("operator reads by id", () => {
  it("find the object on the backend its tenant is placed on, and only there", async () => {
    const key = await operatorKey(db);
    const tenant = await tenantWithKey(db);
    const sequenceId = await createSequence(db, tenant);
    // A copy of an instance on eu-1, where the tenant is not (yet) placed: a stale or future copy.
    const id = randomUUID();
    await second.sql.query(
      "INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at) VALUES ($1, $2, 'eu', $3, 'scheduled', now())",
      [id, tenant.id, sequenceId],
    );
    const missing = await call(db, "GET", `/instances/${randomUUID()}`, { key });
    expectSameReply(await call(db, "GET", `/instances/${id}`, { key }), missing);
    expectSameReply(await call(db, "GET", `/instances/${id}`, { key: tenant.key }), missing);

    await db.storage.advanceTenantPlacement(tenant.id, "eu-1", 2);
    for (const caller of [key, tenant.key]) {
      const reply = await call(db, "GET", `/instances/${id}`, { key: caller });
      expect(reply.status).toBe(200);
      expect(reply.json()).toMatchObject({ id, tenant_id: tenant.id, namespace: "eu" });
    }
    // The rows left on the primary are now out of reach, by id as by tenant.
    const left = objects.acme.instance!;
    await db.storage.advanceTenantPlacement(acme.id, "eu-1", 2);
    expectSameReply(await call(db, "GET", `/instances/${left}`, { key }), missing);
    expectSameReply(await call(db, "GET", `/instances/${left}`, { key: acme.key }), missing);
    await db.sql.query("UPDATE tenant_storage_placements SET backend_id = 'primary', epoch = 3 WHERE tenant_id = $1", [acme.id]);
    expect((await call(db, "GET", `/instances/${left}`, { key })).status).toBe(200);
  });

  it("answer 503 for a tenant placed on a backend this process does not serve", async () => {
    const tenant = await tenantWithKey(db);
    await db.sql.query("UPDATE tenant_storage_placements SET backend_id = 'ap-9', epoch = 2 WHERE tenant_id = $1", [tenant.id]);
    const reply = await call(db, "GET", "/instances", { key: tenant.key });
    expect(reply.status).toBe(503);
    expect(reply.json()).toEqual({ error: "unavailable: tenant storage is not available in this process" });
  });
});

describe("POST /tenants", () => {
  const post = (body: unknown, key: string | undefined) => call(db, "POST", "/tenants", { key, body });

  it("creates a tenant placed on the default backend (201), then answers 200 with it unchanged", async () => {
    const key = await operatorKey(db);
    const id = `new-${randomUUID().slice(0, 8)}`;
    const created = await post({ id, name: "New Co" }, key);
    expect(created.status).toBe(201);
    const body = created.json() as { created_at: string };
    expect(body).toEqual({ id, name: "New Co", created_at: expect.stringMatching(/Z$/) });
    const { rows } = await db.sql.query("SELECT backend_id, epoch FROM tenant_storage_placements WHERE tenant_id = $1", [id]);
    expect(rows).toEqual([{ backend_id: "primary", epoch: 1 }]);
    const audit = await db.sql.query("SELECT action, actor FROM audit_log WHERE tenant_id = $1", [id]);
    expect(audit.rows).toEqual([{ action: "tenant.create", actor: expect.stringMatching(/^bh_/) }]);

    const again = await post({ id, name: "Other name" }, key);
    expect(again.status).toBe(200);
    expect(again.json()).toEqual({ id, name: "New Co", created_at: body.created_at });
    expect((await db.sql.query("SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1", [id])).rows[0].n).toBe(1);

    // The operator can act for it at once; its name defaults to its id.
    expect((await call(db, "POST", "/sequences", { key, body: sequenceJson(id) })).status).toBe(201);
    const bare = `bare-${randomUUID().slice(0, 8)}`;
    expect((await post({ id: bare }, key)).json()).toMatchObject({ id: bare, name: bare });
  });

  it("400 for an id that is not a tenant slug, 422 for a body without one", async () => {
    const key = await operatorKey(db);
    const bad = await post({ id: "Not A Slug" }, key);
    expect(bad.status).toBe(400);
    expect((bad.json() as { error: string }).error).toMatch(/^invalid argument: invalid tenant slug "Not A Slug"/);
    const shapeless = await post({ name: "x" }, key);
    expect(shapeless.status).toBe(422);
    expect(shapeless.contentType).toBe("text/plain; charset=utf-8");
  });

  it("is, for a tenant key, a route that does not exist; without a key, a 401", async () => {
    const id = `nope-${randomUUID().slice(0, 8)}`;
    const refused = await post({ id }, acme.key);
    const unknown = await call(db, "POST", "/no-such-route", { key: acme.key, body: { id } });
    expect(refused.status).toBe(404);
    expectSameReply(refused, unknown);
    expect((await post({ id }, undefined)).status).toBe(401);
    expect(await db.prisma.tenant.findUnique({ where: { id } })).toBeNull();
  });
});
