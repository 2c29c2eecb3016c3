// API request rates at the REST and tRPC entries, against a real PostgreSQL, with the real
// dispatcher and real tRPC callers: a token bucket per (API key or user, tenant), here 1 request/s
// with a burst of 3 and a clock of the test's own. The noisy neighbour: one tenant's key at ten
// times the others' load is refused (429 + Retry-After, one audit row per minute) while another
// tenant's key, another key of the same tenant and another member of the tenant are not.
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../test/db.ts";
import { makeUser, sessionOf } from "../test/factories.ts";
import { createApiKey } from "./control/api-keys.ts";
import { handleTrpcRequest } from "./api/handler.ts";
import { createCaller } from "./api/root.ts";
import { createContext } from "./api/trpc.ts";
import { RequestRate, requestRate, setRequestRate, throttledLastMinute } from "./request-rate.ts";
import { call, operatorKey, tenantWithKey } from "./rest/testing.ts";
import { tenantLimitsCache } from "./tenant-limits-cache.ts";

let db: TestDatabase;
const clock = { t: Date.UTC(2026, 0, 1, 12, 0, 0) };

beforeAll(async () => {
  db = await freshDatabase({ BULKHEAD_API_RATE_PER_SEC: "1", BULKHEAD_API_BURST: "3" });
});
afterAll(() => db.drop());

beforeEach(() => {
  // A fresh set of buckets per test, on the configured rate and burst, at the start of a minute.
  const configured = requestRate(db).buckets;
  expect({ rate: configured.ratePerSec, burst: configured.burst }).toEqual({ rate: 1, burst: 3 });
  clock.t = Math.ceil((clock.t + 1) / 60_000) * 60_000;
  setRequestRate(db, new RequestRate({ ratePerSec: 1, burst: 3, now: () => clock.t }));
});

const throttleRows = () =>
  db.prisma.auditLog.findMany({ where: { action: "api.throttled" }, orderBy: { id: "asc" }, select: { actor: true, actorUserId: true, tenantId: true, details: true } });
const prefixOf = (secret: string) => secret.slice(0, 11);
const breakers = (key: string, headers?: Record<string, string>) => call(db, "GET", "/circuit-breakers", { key, headers });

