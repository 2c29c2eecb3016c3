// Who may act for which tenant: "not yours" answers exactly like "missing" on every route that
// takes a path parameter or names a tenant; operator keys act for the tenant they name, read by
// id through the partition router, and create tenants; tenant keys cannot see the operator route.
// The matrix is generated from the route table: a route with a path parameter (or a body) that
// has no case below fails the coverage test.
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertOpenBreaker } from "../../engine/storage/breakers.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createInstance, createSequence, expectSameReply, operatorKey, sequenceJson, tenantWithKey, type CallOptions, type Reply } from "./testing.ts";
import type { Route } from "./route.ts";
import { ROUTES } from "./routes.ts";
import { insertWorkerTask } from "../../engine/storage/execution.ts";
import { asTenantId } from "../../engine/storage/index.ts";

/** Everything a request could change, to show that a refused one changed nothing. */
async function snapshot() {
  const tables = [
    "task_instances", "signals", "worker_tasks", "worker_task_attempts", "sequences",
    "triggers", "circuit_breakers", "circuit_breaker_resets", "breaker_settings", "audit_log", "cron_schedules", "credentials", "instance_checkpoints",
    "trigger_slugs", "trigger_deliveries", "sessions", "resource_pools", "pool_resources",
  ];
  const counts: Record<string, unknown> = {};
  for (const table of tables) counts[table] = (await db.sql.query(`SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) AS h FROM ${table} t`)).rows[0].h;
  return counts;
}

/** A fingerprint of every row of one tenant (each table with a tenant_id): a request that may change the caller's rows must leave these alone. */
async function rowsOf(tenantId: string) {
  const { rows: tables } = await db.sql.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY table_name",
  );
  const hashes: Record<string, unknown> = {};
  for (const { table_name: table } of tables) {
    hashes[table] = (await db.sql.query(`SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) AS h FROM "${table}" t WHERE tenant_id = $1`, [tenantId])).rows[0].h;
  }
  return hashes;
}

type IdKind = "sequence" | "instance" | "worker task" | "cron schedule" | "session" | "pool";
/** A tenant's objects, by what fills a path parameter: `{id}` by its kind, `{slug}`, `{handler}`, `{tenant_id}`, `{block_id}`. */
type Objects = Record<IdKind | "slug" | "handler" | "tenant_id" | "block_id" | "credential_id" | "sequence name" | "key" | "pool_id" | "resource_id", string>;

let second: TestDatabase;
let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let objects: Record<"acme" | "globex", Objects>;

const hex = () => randomBytes(4).toString("hex");
/** Values of the same form as the fixtures' that name nothing. */
const random = (): Objects => ({
  sequence: randomUUID(), instance: randomUUID(), "worker task": randomUUID(), "cron schedule": randomUUID(),
  slug: `slug-${hex()}`, handler: `handler-${hex()}`, tenant_id: `t-${hex()}`, block_id: `block-${hex()}`, "sequence name": `seq-${hex()}`,
  credential_id: `cred-${hex()}`, session: randomUUID(), key: `session-${hex()}`,
  pool: randomUUID(), pool_id: randomUUID(), resource_id: randomUUID(),
});

