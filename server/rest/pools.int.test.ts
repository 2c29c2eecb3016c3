// Resource pools (wire-format U) over the dispatcher and a real PostgreSQL: every route's shapes,
// defaults, codes and words; a pool's resources go with it; DELETE of a resource is a 204 for an
// id that is not (or no longer) there and a 404 for one in another pool; duplicate keys are
// allowed. Another tenant's pool or resource ids answer byte for byte like missing ones and
// change nothing, and GET /pools lists the request tenant's pools only.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, expectSameReply, operatorKey, tenantWithKey, type Reply } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let opKey: string;

beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  opKey = await operatorKey(db);
});
afterAll(() => db.drop());

interface Pool {
  id: string;
  tenant_id: string;
  name: string;
  strategy: string;
}
interface Resource {
  id: string;
  pool_id: string;
  resource_key: string;
  name: string;
}

const send = (method: string, path: string, body?: unknown, key = acme.key, headers?: Record<string, string>) => call(db, method, path, { key, body, headers });
const answer = (reply: Reply) => ({ status: reply.status, text: reply.text });
const notFound = (what: string) => ({ status: 404, text: `{"error":"not found: ${what} not found"}` });
const invalid = (message: string) => ({ status: 400, text: JSON.stringify({ error: `invalid argument: ${message}` }) });

async function newPool(tenant = acme, body: Record<string, unknown> = {}): Promise<Pool> {
  const reply = await send("POST", "/pools", { name: `pool-${randomUUID().slice(0, 8)}`, ...body }, tenant.key);
  expect(reply.status, reply.text).toBe(201);
  return reply.json() as Pool;
}

async function newResource(poolId: string, tenant = acme, body: Record<string, unknown> = {}): Promise<Resource> {
  const reply = await send("POST", `/pools/${poolId}/resources`, { resource_key: "sender", name: "Sender", ...body }, tenant.key);
  expect(reply.status, reply.text).toBe(201);
  return reply.json() as Resource;
}

/** Every pool and resource row, to show a request changed nothing. */
async function rows() {
  const { rows } = await db.sql.query(
    `SELECT (SELECT md5(string_agg(p::text, ',' ORDER BY p::text)) FROM resource_pools p) AS pools,
            (SELECT md5(string_agg(r::text, ',' ORDER BY r::text)) FROM pool_resources r) AS resources`,
  );
  return rows[0];
}

const resourceCount = async (poolId: string) => (await db.sql.query("SELECT count(*)::int AS n FROM pool_resources WHERE pool_id = $1", [poolId])).rows[0].n;

