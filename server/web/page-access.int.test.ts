// Who may open which page (the decision proxy.ts acts on), against a real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser, sessionOf } from "../../test/factories.ts";
import { endSession, type SessionIdentity } from "../auth/sessions.ts";
import { decidePage, pageAccess } from "./page-access.ts";

let db: TestDatabase;
let tenant: string;
let other: string;
const who: Record<string, SessionIdentity | null> = {};
beforeAll(async () => {
  db = await freshDatabase();
  tenant = (await makeTenant(db)).id;
  other = (await makeTenant(db)).id;
  who["signed out"] = null;
  who.member = await sessionOf(db, (await makeUser(db, { memberOf: [[tenant, "member"]] })).id);
  who.admin = await sessionOf(db, (await makeUser(db, { memberOf: [[tenant, "admin"]] })).id);
  who.operator = await sessionOf(db, (await makeUser(db, { isOperator: true })).id);
  const ended = await sessionOf(db, (await makeUser(db, { memberOf: [[tenant, "admin"]], isOperator: true })).id);
  await endSession(db.prisma, ended.sessionId);
  who["ended session"] = ended;
});
afterAll(() => db.drop());

describe("pageAccess", () => {
  it("names what each kind of path asks", () => {
    expect(pageAccess("/signin")).toEqual({ kind: "public" });
    expect(pageAccess("/invite/abc")).toEqual({ kind: "public" });
    expect(pageAccess("/signinx")).toEqual({ kind: "signed-in" });
    expect(pageAccess("/")).toEqual({ kind: "signed-in" });
    expect(pageAccess("/ops")).toEqual({ kind: "operator" });
    expect(pageAccess("/ops/tenants/acme")).toEqual({ kind: "operator" });
    expect(pageAccess("/opsx")).toEqual({ kind: "signed-in" });
    expect(pageAccess("/t/acme")).toEqual({ kind: "tenant", tenantId: "acme", admin: false });
    expect(pageAccess("/t/acme/settings")).toEqual({ kind: "tenant", tenantId: "acme", admin: true });
    expect(pageAccess("/t/acme/settings/keys")).toEqual({ kind: "tenant", tenantId: "acme", admin: true });
    expect(pageAccess("/t/acme/settingsx")).toEqual({ kind: "tenant", tenantId: "acme", admin: false });
    expect(pageAccess("/t/a%20b/instances")).toEqual({ kind: "tenant", tenantId: "a b", admin: false });
  });
});

describe("decidePage", () => {
  const expectations: [path: () => string, answers: Record<string, string>][] = [
    [() => "/signin", { "signed out": "render", member: "render", "ended session": "render" }],
    [() => "/", { "signed out": "sign-in", member: "render", admin: "render", operator: "render", "ended session": "sign-in" }],
    // A path that is no page is refused like a forbidden one, so the two answer alike.
    [() => "/no-such-page", { "signed out": "sign-in", member: "not-found", operator: "not-found", "ended session": "sign-in" }],
    [() => `/t/${tenant}/settingz`, { "signed out": "sign-in", member: "not-found", admin: "not-found" }],
    [() => "/ops", { "signed out": "sign-in", member: "not-found", admin: "not-found", operator: "render", "ended session": "sign-in" }],
    [() => `/t/${tenant}`, { "signed out": "sign-in", member: "render", admin: "render", operator: "not-found", "ended session": "sign-in" }],
    [() => `/t/${tenant}/settings`, { member: "not-found", admin: "render", operator: "not-found" }],
    [() => `/t/${other}`, { member: "not-found", admin: "not-found" }],
    [() => "/t/no-such-tenant", { "signed out": "sign-in", member: "not-found", admin: "not-found" }],
    [() => "/t/a%00b", { admin: "not-found" }],
    [() => `/t/${"x".repeat(65)}`, { admin: "not-found" }],
  ];
  for (const [path, answers] of expectations) {
    it(`answers ${path.toString().replace(/^\(\) => /, "")} for each caller`, async () => {
      for (const [caller, answer] of Object.entries(answers)) {
        expect({ caller, answer: await decidePage(db, who[caller]!, path()) }).toEqual({ caller, answer });
      }
    });
  }
});
