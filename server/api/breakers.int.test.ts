// The breakers procedures against a real PostgreSQL: members read their tenant's breakers and
// resets, admins reset (recorded twice: the reset feed and the audit log), operators see and
// reset every tenant's. Non-members are told the tenant does not exist, down to the HTTP bytes.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertOpenBreaker } from "../../engine/storage/breakers.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser } from "../../test/factories.ts";
import { appRouter, createCaller } from "./root.ts";
import { OPS_BREAKERS_SHOWN } from "./routers/breakers.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenantA: string;
let tenantB: string;
let member: { id: string; email: string };
let admin: { id: string; email: string };
let operator: { id: string; email: string };

const ago = (ms: number) => new Date(Date.now() - ms);
const open = (tenantId: string, handler: string, openedAt = ago(1_000), failureCount = 5) =>
  upsertOpenBreaker(db.sql, { tenantId, handler, failureCount, openedAt });

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  admin = await makeUser(db, { memberOf: [[tenantA, "admin"], [tenantB, "member"]] });
  operator = await makeUser(db, { isOperator: true });
});
afterAll(() => db.drop());

const callerFor = (userId: string | null) => createCaller(createContext(db, userId));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

/** The raw HTTP answer of the tRPC endpoint for one call. */
async function http(userId: string, path: string, input: unknown, method: "GET" | "POST" = "GET") {
  const url = new URL(`http://localhost/api/trpc/${path}`);
  if (method === "GET") url.searchParams.set("input", JSON.stringify(input));
  const request = new Request(url, method === "POST"
    ? { method, body: JSON.stringify(input), headers: { "content-type": "application/json" } }
    : undefined);
  const response = await fetchRequestHandler({ endpoint: "/api/trpc", req: request, router: appRouter, createContext: () => createContext(db, userId) });
  return { status: response.status, headers: [...response.headers.entries()], body: await response.text() };
}

const resetRows = async (tenantId: string) =>
  (await db.sql.query("SELECT handler, reset_by FROM circuit_breaker_resets WHERE tenant_id = $1 ORDER BY id", [tenantId])).rows;
const auditRows = async (tenantId: string) =>
  (await db.sql.query("SELECT actor, actor_user_id, action, details FROM audit_log WHERE tenant_id = $1 AND action = 'breaker.reset' ORDER BY id", [tenantId])).rows;

describe("breakers.list", () => {
  it("gives members the tenant's open breakers with state, failure count and time left", async () => {
    const openedAt = ago(15_000);
    await open(tenantA, "http_request", openedAt, 5);
    await open(tenantA, "llm_call", ago(61_000), 8);
    await open(tenantB, "elsewhere");
    const list = await callerFor(member.id).breakers.list({ tenantId: tenantA });
    expect(list.failureThreshold).toBe(5);
    expect(list.cooldownSecs).toBe(60);
    expect(list.breakers).toEqual([
      {
        tenantId: tenantA, handler: "http_request", state: "open", failureCount: 5, failureThreshold: 5,
        secondsLeft: expect.any(Number), openedAt: openedAt.toISOString(),
      },
      expect.objectContaining({ handler: "llm_call", state: "half_open", failureCount: 8, secondsLeft: 0 }),
    ]);
    // 60 s cooldown, opened 15 s ago: 45 s left (give or take the test's own run time).
    expect(list.breakers[0]!.secondsLeft).toBeGreaterThanOrEqual(43);
    expect(list.breakers[0]!.secondsLeft).toBeLessThanOrEqual(45);
  });

  it("is empty for a tenant without open breakers", async () => {
    const fresh = (await makeTenant(db)).id;
    const user = await makeUser(db, { memberOf: [[fresh, "member"]] });
    expect((await callerFor(user.id).breakers.list({ tenantId: fresh })).breakers).toEqual([]);
    expect(await callerFor(user.id).breakers.resets({ tenantId: fresh })).toEqual([]);
  });

  it("refuses a non-member (an operator included) exactly as it refuses a tenant that does not exist", async () => {
    for (const userId of [member.id, operator.id]) {
      const foreign = await trpcError(callerFor(userId).breakers.list({ tenantId: tenantB }));
      const missing = await trpcError(callerFor(userId).breakers.list({ tenantId: "no-such-tenant" }));
      expect(foreign.code).toBe("NOT_FOUND");
      expect({ code: foreign.code, message: foreign.message }).toEqual({ code: missing.code, message: missing.message });
    }
    const foreignHttp = await http(member.id, "breakers.list", { tenantId: tenantB });
    expect(foreignHttp.status).toBe(404);
    expect(foreignHttp).toEqual(await http(member.id, "breakers.list", { tenantId: "no-such-tenant" }));
    expect((await trpcError(callerFor(null).breakers.list({ tenantId: tenantA }))).code).toBe("UNAUTHORIZED");
  });
});