describe("POST /pools and GET /pools", () => {
  it("creates a pool of the request tenant with U's defaults (201), ignoring extra fields", async () => {
    const reply = await send("POST", "/pools", { tenant_id: acme.id, name: "senders", max_size: 10 });
    expect(reply.status).toBe(201);
    const pool = reply.json() as Pool & { created_at: string; updated_at: string };
    expect(pool).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/), tenant_id: acme.id, name: "senders",
      strategy: "round_robin", round_robin_index: 0, created_at: expect.stringMatching(/Z$/), updated_at: pool.created_at,
    });
    expect((await send("GET", `/pools/${pool.id}`)).json()).toEqual(pool);
    // tenant_id absent or blank is the request tenant (the key rules); each strategy is taken.
    expect((await send("POST", "/pools", { name: "w", strategy: "weighted" })).json()).toMatchObject({ tenant_id: acme.id, strategy: "weighted" });
    expect((await send("POST", "/pools", { tenant_id: "", name: "r", strategy: "random" })).json()).toMatchObject({ tenant_id: acme.id, strategy: "random" });
  });

  it("refuses a body of the wrong shape with a plain-text 422", async () => {
    for (const body of [{}, { name: 5 }, { name: "p", strategy: "least_used" }, { name: "p", strategy: null }, { name: "x".repeat(256) }, { name: "p", tenant_id: 7 }]) {
      const reply = await send("POST", "/pools", body);
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.contentType).toBe("text/plain; charset=utf-8");
    }
    expect((await send("POST", "/pools", { name: "x".repeat(255) })).status).toBe(201);
  });

  it("lists the request tenant's pools only, by name", async () => {
    const tenant = await tenantWithKey(db);
    const other = await tenantWithKey(db);
    await newPool(tenant, { name: "b-pool" });
    await newPool(tenant, { name: "a-pool" });
    await newPool(other, { name: "a-other" });
    const listed = await send("GET", "/pools", undefined, tenant.key);
    expect(listed.status).toBe(200);
    expect((listed.json() as Pool[]).map((p) => [p.name, p.tenant_id])).toEqual([["a-pool", tenant.id], ["b-pool", tenant.id]]);
    expect((await send("GET", `/pools?tenant_id=${tenant.id}`, undefined, tenant.key)).status).toBe(200);
    expect((await send("GET", "/pools", undefined, (await tenantWithKey(db)).key)).json()).toEqual([]);
  });

  it("an operator key must name the tenant with X-Tenant-Id, and then acts for it", async () => {
    const required = invalid("X-Tenant-Id header is required");
    expect(answer(await send("GET", "/pools", undefined, opKey))).toEqual(required);
    expect(answer(await send("GET", `/pools?tenant_id=${acme.id}`, undefined, opKey))).toEqual(required);
    expect(answer(await send("POST", "/pools", { tenant_id: acme.id, name: "op" }, opKey))).toEqual(required);
    const pool = await newPool();
    expect(answer(await send("GET", `/pools/${pool.id}`, undefined, opKey))).toEqual(required);
    expect(answer(await send("GET", `/pools/${pool.id}/resources`, undefined, opKey))).toEqual(required);
    const header = { "x-tenant-id": acme.id };
    const made = await send("POST", "/pools", { name: "by-operator" }, opKey, header);
    expect(made.json()).toMatchObject({ tenant_id: acme.id, name: "by-operator" });
    expect((await send("GET", "/pools", undefined, opKey, header)).json()).toEqual(expect.arrayContaining([expect.objectContaining({ id: pool.id })]));
    expect((await send("GET", `/pools/${pool.id}`, undefined, opKey, header)).status).toBe(200);
    expect(answer(await send("GET", `/pools/${pool.id}`, undefined, opKey, { "x-tenant-id": globex.id }))).toEqual(notFound("pool"));
  });
});

describe("GET and DELETE /pools/{id}", () => {
  it("reads a pool, also by an upper-case id; 404 for one that does not exist; 400 for an id that is not a UUID", async () => {
    const pool = await newPool();
    expect((await send("GET", `/pools/${pool.id.toUpperCase()}`)).json()).toEqual((await send("GET", `/pools/${pool.id}`)).json());
    expect(answer(await send("GET", `/pools/${randomUUID()}`))).toEqual(notFound("pool"));
    const malformed = await send("GET", "/pools/not-a-uuid");
    expect({ ...answer(malformed), type: malformed.contentType }).toEqual({ status: 400, text: "Invalid URL: `id` is not a UUID", type: "text/plain; charset=utf-8" });
  });

  it("deletes the pool and its resources (204), and only them; then it is missing", async () => {
    const pool = await newPool();
    const kept = await newPool();
    await newResource(pool.id);
    await newResource(pool.id, acme, { resource_key: "other" });
    await newResource(kept.id);
    const reply = await send("DELETE", `/pools/${pool.id}`);
    expect({ status: reply.status, text: reply.text }).toEqual({ status: 204, text: "" });
    expect(await resourceCount(pool.id)).toBe(0);
    expect(await resourceCount(kept.id)).toBe(1);
    expect(answer(await send("GET", `/pools/${pool.id}`))).toEqual(notFound("pool"));
    expect(answer(await send("GET", `/pools/${pool.id}/resources`))).toEqual(notFound("pool"));
    expect(answer(await send("DELETE", `/pools/${pool.id}`))).toEqual(notFound("pool"));
    expect(answer(await send("DELETE", `/pools/${randomUUID()}`))).toEqual(notFound("pool"));
    const audit = await db.sql.query("SELECT action, details FROM audit_log WHERE tenant_id = $1 AND details->>'id' = $2 ORDER BY id", [acme.id, pool.id]);
    expect(audit.rows).toEqual([
      { action: "pool.create", details: { id: pool.id, strategy: "round_robin" } }, { action: "pool.delete", details: { id: pool.id } },
    ]);
  });

  it("leaves no resource behind when adds race the delete: each add lands before it (and goes) or is a 404", async () => {
    const pool = await newPool();
    const adds = Array.from({ length: 12 }, (_, i) => send("POST", `/pools/${pool.id}/resources`, { resource_key: `k${i}`, name: `n${i}` }));
    const deleted = send("DELETE", `/pools/${pool.id}`);
    const statuses = (await Promise.all(adds)).map((reply) => reply.status);
    expect((await deleted).status).toBe(204);
    expect(statuses.every((status) => status === 201 || status === 404)).toBe(true);
    expect(await resourceCount(pool.id)).toBe(0);
  });
});