describe("REST", () => {
  it("refuses a tenant key over its bucket with 429 and Retry-After, and no one else", async () => {
    const noisy = await tenantWithKey(db);
    const quiet = await tenantWithKey(db);
    const noisyTwin = (await createApiKey(db.prisma, { tenantId: noisy.id, name: "second" })).secret;
    const before = (await throttleRows()).length;

    // Ten times the quiet tenant's load, within one instant: the burst (3) passes, the rest is refused.
    const noisyReplies = [];
    for (let i = 0; i < 30; i++) noisyReplies.push(await breakers(noisy.key));
    expect(noisyReplies.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    const refused = noisyReplies.slice(3);
    expect(refused.map((r) => r.status)).toEqual(Array(27).fill(429));
    const fourth = refused[0]!;
    expect(Number(new Headers(fourth.headers).get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(new Headers(fourth.headers).get("retry-after")).toBe("1");
    expect(fourth.contentType).toBe("application/json");
    expect(fourth.json()).toEqual({ error: "rate limit exceeded: retry after 1 s" });

    // The noisy neighbour's objective: the other tenant's key gets its whole burst, as does a second key of the noisy tenant.
    const quietStatuses = [];
    for (let i = 0; i < 3; i++) quietStatuses.push((await breakers(quiet.key)).status);
    expect(quietStatuses, "another tenant's key").toEqual([200, 200, 200]);
    const twinStatuses = [];
    for (let i = 0; i < 3; i++) twinStatuses.push((await breakers(noisyTwin)).status);
    expect(twinStatuses, "another key of the same tenant").toEqual([200, 200, 200]);

    // One audit row for the 27 refusals of that minute.
    const rows = (await throttleRows()).slice(before);
    expect(rows).toEqual([
      { actor: prefixOf(noisy.key), actorUserId: null, tenantId: noisy.id, details: { principal: "api_key", rate_per_sec: 1, burst: 3, retry_after_secs: 1 } },
    ]);
    expect(throttledLastMinute(db)).toEqual([
      { tenantId: noisy.id, principal: { kind: "api_key", id: expect.any(String), name: prefixOf(noisy.key) }, refused: 27 },
    ]);

    // After the refill (1 token a second) the key works again, once per second.
    clock.t += 999;
    expect((await breakers(noisy.key)).status).toBe(429);
    clock.t += 1;
    expect((await breakers(noisy.key)).status).toBe(200);
    expect((await breakers(noisy.key)).status).toBe(429);
    clock.t += 3000;
    expect([await breakers(noisy.key), await breakers(noisy.key), await breakers(noisy.key), await breakers(noisy.key)].map((r) => r.status))
      .toEqual([200, 200, 200, 429]);
    expect((await throttleRows()).length - before).toBe(1);

    // The next minute's first refusal is recorded again, once.
    clock.t = Math.ceil(clock.t / 60_000) * 60_000;
    for (let i = 0; i < 6; i++) await breakers(noisy.key);
    expect((await throttleRows()).length - before).toBe(2);
    expect(throttledLastMinute(db)).toEqual([{ tenantId: noisy.id, principal: expect.objectContaining({ kind: "api_key" }), refused: 3 }]);
  });

  it("gives a tenant with its own rate (tiered) that rate and a burst in proportion, and leaves the others at the default", async () => {
    const vip = await tenantWithKey(db);
    const other = await tenantWithKey(db);
    await db.storage.setTenantLimits(vip.id, { apiRatePerSec: 2 });
    tenantLimitsCache(db).invalidate();
    const before = (await throttleRows()).length;

    const vipStatuses = [];
    for (let i = 0; i < 8; i++) vipStatuses.push((await breakers(vip.key)).status);
    // 2/s with the default's proportion of burst to rate (3 to 1): 6 at once.
    expect(vipStatuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    const otherStatuses = [];
    for (let i = 0; i < 4; i++) otherStatuses.push((await breakers(other.key)).status);
    expect(otherStatuses).toEqual([200, 200, 200, 429]);
    expect((await throttleRows()).slice(before).map((r) => [r.tenantId, r.details])).toEqual([
      [vip.id, { principal: "api_key", rate_per_sec: 2, burst: 6, retry_after_secs: 1 }],
      [other.id, { principal: "api_key", rate_per_sec: 1, burst: 3, retry_after_secs: 1 }],
    ]);
    await db.storage.setTenantLimits(vip.id, { apiRatePerSec: null });
    tenantLimitsCache(db).invalidate();
  });

  it("refuses before the body is read or anything is written", async () => {
    const tenant = await tenantWithKey(db);
    for (let i = 0; i < 3; i++) expect((await breakers(tenant.key)).status).toBe(200);
    const sequences = async () => Number((await db.sql.query("SELECT count(*) AS n FROM sequences WHERE tenant_id = $1", [tenant.id])).rows[0].n);
    // Not JSON at all: within the rate this is a 400 (the body extractor); over it, the 429.
    const malformed = await call(db, "POST", "/sequences", { key: tenant.key, raw: "{not json", headers: { "content-type": "application/json" } });
    expect(malformed.status).toBe(429);
    expect(await sequences()).toBe(0);
  });

  it("gives an operator key a bucket per tenant it acts for, and one of its own for none", async () => {
    const acme = await tenantWithKey(db);
    const operator = await operatorKey(db);
    const before = (await throttleRows()).length;
    const asAcme = () => breakers(operator, { "x-tenant-id": acme.id });
    expect([await asAcme(), await asAcme(), await asAcme(), await asAcme()].map((r) => r.status)).toEqual([200, 200, 200, 429]);
    // The tenant's own key is another principal.
    expect((await breakers(acme.key)).status).toBe(200);
    // The operator key acting for no tenant: its own bucket.
    expect([await breakers(operator), await breakers(operator), await breakers(operator), await breakers(operator)].map((r) => r.status))
      .toEqual([200, 200, 200, 429]);
    const rows = (await throttleRows()).slice(before);
    expect(rows.map((r) => ({ actor: r.actor, tenantId: r.tenantId }))).toEqual([
      { actor: prefixOf(operator), tenantId: acme.id },
      { actor: prefixOf(operator), tenantId: null },
    ]);
  });

  it("tells a tenant key over its rate that an operator route does not exist, as it does within it", async () => {
    const tenant = await tenantWithKey(db);
    const within = await call(db, "POST", "/tenants", { key: tenant.key, body: { id: "nope", name: "Nope" } });
    for (let i = 0; i < 5; i++) await breakers(tenant.key);
    const over = await call(db, "POST", "/tenants", { key: tenant.key, body: { id: "nope", name: "Nope" } });
    expect(within.status).toBe(404);
    expect({ status: over.status, text: over.text }).toEqual({ status: within.status, text: within.text });
  });
});

describe("tRPC", () => {
  async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
    const error = await promise.then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    return error as TRPCError;
  }

  it("refuses a member over its bucket with TOO_MANY_REQUESTS, and not another member of the tenant", async () => {
    const tenant = await tenantWithKey(db);
    const noisy = await makeUser(db, { memberOf: [[tenant.id, "member"]] });
    const noisySession = await sessionOf(db, noisy.id);
    const quiet = await makeUser(db, { memberOf: [[tenant.id, "member"]] });
    const before = (await throttleRows()).length;
    const noisyCaller = createCaller(createContext(db, noisy.id));
    const counts = () => noisyCaller.overview.instanceCounts({ tenantId: tenant.id });

    for (let i = 0; i < 3; i++) await counts();
    for (let i = 0; i < 27; i++) {
      const error = await trpcError(counts());
      expect({ code: error.code, message: error.message }).toEqual({ code: "TOO_MANY_REQUESTS", message: "retry after 1 s" });
    }
    // Another member of the same tenant is unaffected, and so is the noisy user's own (no-tenant) bucket.
    const quietCaller = createCaller(createContext(db, quiet.id));
    for (let i = 0; i < 3; i++) await quietCaller.overview.instanceCounts({ tenantId: tenant.id });
    expect((await noisyCaller.account.me()).email).toBe(noisy.email);

    // Over HTTP: 429 with Retry-After.
    const response = await handleTrpcRequest(
      new Request(`http://localhost/api/trpc/overview.instanceCounts?input=${encodeURIComponent(JSON.stringify({ tenantId: tenant.id }))}`),
      { services: () => db, session: async () => noisySession },
    );
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.json()).toMatchObject({ error: { message: "retry after 1 s", data: { code: "TOO_MANY_REQUESTS", httpStatus: 429 } } });

    const rows = (await throttleRows()).slice(before);
    expect(rows).toEqual([
      { actor: noisy.email, actorUserId: noisy.id, tenantId: tenant.id, details: { principal: "user", rate_per_sec: 1, burst: 3, retry_after_secs: 1 } },
    ]);
    expect(throttledLastMinute(db)).toEqual([
      { tenantId: tenant.id, principal: { kind: "user", id: noisy.id, name: noisy.email }, refused: 28 },
    ]);

    clock.t += 1000;
    await counts();
    expect((await trpcError(counts())).code).toBe("TOO_MANY_REQUESTS");
  });

  it("sets Retry-After on a batch with a refused call, and not on one without", async () => {
    const tenant = await tenantWithKey(db);
    const user = await makeUser(db, { memberOf: [[tenant.id, "admin"]] });
    const userSession = await sessionOf(db, user.id);
    const input = encodeURIComponent(JSON.stringify({ 0: { tenantId: tenant.id }, 1: { tenantId: tenant.id } }));
    const batch = () => handleTrpcRequest(
      new Request(`http://localhost/api/trpc/overview.instanceCounts,overview.instanceCounts?batch=1&input=${input}`),
      { services: () => db, session: async () => userSession },
    );
    const first = await batch();
    expect(first.status).toBe(200);
    expect(first.headers.get("retry-after")).toBeNull();
    const second = await batch(); // the 3rd call passes, the 4th is refused
    expect(second.status).toBe(207);
    expect(second.headers.get("retry-after")).toBe("1");
  });

  it("answers a non-operator over its rate exactly as within it: the operator procedure does not exist", async () => {
    const user = await makeUser(db);
    const caller = createCaller(createContext(db, user.id));
    const within = await trpcError(caller.ops.tenants());
    for (let i = 0; i < 3; i++) await caller.account.me();
    expect((await trpcError(caller.account.me())).code).toBe("TOO_MANY_REQUESTS");
    const over = await trpcError(caller.ops.tenants());
    expect(within.code).toBe("NOT_FOUND");
    expect({ code: over.code, message: over.message }).toEqual({ code: within.code, message: within.message });
  });

  it("answers a non-member as for a missing tenant, never with the rate", async () => {
    const tenant = await tenantWithKey(db);
    const other = await tenantWithKey(db);
    const user = await makeUser(db, { memberOf: [[tenant.id, "member"]] });
    const caller = createCaller(createContext(db, user.id));
    for (let i = 0; i < 5; i++) {
      const error = await trpcError(caller.overview.instanceCounts({ tenantId: other.id }));
      expect({ code: error.code, message: error.message }).toEqual({ code: "NOT_FOUND", message: "tenant not found" });
    }
    // The refusals above took nothing from the member's bucket for its own tenant.
    for (let i = 0; i < 3; i++) await caller.overview.instanceCounts({ tenantId: tenant.id });
  });

  it("gives an operator one bucket of its own", async () => {
    const operator = await makeUser(db, { isOperator: true });
    const caller = createCaller(createContext(db, operator.id));
    for (let i = 0; i < 3; i++) await caller.ops.tenants();
    expect((await trpcError(caller.ops.tenants())).code).toBe("TOO_MANY_REQUESTS");
    expect((await trpcError(caller.account.me())).code).toBe("TOO_MANY_REQUESTS");
  });
});