describe("breakers.reset", () => {
  it("lets an admin reset: the breaker closes, the reset row names them, the audit log has it", async () => {
    await open(tenantA, "flaky");
    const result = await callerFor(admin.id).breakers.reset({ tenantId: tenantA, handler: "flaky" });
    expect(result).toEqual({ wasOpen: true });
    const list = await callerFor(member.id).breakers.list({ tenantId: tenantA });
    expect(list.breakers.map((b) => b.handler)).not.toContain("flaky");
    expect(await resetRows(tenantA)).toContainEqual({ handler: "flaky", reset_by: admin.email });
    expect(await auditRows(tenantA)).toContainEqual({
      actor: admin.email, actor_user_id: admin.id, action: "breaker.reset", details: { handler: "flaky", was_open: true },
    });

    // Members see who reset what, and when, newest first.
    const resets = await callerFor(member.id).breakers.resets({ tenantId: tenantA });
    expect(resets[0]).toEqual({ id: expect.any(Number), tenantId: tenantA, handler: "flaky", resetBy: admin.email, resetAt: expect.stringMatching(/Z$/) });
  });

  it("records a reset of a handler without an open breaker, creating nothing", async () => {
    expect(await callerFor(admin.id).breakers.reset({ tenantId: tenantA, handler: "never-opened" })).toEqual({ wasOpen: false });
    expect((await db.sql.query("SELECT 1 FROM circuit_breakers WHERE handler = 'never-opened'")).rowCount).toBe(0);
    expect(await resetRows(tenantA)).toContainEqual({ handler: "never-opened", reset_by: admin.email });
  });

  it("does not exist for members and non-members (a missing procedure's answer), and they change nothing", async () => {
    await open(tenantA, "guarded");
    await open(tenantB, "guarded");
    const before = { a: await resetRows(tenantA), b: await resetRows(tenantB) };
    const noSuchProcedure = { code: "NOT_FOUND", message: 'No procedure found on path "breakers.reset"' };
    const refused = await trpcError(callerFor(member.id).breakers.reset({ tenantId: tenantA, handler: "guarded" }));
    expect({ code: refused.code, message: refused.message }).toEqual(noSuchProcedure);
    // admin is only a member of tenantB.
    const plainMember = await trpcError(callerFor(admin.id).breakers.reset({ tenantId: tenantB, handler: "guarded" }));
    expect({ code: plainMember.code, message: plainMember.message }).toEqual(noSuchProcedure);
    const foreign = await trpcError(callerFor(member.id).breakers.reset({ tenantId: tenantB, handler: "guarded" }));
    const missing = await trpcError(callerFor(member.id).breakers.reset({ tenantId: "no-such-tenant", handler: "guarded" }));
    expect({ code: foreign.code, message: foreign.message }).toEqual(noSuchProcedure);
    expect({ code: foreign.code, message: foreign.message }).toEqual({ code: missing.code, message: missing.message });
    const foreignHttp = await http(member.id, "breakers.reset", { tenantId: tenantB, handler: "guarded" }, "POST");
    expect(foreignHttp.status).toBe(404);
    expect(foreignHttp).toEqual(await http(member.id, "breakers.reset", { tenantId: "no-such-tenant", handler: "guarded" }, "POST"));

    expect({ a: await resetRows(tenantA), b: await resetRows(tenantB) }).toEqual(before);
    expect((await db.sql.query("SELECT count(*)::int AS n FROM circuit_breakers WHERE handler = 'guarded'")).rows[0].n).toBe(2);
  });

  it("refuses a blank handler", async () => {
    expect((await trpcError(callerFor(admin.id).breakers.reset({ tenantId: tenantA, handler: "" }))).code).toBe("BAD_REQUEST");
  });
});