describe("/pools/{pool_id}/resources", () => {
  it("adds a resource with U's defaults (201), and takes every field", async () => {
    const pool = await newPool();
    const reply = await send("POST", `/pools/${pool.id}/resources`, { resource_key: "acct-1", name: "Account 1" });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), pool_id: pool.id, resource_key: "acct-1", name: "Account 1", weight: 1, enabled: true,
      daily_cap: 0, daily_usage: 0, daily_usage_date: null, warmup_start: null, warmup_days: 0, warmup_start_cap: 0, created_at: expect.stringMatching(/Z$/),
    });
    const full = await send("POST", `/pools/${pool.id}/resources`, {
      resource_key: "acct-2", name: "Account 2", weight: 4_294_967_295, daily_cap: 500, warmup_start: "2026-02-28", warmup_days: 14, warmup_start_cap: 20,
    });
    expect(full.json()).toMatchObject({ weight: 4_294_967_295, daily_cap: 500, warmup_start: "2026-02-28", warmup_days: 14, warmup_start_cap: 20, enabled: true });
    // null warmup_start is no warm-up start.
    expect((await send("POST", `/pools/${pool.id}/resources`, { resource_key: "k", name: "n", warmup_start: null })).json()).toMatchObject({ warmup_start: null });
  });

  it("allows duplicate resource keys in one pool", async () => {
    const pool = await newPool();
    const one = await newResource(pool.id, acme, { resource_key: "same", name: "one" });
    const two = await newResource(pool.id, acme, { resource_key: "same", name: "two" });
    expect(one.id).not.toBe(two.id);
    const listed = (await send("GET", `/pools/${pool.id}/resources`)).json() as Resource[];
    expect(listed.map((r) => [r.resource_key, r.name])).toEqual([["same", "one"], ["same", "two"]]);
  });

  it("lists a pool's resources by name (200), [] for none, 404 for a missing pool", async () => {
    const pool = await newPool();
    expect((await send("GET", `/pools/${pool.id}/resources`)).json()).toEqual([]);
    await newResource(pool.id, acme, { name: "zeta" });
    await newResource(pool.id, acme, { name: "alpha" });
    await newResource((await newPool()).id, acme, { name: "elsewhere" });
    const listed = await send("GET", `/pools/${pool.id}/resources`);
    expect(listed.status).toBe(200);
    expect((listed.json() as Resource[]).map((r) => [r.name, r.pool_id])).toEqual([["alpha", pool.id], ["zeta", pool.id]]);
    expect(answer(await send("GET", `/pools/${randomUUID()}/resources`))).toEqual(notFound("pool"));
  });

  it("refuses what U refuses, with its words, before looking for the pool", async () => {
    const pool = await newPool();
    const path = `/pools/${pool.id}/resources`;
    const before = await resourceCount(pool.id);
    const cases: [Record<string, unknown>, { status: number; text: string }][] = [
      [{ resource_key: "", name: "n" }, invalid("resource_key must be 1-255 characters")],
      [{ resource_key: "k".repeat(256), name: "n" }, invalid("resource_key must be 1-255 characters")],
      [{ resource_key: "k", name: "" }, invalid("name must be 1-255 characters")],
      [{ resource_key: "k", name: "n".repeat(256) }, invalid("name must be 1-255 characters")],
      [{ resource_key: "k", name: "n", weight: 0 }, invalid("weight must be at least 1")],
      [{ resource_key: "k", name: "n", warmup_start: "2026-02-30" }, invalid("invalid warmup_start date: 2026-02-30 is not a day of the calendar")],
      [{ resource_key: "k", name: "n", warmup_start: "0000-01-01" }, invalid("invalid warmup_start date: 0000-01-01 is not a day of the calendar")],
      [{ resource_key: "k", name: "n", warmup_start: "1 March 2026" }, invalid("invalid warmup_start date: expected YYYY-MM-DD")],
      [{ resource_key: "k", name: "n", warmup_start: "2026-3-1" }, invalid("invalid warmup_start date: expected YYYY-MM-DD")],
    ];
    for (const [body, expected] of cases) {
      expect(answer(await send("POST", path, body)), JSON.stringify(body).slice(0, 80)).toEqual(expected);
      // The same for a pool that does not exist: the body is checked first.
      expect(answer(await send("POST", `/pools/${randomUUID()}/resources`, body))).toEqual(expected);
    }
    for (const body of [{ name: "n" }, { resource_key: "k" }, { resource_key: "k", name: "n", weight: -1 }, { resource_key: "k", name: "n", weight: 1.5 },
      { resource_key: "k", name: "n", daily_cap: 4_294_967_296 }, { resource_key: "k", name: "n", weight: null }, { resource_key: "k", name: "n", warmup_start: 20260301 }]) {
      const reply = await send("POST", path, body);
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.contentType).toBe("text/plain; charset=utf-8");
    }
    expect(await resourceCount(pool.id)).toBe(before);
    // The limits themselves are allowed.
    await newResource(pool.id, acme, { resource_key: "k".repeat(255), name: "n".repeat(255), warmup_start: "2028-02-29" });
    expect(answer(await send("POST", `/pools/${randomUUID()}/resources`, { resource_key: "k", name: "n" }))).toEqual(notFound("pool"));
    const malformed = await send("POST", "/pools/nope/resources", { resource_key: "k", name: "n" });
    expect({ ...answer(malformed), type: malformed.contentType }).toEqual({ status: 400, text: "Invalid URL: `pool_id` is not a UUID", type: "text/plain; charset=utf-8" });
  });
});

