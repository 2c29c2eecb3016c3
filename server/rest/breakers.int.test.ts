// Circuit-breaker routes (wire-format I), answered from the rows engines share: Open rows (open,
// then half_open once the cooldown has passed) and the reset feed, which records who reset what.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertOpenBreaker } from "../../engine/storage/breakers.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, expectSameReply, operatorKey, tenantWithKey } from "./testing.ts";
import { ROUTES } from "./routes.ts";

let second: TestDatabase;
let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let operator: string;

const COOLDOWN_MS = 60_000;
const ago = (ms: number) => new Date(Date.now() - ms);

async function open(tenantId: string, handler: string, openedAt = ago(1_000), failureCount = 5, on = db) {
  await upsertOpenBreaker(on.sql, { tenantId, handler, failureCount, openedAt });
}

/** Both breaker tables, to show that a refused request changed nothing. */
async function snapshot() {
  const rows = async (table: string) => (await db.sql.query(`SELECT * FROM ${table} ORDER BY 1, 2`)).rows;
  return { open: await rows("circuit_breakers"), resets: await rows("circuit_breaker_resets") };
}

const resetsOf = async (tenantId: string) =>
  (await db.sql.query("SELECT handler, reset_by, reset_at FROM circuit_breaker_resets WHERE tenant_id = $1 ORDER BY id", [tenantId])).rows;

beforeAll(async () => {
  // A second backend, to show the all-tenants view reads each tenant only where it is placed.
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  operator = await operatorKey(db);
  expect(db.config.BULKHEAD_BREAKER_COOLDOWN_SECS * 1000).toBe(COOLDOWN_MS);
});
afterAll(async () => {
  await db.drop();
  await second.drop();
});

describe("GET /tenants/{tenant_id}/circuit-breakers", () => {
  it("is [] for a fresh tenant", async () => {
    const fresh = await tenantWithKey(db);
    const reply = await call(db, "GET", `/tenants/${fresh.id}/circuit-breakers`, { key: fresh.key });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([]);
  });

  it("lists the tenant's open breakers in the wire shape; half_open once the cooldown has passed", async () => {
    const tenant = await tenantWithKey(db);
    const openedAt = ago(5_000);
    await open(tenant.id, "http_request", openedAt, 5);
    await open(tenant.id, "llm_call", ago(COOLDOWN_MS + 1_000), 7);
    await open(globex.id, "not-theirs");
    const reply = await call(db, "GET", `/tenants/${tenant.id}/circuit-breakers`, { key: tenant.key });
    expect(reply.status).toBe(200);
    expect(reply.contentType).toBe("application/json");
    expect(reply.json()).toEqual([
      {
        tenant_id: tenant.id, handler: "http_request", state: "open", failure_count: 5,
        failure_threshold: 5, cooldown_secs: 60, opened_at: openedAt.toISOString(),
      },
      {
        tenant_id: tenant.id, handler: "llm_call", state: "half_open", failure_count: 7,
        failure_threshold: 5, cooldown_secs: 60, opened_at: expect.stringMatching(/Z$/),
      },
    ]);
  });

  it("follows the configured threshold and cooldown", async () => {
    const custom = await freshDatabase({ BULKHEAD_BREAKER_THRESHOLD: "3", BULKHEAD_BREAKER_COOLDOWN_SECS: "10" });
    try {
      const tenant = await tenantWithKey(custom);
      await open(tenant.id, "a", ago(9_000), 3, custom);
      await open(tenant.id, "b", ago(11_000), 3, custom);
      const reply = await call(custom, "GET", `/tenants/${tenant.id}/circuit-breakers`, { key: tenant.key });
      expect(reply.json()).toEqual([
        expect.objectContaining({ handler: "a", state: "open", failure_threshold: 3, cooldown_secs: 10 }),
        expect.objectContaining({ handler: "b", state: "half_open", failure_threshold: 3, cooldown_secs: 10 }),
      ]);
    } finally {
      await custom.drop();
    }
  });
});

describe("GET /tenants/{tenant_id}/circuit-breakers/{handler}", () => {
  it("answers the breaker, with a percent-encoded handler name decoded", async () => {
    const openedAt = ago(2_000);
    await open(acme.id, "billing/charge v2", openedAt, 6);
    const reply = await call(db, "GET", `/tenants/${acme.id}/circuit-breakers/${encodeURIComponent("billing/charge v2")}`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      tenant_id: acme.id, handler: "billing/charge v2", state: "open", failure_count: 6,
      failure_threshold: 5, cooldown_secs: 60, opened_at: openedAt.toISOString(),
    });
  });

  it("is a 404 when no entry exists (closed breakers are not visible outside the engine)", async () => {
    const reply = await call(db, "GET", `/tenants/${acme.id}/circuit-breakers/never-failed`, { key: acme.key });
    expect(reply.status).toBe(404);
    expect(reply.json()).toEqual({ error: "not found: circuit breaker not found" });
  });

  it("turns half_open once its cooldown has passed", async () => {
    await open(acme.id, "probe-me", ago(COOLDOWN_MS - 2_000));
    const path = `/tenants/${acme.id}/circuit-breakers/probe-me`;
    expect((await call(db, "GET", path, { key: acme.key })).json()).toMatchObject({ state: "open" });
    // The cooldown passes (moved in the row rather than waited for).
    await db.sql.query("UPDATE circuit_breakers SET opened_at = opened_at - interval '3 seconds' WHERE tenant_id = $1 AND handler = 'probe-me'", [acme.id]);
    expect((await call(db, "GET", path, { key: acme.key })).json()).toMatchObject({ state: "half_open", failure_count: 5 });
  });
});