describe("breakers.ops", () => {
  it("lists every tenant's breakers for operators, filtered by tenant when asked", async () => {
    await open(tenantA, "ops-a");
    await open(tenantB, "ops-b");
    const all = await callerFor(operator.id).breakers.ops.list();
    const pairs = all.breakers.map((b) => `${b.tenantId}/${b.handler}`);
    expect(pairs).toEqual(expect.arrayContaining([`${tenantA}/ops-a`, `${tenantB}/ops-b`]));
    expect(all.breakers.find((b) => b.handler === "ops-b")).toMatchObject({ tenantId: tenantB, state: "open", failureCount: 5 });

    const filtered = await callerFor(operator.id).breakers.ops.list({ tenant: tenantB.toUpperCase() });
    expect(new Set(filtered.breakers.map((b) => b.tenantId))).toEqual(new Set([tenantB]));
    expect((await callerFor(operator.id).breakers.ops.list({ tenant: "zzz-no-match" })).breakers).toEqual([]);
  });

  it("filters by handler (any case) and by one exact tenant, resets alike", async () => {
    const prefix = (await makeTenant(db, "brk-pre")).id;
    const longer = (await makeTenant(db, "brk-pre-longer")).id;
    await open(prefix, "Billing-Sync");
    await open(prefix, "mailer");
    await open(longer, "billing-sync");
    await callerFor(operator.id).breakers.ops.reset({ tenantId: longer, handler: "billing-sync" });
    const pairs = (page: { breakers: { tenantId: string; handler: string }[] }) => page.breakers.map((b) => `${b.tenantId}/${b.handler}`);

    expect(pairs(await callerFor(operator.id).breakers.ops.list({ tenant: "brk-pre", handler: "BILLING" }))).toEqual([`${prefix}/Billing-Sync`]);
    const exact = await callerFor(operator.id).breakers.ops.list({ tenantId: prefix });
    expect({ pairs: pairs(exact), matching: exact.matching }).toEqual({ pairs: [`${prefix}/Billing-Sync`, `${prefix}/mailer`], matching: 2 });
    const substring = await callerFor(operator.id).breakers.ops.list({ tenant: "brk-pre" });
    expect(substring.matching).toBe(2);
    expect(substring.resets.map((r) => `${r.tenantId}/${r.handler}`)).toEqual([`${longer}/billing-sync`]);
    expect((await callerFor(operator.id).breakers.ops.list({ tenant: "brk-pre", handler: "mail" })).resets).toEqual([]);
  });

  it(`lists the first ${OPS_BREAKERS_SHOWN} open breakers by tenant and handler, and says how many match`, async () => {
    const outage = (await makeTenant(db, "brk-outage")).id;
    const handlers = Array.from({ length: OPS_BREAKERS_SHOWN + 20 }, (_, i) => `vendor-${String(i).padStart(3, "0")}`);
    for (const handler of [...handlers].reverse()) await open(outage, handler);
    const page = await callerFor(operator.id).breakers.ops.list({ tenant: "brk-outage" });
    expect(page.matching).toBe(handlers.length);
    expect(page.breakers.map((b) => b.handler)).toEqual(handlers.slice(0, OPS_BREAKERS_SHOWN));
    const all = await callerFor(operator.id).breakers.ops.list();
    expect(all.breakers).toHaveLength(OPS_BREAKERS_SHOWN);
    expect(all.matching).toBeGreaterThanOrEqual(handlers.length);
  });

  it("lets operators reset any tenant's breaker, recorded with their email in the feed and the audit log", async () => {
    await open(tenantB, "ops-reset");
    expect(await callerFor(operator.id).breakers.ops.reset({ tenantId: tenantB, handler: "ops-reset" })).toEqual({ wasOpen: true });
    expect((await db.sql.query("SELECT 1 FROM circuit_breakers WHERE tenant_id = $1 AND handler = 'ops-reset'", [tenantB])).rowCount).toBe(0);
    expect(await resetRows(tenantB)).toContainEqual({ handler: "ops-reset", reset_by: operator.email });
    expect(await auditRows(tenantB)).toContainEqual({
      actor: operator.email, actor_user_id: operator.id, action: "breaker.reset", details: { handler: "ops-reset", was_open: true },
    });
    const { resets } = await callerFor(operator.id).breakers.ops.list({ tenant: tenantB });
    expect(resets[0]).toMatchObject({ tenantId: tenantB, handler: "ops-reset", resetBy: operator.email });
  });

  it("answers NOT_FOUND for a tenant that does not exist", async () => {
    const error = await trpcError(callerFor(operator.id).breakers.ops.reset({ tenantId: "no-such-tenant", handler: "x" }));
    expect(error.code).toBe("NOT_FOUND");
  });

  it("refuses non-operators as if the procedures did not exist", async () => {
    for (const userId of [member.id, admin.id]) {
      expect((await trpcError(callerFor(userId).breakers.ops.list())).code).toBe("NOT_FOUND");
      expect((await trpcError(callerFor(userId).breakers.ops.reset({ tenantId: tenantA, handler: "ops-a" }))).code).toBe("NOT_FOUND");
    }
    expect((await db.sql.query("SELECT 1 FROM circuit_breakers WHERE tenant_id = $1 AND handler = 'ops-a'", [tenantA])).rowCount).toBe(1);
  });
});