describe("PUT /pools/{pool_id}/resources/{resource_id}", () => {
  it("changes the fields given; absent and null ones stay as they are", async () => {
    const pool = await newPool();
    const resource = await newResource(pool.id, acme, { resource_key: "acct", name: "Acct", daily_cap: 10, warmup_start: "2026-01-01", warmup_days: 5 });
    const path = `/pools/${pool.id}/resources/${resource.id}`;
    const reply = await send("PUT", path, { name: "Renamed", enabled: false, weight: 3, daily_cap: null });
    expect(reply.status).toBe(200);
    const changed = { ...resource, name: "Renamed", enabled: false, weight: 3 };
    expect(reply.json()).toEqual(changed);
    expect((await send("PUT", path, {})).json()).toEqual(changed);
    const all = await send("PUT", path, { daily_cap: 0, warmup_start: "2026-06-30", warmup_days: 30, warmup_start_cap: 7, enabled: true });
    expect(all.json()).toEqual({ ...changed, daily_cap: 0, warmup_start: "2026-06-30", warmup_days: 30, warmup_start_cap: 7, enabled: true });
    // resource_key is not a PUT field: it is ignored, as any extra field.
    expect((await send("PUT", path, { resource_key: "other" })).json()).toMatchObject({ resource_key: "acct" });
    expect(((await send("GET", `/pools/${pool.id}/resources`)).json() as Resource[])[0]).toEqual(all.json());
    // The audit log names the fields changed, never their values; a PUT that changes nothing leaves no line.
    const audit = await db.sql.query("SELECT action, details FROM audit_log WHERE details->>'id' = $1 ORDER BY id", [resource.id]);
    expect(audit.rows.map((r) => [r.action, [...(r.details.fields ?? [])].sort()])).toEqual([
      ["pool.resource.add", []],
      ["pool.resource.update", ["enabled", "name", "weight"]],
      ["pool.resource.update", ["daily_cap", "enabled", "warmup_days", "warmup_start", "warmup_start_cap"]],
    ]);
  });

  it("404 resource for one the pool does not have (another pool's included), 404 pool for a missing pool, 400 for a bad date", async () => {
    const pool = await newPool();
    const other = await newPool();
    const theirs = await newResource(other.id);
    const mine = await newResource(pool.id);
    const before = await rows();
    expect(answer(await send("PUT", `/pools/${pool.id}/resources/${randomUUID()}`, { name: "x" }))).toEqual(notFound("resource"));
    expect(answer(await send("PUT", `/pools/${pool.id}/resources/${theirs.id}`, { name: "x" }))).toEqual(notFound("resource"));
    expect(answer(await send("PUT", `/pools/${randomUUID()}/resources/${mine.id}`, { name: "x" }))).toEqual(notFound("pool"));
    expect(answer(await send("PUT", `/pools/${pool.id}/resources/${mine.id}`, { warmup_start: "2026-13-01" }))).toEqual(
      invalid("invalid warmup_start date: 2026-13-01 is not a day of the calendar"),
    );
    // What a POST refuses, a PUT refuses too.
    expect(answer(await send("PUT", `/pools/${pool.id}/resources/${mine.id}`, { weight: 0 }))).toEqual(invalid("weight must be at least 1"));
    expect(answer(await send("PUT", `/pools/${pool.id}/resources/${mine.id}`, { name: "" }))).toEqual(invalid("name must be 1-255 characters"));
    expect((await send("PUT", `/pools/${pool.id}/resources/${mine.id}`, { enabled: "no" })).status).toBe(422);
    expect(await rows()).toEqual(before);
    const malformed = await send("PUT", `/pools/${pool.id}/resources/nope`, { name: "x" });
    expect(answer(malformed)).toEqual({ status: 400, text: "Invalid URL: `resource_id` is not a UUID" });
  });
});

