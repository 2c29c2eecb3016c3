// The tRPC procedures' gates, against a real PostgreSQL: who may call what, and that "not a
// member" and "no such tenant" are the same answer, down to the bytes of the HTTP response.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser } from "../../test/factories.ts";
import { appRouter, createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenantA: string;
let tenantB: string;
let member: { id: string };
let admin: { id: string };
let operator: { id: string };

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  admin = await makeUser(db, { memberOf: [[tenantA, "admin"]] });
  operator = await makeUser(db, { isOperator: true });
});
afterAll(() => db.drop());

const callerFor = (userId: string | null) => createCaller(createContext(db, userId));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

/** The raw HTTP answer of the tRPC endpoint for one query. */
async function httpQuery(userId: string, path: string, input: unknown) {
  const url = `http://localhost/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`;
  const response = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req: new Request(url),
    router: appRouter,
    createContext: () => createContext(db, userId),
  });
  return { status: response.status, headers: [...response.headers.entries()], body: await response.text() };
}

describe("tenantProcedure", () => {
  it("serves the tenant's members", async () => {
    const counts = await callerFor(member.id).overview.instanceCounts({ tenantId: tenantA });
    expect(counts).toEqual({ scheduled: 0, running: 0, waiting: 0, paused: 0, completed: 0, failed: 0, cancelled: 0 });
  });

  it("refuses a non-member with exactly the error it gives for a tenant that does not exist", async () => {
    const foreign = await trpcError(callerFor(member.id).overview.instanceCounts({ tenantId: tenantB }));
    const missing = await trpcError(callerFor(member.id).overview.instanceCounts({ tenantId: "no-such-tenant" }));
    expect(foreign.code).toBe("NOT_FOUND");
    expect({ code: foreign.code, message: foreign.message }).toEqual({ code: missing.code, message: missing.message });

    const foreignHttp = await httpQuery(member.id, "overview.instanceCounts", { tenantId: tenantB });
    const missingHttp = await httpQuery(member.id, "overview.instanceCounts", { tenantId: "no-such-tenant" });
    expect(foreignHttp.status).toBe(404);
    expect(foreignHttp).toEqual(missingHttp);
  });

  it("answers a member of a tenant without a placement exactly like a non-member (the router fails closed)", async () => {
    const unplaced = (await makeTenant(db)).id;
    const stranded = await makeUser(db, { memberOf: [[unplaced, "admin"]] });
    await db.sql.query("DELETE FROM tenant_storage_placements WHERE tenant_id = $1", [unplaced]);
    const foreign = await httpQuery(member.id, "overview.instanceCounts", { tenantId: tenantB });
    const caller = callerFor(stranded.id);
    // Each call is made only when awaited: one refused while another is awaited is an unhandled rejection.
    for (const call of [() => caller.overview.instanceCounts({ tenantId: unplaced }), () => caller.members.list({ tenantId: unplaced })]) {
      const error = await trpcError(call());
      expect({ code: error.code, message: error.message }).toEqual({ code: "NOT_FOUND", message: "tenant not found" });
    }
    expect(await httpQuery(stranded.id, "overview.instanceCounts", { tenantId: unplaced })).toEqual(foreign);
  });

  it("does not let an operator into a tenant they are not a member of", async () => {
    const error = await trpcError(callerFor(operator.id).overview.sequences({ tenantId: tenantA }));
    expect(error.code).toBe("NOT_FOUND");
  });

  it("refuses anonymous callers", async () => {
    const error = await trpcError(callerFor(null).overview.instanceCounts({ tenantId: tenantA }));
    expect(error.code).toBe("UNAUTHORIZED");
  });
});

describe("tenantAdminProcedure", () => {
  it("serves admins; to plain members the procedure does not exist", async () => {
    const members = await callerFor(admin.id).members.list({ tenantId: tenantA });
    expect(members.map((m) => m.role).sort()).toEqual(["admin", "member"]);
    const error = await trpcError(callerFor(member.id).members.list({ tenantId: tenantA }));
    expect([error.code, error.message]).toEqual(["NOT_FOUND", 'No procedure found on path "members.list"']);
  });

  it("does not exist for an admin of another tenant either", async () => {
    const error = await trpcError(callerFor(admin.id).members.list({ tenantId: tenantB }));
    expect([error.code, error.message]).toEqual(["NOT_FOUND", 'No procedure found on path "members.list"']);
  });
});

describe("operatorProcedure", () => {
  it("serves operators", async () => {
    const tenants = await callerFor(operator.id).ops.tenants();
    expect(tenants.map((t) => t.id)).toEqual(expect.arrayContaining([tenantA, tenantB]));
    expect(tenants.find((t) => t.id === tenantA)).toMatchObject({ backendId: "primary", epoch: 1 });
  });

  it("refuses a non-operator as if the procedure did not exist", async () => {
    for (const userId of [member.id, admin.id]) {
      const error = await trpcError(callerFor(userId).ops.tenants());
      expect(error.code).toBe("NOT_FOUND");
    }
  });

  it("reads the operator flag on every call, so revoking it applies at once", async () => {
    const demoted = await makeUser(db, { isOperator: true });
    await callerFor(demoted.id).ops.backends();
    await db.prisma.user.update({ where: { id: demoted.id }, data: { isOperator: false } });
    expect((await trpcError(callerFor(demoted.id).ops.backends())).code).toBe("NOT_FOUND");
  });
});