describe("per-handler settings", () => {
  let settingsTenant = "";
  beforeAll(async () => {
    settingsTenant = (await makeTenant(db)).id;
  });

  it("admins set them within the operator's bounds, recorded in the audit log; members cannot", async () => {
    const admin = await makeUser(db, { memberOf: [[settingsTenant, "admin"]] });
    const member = await makeUser(db, { memberOf: [[settingsTenant, "member"]] });
    const caller = createCaller(createContext(db, admin.id));
    await caller.breakers.setSettings({ tenantId: settingsTenant, handler: "http_request", failureThreshold: 3, cooldownSecs: 30 });
    const listed = await caller.breakers.list({ tenantId: settingsTenant });
    expect(listed.handlerSettings).toEqual([{ handler: "http_request", failureThreshold: 3, cooldownSecs: 30 }]);
    expect(await db.prisma.auditLog.count({ where: { tenantId: settingsTenant, action: "breaker.settings" } })).toBe(1);

    const tooLow = await caller.breakers.setSettings({ tenantId: settingsTenant, handler: "http_request", failureThreshold: 0, cooldownSecs: 30 }).catch((e) => e);
    expect(tooLow.code).toBe("BAD_REQUEST");
    const tooLong = await caller.breakers.setSettings({ tenantId: settingsTenant, handler: "http_request", failureThreshold: 3, cooldownSecs: 999_999 }).catch((e) => e);
    expect(tooLong.code).toBe("BAD_REQUEST");
    const forbidden = await createCaller(createContext(db, member.id)).breakers.setSettings({ tenantId: settingsTenant, handler: "x", failureThreshold: 3, cooldownSecs: 30 }).catch((e) => e);
    expect([forbidden.code, forbidden.message]).toEqual(["NOT_FOUND", 'No procedure found on path "breakers.setSettings"']);
  });
});