describe("DELETE /pools/{pool_id}/resources/{resource_id}", () => {
  it("deletes the pool's resource (204), and answers 204 again for an id that no longer exists, or never did", async () => {
    const pool = await newPool();
    const resource = await newResource(pool.id);
    const kept = await newResource(pool.id, acme, { name: "kept" });
    const path = `/pools/${pool.id}/resources/${resource.id}`;
    expect({ status: (await send("DELETE", path)).status, left: await resourceCount(pool.id) }).toEqual({ status: 204, left: 1 });
    expect(answer(await send("DELETE", path))).toEqual({ status: 204, text: "" });
    expect(answer(await send("DELETE", `/pools/${pool.id}/resources/${randomUUID()}`))).toEqual({ status: 204, text: "" });
    expect(((await send("GET", `/pools/${pool.id}/resources`)).json() as Resource[]).map((r) => r.id)).toEqual([kept.id]);
    const audit = await db.sql.query("SELECT action FROM audit_log WHERE tenant_id = $1 AND details->>'id' = $2", [acme.id, resource.id]);
    expect(audit.rows.map((r) => r.action)).toEqual(["pool.resource.add", "pool.resource.delete"]);
  });

  it("is a 404 for a resource of another pool, which stays, and for a missing pool", async () => {
    const pool = await newPool();
    const other = await newPool();
    const theirs = await newResource(other.id);
    expect(answer(await send("DELETE", `/pools/${pool.id}/resources/${theirs.id}`))).toEqual(notFound("resource"));
    expect(await resourceCount(other.id)).toBe(1);
    expect(answer(await send("DELETE", `/pools/${randomUUID()}/resources/${theirs.id}`))).toEqual(notFound("pool"));
    expect(answer(await send("DELETE", `/pools/${randomUUID()}/resources/${randomUUID()}`))).toEqual(notFound("pool"));
    expect(await resourceCount(other.id)).toBe(1);
  });
});