beforeAll(async () => {
  // Two backends: the primary, and "eu-1" (a database of its own) for placement tests.
  second = await freshDatabase();
  // The matrix sends hundreds of requests with one key within a second or two: a request-rate
  // burst to match, so every answer is the route's own (the rate has its own test, server/request-rate.int.test.ts).
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}`, BULKHEAD_API_BURST: "100000" });
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  objects = { acme: {} as Objects, globex: {} as Objects };
  for (const [name, tenant] of [["acme", acme], ["globex", globex]] as const) {
    const mine = objects[name];
    mine.tenant_id = tenant.id;
    // The one top-level block of sequenceJson's sequences.
    mine.block_id = "one";
    mine.sequence = await createSequence(db, tenant);
    mine["sequence name"] = (await db.sql.query("SELECT name FROM sequences WHERE id = $1", [mine.sequence])).rows[0].name;
    mine.instance = await createInstance(db, tenant, mine.sequence);
    // A worker task of another instance, handed out the way the engine does it.
    const parked = await createInstance(db, tenant, mine.sequence);
    await db.sql.query("UPDATE task_instances SET state = 'running', lease_epoch = 1 WHERE id = $1", [parked]);
    mine["worker task"] = (await insertWorkerTask(db.sql, {
      instanceId: parked, tenantId: asTenantId(tenant.id), leaseEpoch: 1, blockId: "ext", handlerName: "ext_handler",
      queueName: null, params: null, context: null, attempt: 0, timeoutMs: null,
    }))!;
    mine.slug = await newTrigger(tenant, mine["sequence name"]);
    mine["cron schedule"] = await newCronSchedule(tenant, mine.sequence);
    mine.credential_id = await newCredential(tenant);
    [mine.session, mine.key] = await newSession(tenant);
    mine.pool = mine.pool_id = await newPool(tenant);
    mine.resource_id = await newPoolResource(tenant, mine.pool);
    mine.handler = await openBreaker(tenant.id);
  }
});

/** A new trigger of the tenant's, through the API; its slug. Pinned, so it still fires once the matrix has deprecated the sequence. */
async function newTrigger(tenant: { key: string }, sequenceName: string): Promise<string> {
  const slug = random().slug;
  const made = await call(db, "POST", "/triggers", { key: tenant.key, body: { slug, sequence_name: sequenceName, version: 1 } });
  expect(made.status).toBe(201);
  return slug;
}

/** A new credential of the tenant's, through the API; its id. */
async function newCredential(tenant: { key: string }): Promise<string> {
  const id = random().credential_id;
  const made = await call(db, "POST", "/credentials", { key: tenant.key, body: { id, name: "Vendor", value: "s3cret" } });
  expect(made.status).toBe(201);
  return id;
}

/** A new session of the tenant's, through the API; its id and key. */
async function newSession(tenant: { id: string; key: string }): Promise<[string, string]> {
  const key = random().key;
  const made = await call(db, "POST", "/sessions", { key: tenant.key, body: { tenant_id: tenant.id, session_key: key } });
  expect(made.status).toBe(201);
  return [(made.json() as { id: string }).id, key];
}

/** A new resource pool of the tenant's, through the API; its id. */
async function newPool(tenant: { key: string }): Promise<string> {
  const made = await call(db, "POST", "/pools", { key: tenant.key, body: { name: "senders" } });
  expect(made.status).toBe(201);
  return (made.json() as { id: string }).id;
}

/** A new resource of the tenant's pool, through the API; its id. */
async function newPoolResource(tenant: { key: string }, poolId: string): Promise<string> {
  const made = await call(db, "POST", `/pools/${poolId}/resources`, { key: tenant.key, body: { resource_key: "sender-1", name: "Sender 1" } });
  expect(made.status).toBe(201);
  return (made.json() as { id: string }).id;
}

/** A new cron schedule of the tenant's, through the API; its id. */
async function newCronSchedule(tenant: { id: string; key: string }, sequenceId: string): Promise<string> {
  const made = await call(db, "POST", "/cron", { key: tenant.key, body: cronBody(tenant.id, sequenceId) });
  expect(made.status).toBe(201);
  return (made.json() as { id: string }).id;
}

const cronBody = (tenantId: string, sequenceId: string) => ({ tenant_id: tenantId, namespace: "default", sequence_id: sequenceId, cron_expr: "0 0 * * * *" });

/** A new Open breaker of the tenant's, as an engine records one; its handler. */
async function openBreaker(tenantId: string): Promise<string> {
  const handler = random().handler;
  await upsertOpenBreaker(db.sql, { tenantId, handler, failureCount: 5, openedAt: new Date(Date.now() - 1_000) });
  return handler;
}
afterAll(async () => {
  await db.drop();
  await second.drop();
});

// ------------------------------------------------------------------ the route matrix

interface RouteCase {
  /** The object `{id}` names (what the route's 404 is about). */
  id?: IdKind;
  /** A valid body, naming `tenantId` where the body can name one, so a request gets past the body checks to the tenant check. */
  body?(tenantId: string): unknown;
  /**
   * The route's 404 names the id it was asked for (wire-format M: `cron_schedule <id>`), for a
   * refused tenant too: answers are compared with the ids swapped for a placeholder.
   */
  namesId?: true;
}

const lease = (tenantId: string) => ({ tenant_id: tenantId, worker_id: "w1", claim_epoch: 1 });
const newInstance = (tenantId: string) => ({ sequence_id: objects.acme.sequence, tenant_id: tenantId, namespace: "default" });

/**
 * Every tenant route that has a path parameter or reads a body, keyed "METHOD path". A route
 * added with either and without an entry here fails the coverage test.
 */
const CASES: Record<string, RouteCase> = {
  "POST /sequences": { body: (tenantId) => sequenceJson(tenantId) },
  "GET /sequences/{id}": { id: "sequence" },
  "POST /sequences/{id}/deprecate": { id: "sequence" },
  "POST /sequences/migrate-instance": { body: () => ({ instance_id: objects.acme.instance, target_sequence_id: objects.acme.sequence }) },
  // Own sequences are production: unpublished is allowed (204), and is the last move a version makes.
  "POST /sequences/{id}/status": { id: "sequence", body: () => ({ status: "unpublished" }) },
  // Own sequences have a scheduled instance: 409, past the lookup that foreign and random fail.
  "DELETE /sequences/{id}": { id: "sequence" },
  "POST /instances": { body: newInstance },
  "POST /instances/batch": { body: (tenantId) => ({ instances: [newInstance(tenantId)] }) },
  "GET /instances/{id}": { id: "instance" },
  "GET /instances/{id}/outputs": { id: "instance" },
  "GET /instances/{id}/children": { id: "instance" },
  "GET /instances/{id}/logs": { id: "instance" },
  "POST /instances/{id}/inject-blocks": { id: "instance", body: () => ({ blocks: [{ type: "step", id: `injected-${hex()}`, handler: "noop" }] }) },
  "POST /instances/{id}/checkpoints": { id: "instance", body: () => ({ checkpoint_data: { step: 1 } }) },
  "GET /instances/{id}/checkpoints": { id: "instance" },
  // Own instances have a checkpoint by now (the POST above runs first): 200.
  "GET /instances/{id}/checkpoints/latest": { id: "instance" },
  "POST /instances/{id}/checkpoints/prune": { id: "instance", body: () => ({ keep: 5 }) },
  "PATCH /instances/{id}/state": { id: "instance", body: () => ({ state: "paused" }) },
  "PATCH /instances/{id}/context": { id: "instance", body: () => ({ context: { data: { x: 1 } } }) },
  "POST /instances/{id}/signals": { id: "instance", body: () => ({ signal_type: "pause" }) },
  "POST /instances/{id}/retry": { id: "instance" },
  // Own instances are scheduled: 400 (not resumable), past the lookup that foreign and random fail.
  "POST /instances/{id}/resume-from/{block_id}": { id: "instance", body: () => ({ context: { x: 1 } }) },
  "PATCH /instances/bulk/state": { body: (tenantId) => ({ filter: { tenant_id: tenantId }, state: "paused" }) },
  "PATCH /instances/bulk/reschedule": { body: (tenantId) => ({ filter: { tenant_id: tenantId }, offset_secs: 60 }) },
  "POST /instances/batch-action": { body: (tenantId) => ({ filter: { tenant_id: tenantId }, action: "cancel" }) },
  "GET /instances/{id}/tree": { id: "instance" },
  "GET /instances/{id}/stream": { id: "instance" },
  "GET /instances/{id}/audit": { id: "instance" },
  "POST /workers/tasks/poll": { body: (tenantId) => ({ tenant_id: tenantId, handler_name: "ext_handler", worker_id: "w1" }) },
  "POST /workers/tasks/poll/queue": {
    body: (tenantId) => ({ tenant_id: tenantId, handler_name: "ext_handler", worker_id: "w1", queue_name: "q" }),
  },
  "POST /workers/tasks/{id}/complete": { id: "worker task", body: (tenantId) => ({ ...lease(tenantId), output: {} }) },
  "POST /workers/tasks/{id}/fail": { id: "worker task", body: (tenantId) => ({ ...lease(tenantId), message: "m" }) },
  "POST /workers/tasks/{id}/heartbeat": { id: "worker task", body: lease },
  "GET /workers/tasks/{id}/attempts": { id: "worker task" },
  "GET /tenants/{tenant_id}/circuit-breakers": {},
  "GET /tenants/{tenant_id}/circuit-breakers/{handler}": {},
  // 200 for any handler, open or not (wire-format I): foreign and random alike.
  "POST /tenants/{tenant_id}/circuit-breakers/{handler}/reset": {},
  "POST /triggers": { body: (tenantId) => ({ tenant_id: tenantId, slug: random().slug, sequence_name: objects.acme["sequence name"] }) },
  "GET /triggers/{slug}": { namesId: true },
  "POST /triggers/{slug}/fire": { namesId: true, body: () => ({ order: 1 }) },
  // Last of the routes naming a trigger: it deletes the caller's own.
  "DELETE /triggers/{slug}": { namesId: true },
  "POST /cron": { body: (tenantId) => cronBody(tenantId, objects.acme.sequence) },
  "GET /cron/{id}": { id: "cron schedule", namesId: true },
  "GET /cron/{id}/next-fires": { id: "cron schedule", namesId: true },
  "PUT /cron/{id}": { id: "cron schedule", namesId: true, body: () => ({ enabled: true }) },
  // M: not routed (405) for the caller's own schedule; refused tenants still read as missing.
  "PATCH /cron/{id}": { id: "cron schedule", namesId: true },
  // Last of the routes naming a schedule: it deletes the caller's own.
  "DELETE /cron/{id}": { id: "cron schedule", namesId: true },
  "POST /debug/template": { body: () => ({ template: "{{context.data.x}}", context_data: { x: 1 } }) },
  "POST /sessions": { body: (tenantId) => ({ tenant_id: tenantId, session_key: random().key }) },
  "GET /sessions/{id}": { id: "session" },
  "GET /sessions/by-key/{tenant_id}/{key}": {},
  "PATCH /sessions/{id}/data": { id: "session", body: () => ({ data: { x: 1 } }) },
  "PATCH /sessions/{id}/state": { id: "session", body: () => ({ state: "active" }) },
  "GET /sessions/{id}/instances": { id: "session" },
  "POST /credentials": { body: (tenantId) => ({ tenant_id: tenantId, id: random().credential_id, name: "n", value: "v" }) },
  "GET /credentials/{credential_id}": { namesId: true },
  "PATCH /credentials/{credential_id}": { namesId: true, body: () => ({ description: "changed" }) },
  // Last of the routes naming a credential: it deletes the caller's own.
  "DELETE /credentials/{credential_id}": { namesId: true },
  "POST /pools": { body: (tenantId) => ({ tenant_id: tenantId, name: "pool" }) },
  "GET /pools/{id}": { id: "pool" },
  "GET /pools/{pool_id}/resources": {},
  "POST /pools/{pool_id}/resources": { body: () => ({ resource_key: "k", name: "n" }) },
  "PUT /pools/{pool_id}/resources/{resource_id}": { body: () => ({ enabled: true }) },
  // The pool is looked for first: another tenant's pool answers a random one's 404 (pool).
  "DELETE /pools/{pool_id}/resources/{resource_id}": {},
  // Last of the routes naming a pool: it deletes the caller's own, with its resources.
  "DELETE /pools/{id}": { id: "pool" },
};

const PARAMETER = /\{([a-z_]+)\}/g;
const name = (route: Route) => `${route.method} ${route.path}`;
const parameters = (route: Route) => [...route.path.matchAll(PARAMETER)].map((match) => match[1]!);
const tenantRoutes = ROUTES.filter((route) => route.access === "tenant");
const parameterised = tenantRoutes.filter((route) => parameters(route).length > 0);
/** Public routes with a path parameter: the webhook (a slug alone names its tenant) and the 405s of L. */
const PUBLIC_WITH_PARAMETERS = ["PUT /triggers/{slug}", "PATCH /triggers/{slug}", "POST /webhooks/{slug}"];
/** Routes whose parameters name objects, not only the tenant. */
const objectRoutes = parameterised.filter((route) => parameters(route).some((p) => p !== "tenant_id"));

/** The route's path with its parameters filled from `values` (`{id}` by the kind its case names). */
function pathOf(route: Route, values: Objects): string {
  const kind = CASES[name(route)]?.id;
  return route.path.replace(PARAMETER, (_, param: string) => encodeURIComponent(param === "id" ? values[kind!] : values[param as keyof Objects]));
}

/** Calls `route` with acme's key, its body naming `bodyTenant` (acme by default). */
function send(route: Route, path: string, options: Omit<CallOptions, "key" | "body"> & { bodyTenant?: string } = {}): Promise<Reply> {
  const body = CASES[name(route)]?.body?.(options.bodyTenant ?? acme.id);
  return call(db, route.method, path, { key: acme.key, body, headers: options.headers });
}

/** Whether the route's body can name a tenant (so a body naming another one is a form to try). */
function bodyNamesTenant(route: Route): boolean {
  const sample = CASES[name(route)]?.body?.(globex.id);
  if (!route.body || sample === undefined) return false;
  return route.body.tenants(route.body.parse(sample)).includes(globex.id);
}

/** The route's path parameters filled from `values`, as the dispatcher decodes them. */
const paramsOf = (route: Route, values: Objects) =>
  Object.fromEntries(parameters(route).map((param) => [param, param === "id" ? values[CASES[name(route)]!.id!] : values[param as keyof Objects]]));

/** The reply with the ids of `values` the route names swapped for a placeholder, for a route whose 404 names them (namesId). */
function withoutIds(route: Route, reply: Reply, ...values: Objects[]): Reply {
  const c = CASES[name(route)];
  if (!c?.namesId) return reply;
  return { ...reply, text: values.reduce((text, v) => Object.values(paramsOf(route, v)).reduce((out, id) => out.replaceAll(id, "<id>"), text), reply.text) };
}

/** The body of the route's 404 for a path filled from `values`. */
function notFoundBody(route: Route, values: Objects) {
  return { error: route.missing ? `not found: ${route.missing(paramsOf(route, values)).message}` : `not found: ${route.notFound} not found` };
}

describe("the route matrix", () => {
  it("is covered: every route with a path parameter, or a body, has a case; an {id} names the object its 404 is about", () => {
    expect(parameterised.length).toBeGreaterThanOrEqual(18);
    const uncovered = tenantRoutes.filter((route) => (parameters(route).length > 0 || route.body) && !(name(route) in CASES));
    const publicWithParameters = ROUTES.filter((route) => route.access === "public" && parameters(route).length > 0).map(name);
    expect(publicWithParameters, "public routes with a path parameter").toEqual(PUBLIC_WITH_PARAMETERS);
    expect(uncovered.map(name), "routes without an entry in CASES").toEqual([]);
    const gone = Object.keys(CASES).filter((key) => !ROUTES.some((route) => name(route) === key));
    expect(gone, "CASES entries of routes that no longer exist").toEqual([]);
    for (const route of parameterised) {
      for (const param of parameters(route)) expect(["id", "slug", "handler", "tenant_id", "block_id", "credential_id", "key", "pool_id", "resource_id"], `${name(route)}: {${param}}`).toContain(param);
      if (route.path.includes("{id}")) expect(CASES[name(route)]!.id, name(route)).toBe(route.notFound);
    }
    for (const route of tenantRoutes) if (route.body) expect(CASES[name(route)]?.body, name(route)).toBeDefined();
  });

  it("fingerprints every table a tenant's rows live in, to show a request changed nothing of another tenant", async () => {
    const tables = ["task_instances", "signals", "worker_tasks", "sequences", "triggers", "circuit_breakers", "circuit_breaker_resets", "audit_log"];
    expect(Object.keys(await rowsOf(globex.id))).toEqual(expect.arrayContaining(tables));
  });

  it("answers a tenant route naming another tenant, in any place, byte for byte like one naming a tenant that does not exist", async () => {
    for (const route of tenantRoutes) {
      const own = pathOf(route, objects.acme);
      const theirs = pathOf(route, objects.globex);
      const before = await snapshot();
      const missing = await send(route, own, { headers: { "x-tenant-id": random().tenant_id } });
      expect(missing.status, name(route)).toBe(404);
      expect(missing.json(), name(route)).toEqual(notFoundBody(route, objects.acme));
      const attempts = [
        send(route, `${own}?tenant_id=${globex.id}`),
        send(route, own, { headers: { "x-tenant-id": globex.id } }),
        send(route, own, { headers: { "x-tenant-id": "no-such-tenant" } }),
        send(route, `${own}?tenant_id=no-such-tenant`),
        // The other tenant's own objects, asked for in its name.
        send(route, `${theirs}?tenant_id=${globex.id}`),
        send(route, theirs, { headers: { "x-tenant-id": globex.id } }),
      ];
      if (bodyNamesTenant(route)) attempts.push(send(route, own, { bodyTenant: globex.id }), send(route, own, { bodyTenant: "no-such-tenant" }));
      if (parameters(route).includes("tenant_id")) {
        attempts.push(
          send(route, pathOf(route, { ...objects.acme, tenant_id: globex.id })),
          send(route, theirs),
          send(route, pathOf(route, random())),
        );
      }
      for (const reply of await Promise.all(attempts)) {
        expectSameReply(withoutIds(route, reply, objects.acme, objects.globex), withoutIds(route, missing, objects.acme));
      }
      // ...and none of them changed anything, of anyone.
      expect(await snapshot(), name(route)).toEqual(before);
    }
  });

  it("answers another tenant's id, slug or handler byte for byte like a random one, changing nothing of that tenant", async () => {
    for (const route of objectRoutes) {
      // In the caller's own tenant (where the path names one): only the objects differ. A fresh
      // slug and handler for each route, so none depends on what an earlier one did.
      const foreignValues = {
        ...objects.globex,
        slug: await newTrigger(globex, objects.globex["sequence name"]),
        handler: await openBreaker(globex.id),
        tenant_id: acme.id,
      };
      const randomValues = { ...random(), tenant_id: acme.id };
      const before = await rowsOf(globex.id);
      const foreign = await send(route, pathOf(route, foreignValues));
      const missing = await send(route, pathOf(route, randomValues));
      expectSameReply(withoutIds(route, foreign, foreignValues), withoutIds(route, missing, randomValues));
      // Where "missing" is a 404, it is the very answer naming another tenant gets (above).
      if (missing.status === 404) expect(missing.json(), name(route)).toEqual(notFoundBody(route, randomValues));
      expect(await rowsOf(globex.id), name(route)).toEqual(before);
    }
  });

  it("serves the caller's own objects on every parameterised route, with or without naming its own tenant", async () => {
    for (const route of parameterised) {
      const own = pathOf(route, objects.acme);
      const reply = await send(route, own);
      expect(reply.status, `${name(route)}: ${reply.text}`).not.toBe(404);
      expect(reply.status, `${name(route)}: ${reply.text}`).toBeLessThan(500);
      if (route.method === "GET") {
        expect(reply.status, name(route)).toBe(200);
        expect((await send(route, own, { headers: { "x-tenant-id": acme.id } })).status, name(route)).toBe(200);
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
  it("ask for the tenant when several tenants have a sequence with that id, and serve it once named", async () => {
    const key = await operatorKey(db);
    const [one, two] = [await tenantWithKey(db), await tenantWithKey(db)];
    const shared = sequenceJson(one.id);
    expect((await call(db, "POST", "/sequences", { key: one.key, body: shared })).status).toBe(201);
    expect((await call(db, "POST", "/sequences", { key: two.key, body: { ...shared, tenant_id: two.id } })).status).toBe(201);
    const unnamed = await call(db, "GET", `/sequences/${shared.id}`, { key });
    expect(unnamed.status).toBe(400);
    expect(unnamed.json()).toEqual({ error: "invalid argument: several tenants have a sequence with this id: name the tenant (X-Tenant-Id header or tenant_id)" });
    const named = await call(db, "GET", `/sequences/${shared.id}`, { key, headers: { "x-tenant-id": two.id } });
    expect(named.json()).toMatchObject({ id: shared.id, tenant_id: two.id });
  });

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

  it("400 for an id that is not a tenant slug or a name over 200 characters, 422 for a body without one", async () => {
    const key = await operatorKey(db);
    const bad = await post({ id: "Not A Slug" }, key);
    expect(bad.status).toBe(400);
    expect((bad.json() as { error: string }).error).toMatch(/^invalid argument: invalid tenant slug "Not A Slug"/);
    const long = await post({ id: `long-${randomUUID().slice(0, 8)}`, name: "n".repeat(201) }, key);
    expect([long.status, long.json()]).toEqual([400, { error: "invalid argument: tenant name must be at most 200 characters" }]);
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
