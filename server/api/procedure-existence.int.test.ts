// Whether an operator procedure exists is told to operators only. Through the HTTP handler, for
// every procedure of the full router that the member router lacks (generated, so a new operator
// procedure is covered), as a signed-out caller, a tenant member and a tenant admin, by GET and by
// POST: the answer equals a missing path's, byte for byte once the path's name is swapped.
import type { AnyProcedure } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser, sessionOf } from "../../test/factories.ts";
import { handleTrpcRequest } from "./handler.ts";
import { appRouter, memberRouter } from "./root.ts";

const all = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;
const members = memberRouter._def.procedures as unknown as Record<string, AnyProcedure>;
const OPERATOR_ONLY = Object.keys(all).filter((path) => !(path in members));

let db: TestDatabase;
const callers: Record<string, string | null> = {};
beforeAll(async () => {
  db = await freshDatabase();
  const tenant = (await makeTenant(db)).id;
  callers["signed out"] = null;
  callers.member = (await makeUser(db, { memberOf: [[tenant, "member"]] })).id;
  callers.admin = (await makeUser(db, { memberOf: [[tenant, "admin"]] })).id;
  callers.operator = (await makeUser(db, { isOperator: true })).id;
});
afterAll(() => db.drop());

async function ask(userId: string | null, method: "GET" | "POST", path: string) {
  const url = `http://localhost/api/trpc/${path}?batch=1${method === "GET" ? `&input=${encodeURIComponent('{"0":{}}')}` : ""}`;
  const init = method === "POST" ? { method, body: '{"0":{}}', headers: { "content-type": "application/json" } } : { method };
  const session = userId === null ? null : await sessionOf(db, userId);
  const response = await handleTrpcRequest(new Request(url, init), { services: () => db, session: async () => session });
  return { status: response.status, headers: [...response.headers.entries()], body: (await response.text()).replaceAll(path, "<path>") };
}

describe("operator procedures", () => {
  it("are the ops, resources and breakers.ops procedures", () => {
    expect(OPERATOR_ONLY.length).toBeGreaterThanOrEqual(14);
    expect(OPERATOR_ONLY.every((path) => /^(ops|resources|breakers\.ops)\./.test(path))).toBe(true);
  });

  for (const who of ["signed out", "member", "admin"]) {
    for (const method of ["GET", "POST"] as const) {
      it(`answer a ${who} by ${method} exactly as a missing path`, async () => {
        const missing = await ask(callers[who]!, method, "ops.noSuchProcedure");
        expect(missing.status).toBe(404);
        for (const path of OPERATOR_ONLY) expect({ path, ...(await ask(callers[who]!, method, path)) }).toEqual({ path, ...missing });
      });
    }
  }

  it("exist for an operator", async () => {
    const answer = await ask(callers.operator!, "GET", "ops.tenants");
    expect(answer.status).not.toBe(404);
  });
});