describe("another tenant's pools and resources", () => {
  it("answer byte for byte like ones that do not exist, on every route, and change nothing", async () => {
    const theirPool = await newPool(globex);
    const theirResource = await newResource(theirPool.id, globex);
    const myPool = await newPool();
    const myResource = await newResource(myPool.id);
    const before = await rows();
    const body = { resource_key: "k", name: "n" };
    const pairs: [string, string, unknown, string, unknown][] = [
      ["GET", `/pools/${theirPool.id}`, undefined, `/pools/${randomUUID()}`, undefined],
      ["DELETE", `/pools/${theirPool.id}`, undefined, `/pools/${randomUUID()}`, undefined],
      ["GET", `/pools/${theirPool.id}/resources`, undefined, `/pools/${randomUUID()}/resources`, undefined],
      ["POST", `/pools/${theirPool.id}/resources`, body, `/pools/${randomUUID()}/resources`, body],
      ["PUT", `/pools/${theirPool.id}/resources/${theirResource.id}`, { enabled: false }, `/pools/${randomUUID()}/resources/${randomUUID()}`, { enabled: false }],
      ["DELETE", `/pools/${theirPool.id}/resources/${theirResource.id}`, undefined, `/pools/${randomUUID()}/resources/${randomUUID()}`, undefined],
      // Their resource named under my own pool: PUT's 404 resource, DELETE's 204, as for a random id.
      ["PUT", `/pools/${myPool.id}/resources/${theirResource.id}`, { enabled: false }, `/pools/${myPool.id}/resources/${randomUUID()}`, { enabled: false }],
      ["DELETE", `/pools/${myPool.id}/resources/${theirResource.id}`, undefined, `/pools/${myPool.id}/resources/${randomUUID()}`, undefined],
      // My own pool's resource, asked for under their pool.
      ["PUT", `/pools/${theirPool.id}/resources/${myResource.id}`, { enabled: false }, `/pools/${randomUUID()}/resources/${myResource.id}`, { enabled: false }],
    ];
    for (const [method, foreignPath, foreignBody, missingPath, missingBody] of pairs) {
      const foreign = await send(method, foreignPath, foreignBody);
      const missing = await send(method, missingPath, missingBody);
      expect(foreign.status, `${method} ${foreignPath}`).not.toBe(500);
      expectSameReply(foreign, missing);
    }
    // Naming their tenant (header, query or body) is the 404 of a tenant that does not exist.
    const named = [
      await send("GET", `/pools/${theirPool.id}`, undefined, acme.key, { "x-tenant-id": globex.id }),
      await send("GET", `/pools/${theirPool.id}?tenant_id=${globex.id}`),
    ];
    const nobody = await send("GET", `/pools/${theirPool.id}`, undefined, acme.key, { "x-tenant-id": "no-such-tenant" });
    for (const reply of named) expectSameReply(reply, nobody);
    expect(answer(nobody)).toEqual(notFound("pool"));
    const posted = await send("POST", "/pools", { tenant_id: globex.id, name: "mine now" });
    expectSameReply(posted, await send("POST", "/pools", { tenant_id: "no-such-tenant", name: "mine now" }));
    expect(answer(posted)).toEqual(notFound("tenant"));
    expect(await rows()).toEqual(before);
    // Still theirs, whole, and not in my list.
    expect((await send("GET", `/pools/${theirPool.id}/resources`, undefined, globex.key)).json()).toEqual([theirResource]);
    expect(((await send("GET", "/pools")).json() as Pool[]).map((p) => p.id)).not.toContain(theirPool.id);
    expect(((await send("GET", "/pools")).json() as Pool[]).every((p) => p.tenant_id === acme.id)).toBe(true);
  });
});