describe("POST /tenants/{tenant_id}/circuit-breakers/{handler}/reset", () => {
  it("closes an open breaker: 200 with an empty body, the row gone, the reset recorded with the key's prefix", async () => {
    await open(acme.id, "flaky");
    const reply = await call(db, "POST", `/tenants/${acme.id}/circuit-breakers/flaky/reset`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
    expect((await call(db, "GET", `/tenants/${acme.id}/circuit-breakers/flaky`, { key: acme.key })).status).toBe(404);
    const list = (await call(db, "GET", `/tenants/${acme.id}/circuit-breakers`, { key: acme.key })).json() as { handler: string }[];
    expect(list.map((b) => b.handler)).not.toContain("flaky");

    const resets = (await resetsOf(acme.id)).filter((r) => r.handler === "flaky");
    expect(resets).toEqual([{ handler: "flaky", reset_by: `api-key:${acme.key.slice(0, 11)}`, reset_at: expect.any(Date) }]);
    expect(Math.abs((resets[0].reset_at as Date).getTime() - Date.now())).toBeLessThan(60_000);
    const audit = await db.sql.query("SELECT actor, action, details FROM audit_log WHERE tenant_id = $1 AND action = 'breaker.reset'", [acme.id]);
    expect(audit.rows).toContainEqual({ actor: acme.key.slice(0, 11), action: "breaker.reset", details: { handler: "flaky", was_open: true } });
  });

  it("is 200 with an empty body for an unknown handler, creates no entry, and still records the reset", async () => {
    const reply = await call(db, "POST", `/tenants/${acme.id}/circuit-breakers/no-such-handler/reset`, { key: acme.key });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
    const rows = await db.sql.query("SELECT 1 FROM circuit_breakers WHERE tenant_id = $1 AND handler = 'no-such-handler'", [acme.id]);
    expect(rows.rowCount).toBe(0);
    expect((await call(db, "GET", `/tenants/${acme.id}/circuit-breakers/no-such-handler`, { key: acme.key })).status).toBe(404);
    expect((await resetsOf(acme.id)).filter((r) => r.handler === "no-such-handler")).toHaveLength(1);
  });

  it("leaves the tenant's other breakers and other tenants' same-named breakers open", async () => {
    await open(acme.id, "shared-name");
    await open(acme.id, "bystander");
    await open(globex.id, "shared-name");
    await call(db, "POST", `/tenants/${acme.id}/circuit-breakers/shared-name/reset`, { key: acme.key });
    expect((await call(db, "GET", `/tenants/${acme.id}/circuit-breakers/bystander`, { key: acme.key })).status).toBe(200);
    expect((await call(db, "GET", `/tenants/${globex.id}/circuit-breakers/shared-name`, { key: globex.key })).status).toBe(200);
  });
});

describe("GET /circuit-breakers", () => {
  it("gives a tenant key its own tenant's breakers only", async () => {
    const tenant = await tenantWithKey(db);
    await open(tenant.id, "mine");
    const reply = await call(db, "GET", "/circuit-breakers", { key: tenant.key });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual([expect.objectContaining({ tenant_id: tenant.id, handler: "mine", state: "open" })]);
  });

  it("gives an operator key every tenant's breakers, or the tenant its X-Tenant-Id names", async () => {
    await open(acme.id, "ops-a");
    await open(globex.id, "ops-g");
    const all = (await call(db, "GET", "/circuit-breakers", { key: operator })).json() as { tenant_id: string; handler: string }[];
    expect(all).toEqual(expect.arrayContaining([
      expect.objectContaining({ tenant_id: acme.id, handler: "ops-a" }),
      expect.objectContaining({ tenant_id: globex.id, handler: "ops-g" }),
    ]));
    const sorted = [...all].sort((a, b) => (a.tenant_id + "\u0000" + a.handler < b.tenant_id + "\u0000" + b.handler ? -1 : 1));
    expect(all).toEqual(sorted);

    const scoped = (await call(db, "GET", "/circuit-breakers", { key: operator, headers: { "x-tenant-id": globex.id } })).json() as { tenant_id: string }[];
    expect(scoped.length).toBeGreaterThan(0);
    expect(new Set(scoped.map((b) => b.tenant_id))).toEqual(new Set([globex.id]));
  });

  it("shows each tenant only from the backend it is placed on", async () => {
    const mover = await tenantWithKey(db);
    await open(mover.id, "on-primary");
    // A stale (or future) copy on eu-1, where the tenant is not placed.
    await open(mover.id, "on-eu", ago(1_000), 5, second);
    const handlers = async () =>
      ((await call(db, "GET", "/circuit-breakers", { key: operator })).json() as { tenant_id: string; handler: string }[])
        .filter((b) => b.tenant_id === mover.id).map((b) => b.handler);
    expect(await handlers()).toEqual(["on-primary"]);
    await db.storage.advanceTenantPlacement(mover.id, "eu-1", 2);
    expect(await handlers()).toEqual(["on-eu"]);
    // Tenant-scoped reads and resets follow the placement too.
    expect((await call(db, "GET", `/tenants/${mover.id}/circuit-breakers`, { key: mover.key })).json()).toEqual([
      expect.objectContaining({ handler: "on-eu" }),
    ]);
    await call(db, "POST", `/tenants/${mover.id}/circuit-breakers/on-eu/reset`, { key: operator });
    expect((await second.sql.query("SELECT reset_by FROM circuit_breaker_resets WHERE tenant_id = $1", [mover.id])).rows).toEqual([
      { reset_by: `api-key:${operator.slice(0, 11)}` },
    ]);
    expect(await handlers()).toEqual([]);
  });

  it("refuses a request without a key", async () => {
    expect((await call(db, "GET", "/circuit-breakers")).status).toBe(401);
    expect((await call(db, "POST", `/tenants/${acme.id}/circuit-breakers/x/reset`)).status).toBe(401);
  });
});

describe("tenant isolation", () => {
  const tenantRoutes = ROUTES.filter((route) => route.path.startsWith("/tenants/{tenant_id}/circuit-breakers"));
  const paths = (tenantId: string) => tenantRoutes.map((route) => ({
    route,
    path: route.path.replace("{tenant_id}", tenantId).replace("{handler}", "shared"),
  }));

  it("covers the three breaker routes that name a tenant", () => {
    expect(tenantRoutes.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /tenants/{tenant_id}/circuit-breakers",
      "GET /tenants/{tenant_id}/circuit-breakers/{handler}",
      "POST /tenants/{tenant_id}/circuit-breakers/{handler}/reset",
    ]);
  });

  it("answers a tenant key naming another tenant byte for byte like a tenant that does not exist, and changes nothing", async () => {
    await open(globex.id, "shared");
    await open(acme.id, "shared");
    for (const [index, { route, path }] of paths(globex.id).entries()) {
      const missingPath = paths("no-such-tenant")[index]!.path;
      const ownPath = paths(acme.id)[index]!.path;
      const before = await snapshot();
      const missing = await call(db, route.method, missingPath, { key: acme.key });
      expect(missing.status, path).toBe(404);
      expect(missing.json()).toEqual({ error: `not found: ${route.notFound} not found` });
      const attempts = [
        call(db, route.method, path, { key: acme.key }),
        call(db, route.method, path, { key: acme.key, headers: { "x-tenant-id": globex.id } }),
        call(db, route.method, `${path}?tenant_id=${globex.id}`, { key: acme.key }),
        // Its own tenant in the path, another named alongside.
        call(db, route.method, ownPath, { key: acme.key, headers: { "x-tenant-id": globex.id } }),
        call(db, route.method, `${ownPath}?tenant_id=${globex.id}`, { key: acme.key }),
        // An operator naming a tenant that does not exist, or two different tenants.
        call(db, route.method, missingPath, { key: operator }),
        call(db, route.method, path, { key: operator, headers: { "x-tenant-id": acme.id } }),
      ];
      for (const reply of await Promise.all(attempts)) expectSameReply(reply, missing);
      expect(await snapshot(), path).toEqual(before);
    }
    // globex's breaker is still open, and it and the operator can still see it.
    expect((await call(db, "GET", `/tenants/${globex.id}/circuit-breakers/shared`, { key: globex.key })).status).toBe(200);
    expect((await call(db, "GET", `/tenants/${globex.id}/circuit-breakers/shared`, { key: operator })).status).toBe(200);
  });

  it("answers GET /circuit-breakers naming another tenant like a missing tenant", async () => {
    const missing = await call(db, "GET", "/circuit-breakers", { key: acme.key, headers: { "x-tenant-id": "no-such-tenant" } });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: "not found: tenant not found" });
    expectSameReply(await call(db, "GET", "/circuit-breakers", { key: acme.key, headers: { "x-tenant-id": globex.id } }), missing);
    expectSameReply(await call(db, "GET", `/circuit-breakers?tenant_id=${globex.id}`, { key: acme.key }), missing);
    expectSameReply(await call(db, "GET", "/circuit-breakers", { key: operator, headers: { "x-tenant-id": "no-such-tenant" } }), missing);
  });
});
