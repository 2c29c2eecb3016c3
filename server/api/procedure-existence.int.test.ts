// Which procedures exist is told to no one who may not call them. Through the HTTP handler, for
// every operator and tenant-admin procedure (found by their meta, so a new one is covered): as a
// caller who is refused, by GET and by POST, the answer equals a missing path's, byte for byte once
// the path's name is swapped. Any procedure asked for by the wrong method answers the same, for
// every caller, an operator included.
import type { AnyProcedure } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser, sessionOf } from "../../test/factories.ts";
import { handleTrpcRequest } from "./handler.ts";
import { appRouter, memberRouter } from "./root.ts";
import type { ProcedureMeta } from "./trpc.ts";

const all = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;
const members = memberRouter._def.procedures as unknown as Record<string, AnyProcedure>;
const accessOf = (path: string) => (all[path]!._def.meta as ProcedureMeta | undefined)?.access;
const OPERATOR_ONLY = Object.keys(all).filter((path) => accessOf(path) === "operator");
const ADMIN_ONLY = Object.keys(all).filter((path) => accessOf(path) === "tenant-admin");
const rightMethod = (path: string) => (all[path]!._def.type === "mutation" ? "POST" : "GET");
const wrongMethod = (path: string) => (all[path]!._def.type === "mutation" ? "GET" : "POST");

let db: TestDatabase;
let tenant: string;
const callers: Record<string, string | null> = {};
beforeAll(async () => {
  db = await freshDatabase();
  tenant = (await makeTenant(db)).id;
  const other = (await makeTenant(db)).id;
  callers["signed out"] = null;
  callers.member = (await makeUser(db, { memberOf: [[tenant, "member"]] })).id;
  callers["admin of another tenant"] = (await makeUser(db, { memberOf: [[other, "admin"]] })).id;
  callers.admin = (await makeUser(db, { memberOf: [[tenant, "admin"]] })).id;
  callers.operator = (await makeUser(db, { isOperator: true })).id;
});
afterAll(() => db.drop());

async function ask(userId: string | null, method: "GET" | "POST", path: string, input: unknown = {}) {
  const batch = encodeURIComponent(JSON.stringify({ 0: input }));
  const url = `http://localhost/api/trpc/${path}?batch=1${method === "GET" ? `&input=${batch}` : ""}`;
  const init = method === "POST" ? { method, body: JSON.stringify({ 0: input }), headers: { "content-type": "application/json" } } : { method };
  const session = userId === null ? null : await sessionOf(db, userId);
  const response = await handleTrpcRequest(new Request(url, init), { services: () => db, session: async () => session });
  return { status: response.status, headers: [...response.headers.entries()], body: (await response.text()).replaceAll(path, "<path>") };
}

/** Asks for each path as `who` by `method` and expects a missing path's answer for every one. */
async function expectMissing(who: string, paths: string[], method: (path: string) => "GET" | "POST", input: unknown = {}) {
  for (const m of ["GET", "POST"] as const) {
    const missing = await ask(callers[who]!, m, "members.noSuchProcedure", input);
    expect(missing.status).toBe(404);
    for (const path of paths.filter((p) => method(p) === m)) {
      expect({ who, path, ...(await ask(callers[who]!, m, path, input)) }).toEqual({ who, path, ...missing });
    }
  }
}

describe("operator procedures", () => {
  it("are marked, and are the ones the member router lacks", () => {
    expect(OPERATOR_ONLY.length).toBeGreaterThanOrEqual(14);
    expect(OPERATOR_ONLY.every((path) => /^(ops|resources|breakers\.ops|workers\.ops)\./.test(path))).toBe(true);
    expect(Object.keys(all).filter((path) => !(path in members)).sort()).toEqual([...OPERATOR_ONLY].sort());
  });

  for (const who of ["signed out", "member", "admin"]) {
    it(`answer a ${who}, by either method, exactly as a missing path`, async () => {
      await expectMissing(who, OPERATOR_ONLY, rightMethod);
      await expectMissing(who, OPERATOR_ONLY, wrongMethod);
    });
  }

  it("exist for an operator", async () => {
    expect((await ask(callers.operator!, "GET", "ops.tenants")).status).toBe(200);
  });
});

describe("tenant-admin procedures", () => {
  it("are the members, API key, trigger, credential, breaker-settings and instance bulk-action procedures", () => {
    expect(ADMIN_ONLY.length).toBeGreaterThanOrEqual(10);
    expect(ADMIN_ONLY.filter((path) => !/^(members|apiKeys|triggers|credentials|breakers|instances)\./.test(path))).toEqual([]);
    expect(ADMIN_ONLY.filter((path) => path.startsWith("instances.")).sort()).toEqual(
      ["instances.batchAction", "instances.bulkReschedule", "instances.bulkSetState", "instances.resumeFrom", "instances.retry"],
    );
  });

  for (const who of ["signed out", "member", "admin of another tenant"]) {
    it(`answer a ${who}, by either method, exactly as a missing path`, async () => {
      await expectMissing(who, ADMIN_ONLY, rightMethod, { tenantId: tenant });
      await expectMissing(who, ADMIN_ONLY, wrongMethod, { tenantId: tenant });
    });
  }

  it("answer a missing path's answer for a tenant that does not exist, and for an input without a tenant", async () => {
    await expectMissing("admin", ADMIN_ONLY, rightMethod, { tenantId: "no-such-tenant" });
    await expectMissing("admin", ADMIN_ONLY, rightMethod, {});
    await expectMissing("admin", ADMIN_ONLY, rightMethod, { tenantId: 12 });
  });

  it("exist for the tenant's admin by the right method, and not by the wrong one", async () => {
    expect((await ask(callers.admin!, "GET", "members.list", { tenantId: tenant })).status).toBe(200);
    await expectMissing("admin", ADMIN_ONLY, wrongMethod, { tenantId: tenant });
  });
});

describe("a wrong method", () => {
  it("reads as a missing path for every procedure, for an operator too", async () => {
    await expectMissing("operator", Object.keys(all), wrongMethod, { tenantId: tenant });
  });
});
