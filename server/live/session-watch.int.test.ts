// A live stream's signal ends once its session or membership does: sign-out (the session row
// gone) and removal from the tenant each abort it within one check; a request that ends aborts
// it too, and a check that fails keeps it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser, sessionOf } from "../../test/factories.ts";
import { endSession } from "../auth/sessions.ts";
import { removeMember } from "../control/users.ts";
import { stillMember, whileSessionHolds } from "./session-watch.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const CHECK_MS = 20;
const aborted = (signal: AbortSignal) => new Promise<unknown>((resolve) => {
  if (signal.aborted) resolve(signal.reason);
  else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
});

async function memberWithSession() {
  const tenant = await makeTenant(db);
  const user = await makeUser(db, { memberOf: [[tenant.id, "member"], [(await makeTenant(db)).id, "member"]] });
  return { tenant: tenant.id, user: user.id, identity: await sessionOf(db, user.id) };
}

describe("an open stream's session", () => {
  it("ends the stream when the session is signed out", async () => {
    const { tenant, identity } = await memberWithSession();
    const request = new AbortController();
    const signal = whileSessionHolds(request.signal, () => stillMember(db.prisma, identity, tenant), CHECK_MS);
    await new Promise((resolve) => setTimeout(resolve, CHECK_MS * 5));
    expect(signal.aborted).toBe(false);
    await endSession(db.prisma, identity.sessionId);
    expect(await aborted(signal)).toBe("session ended");
  });

  it("ends the stream when the user is removed from the tenant, though still a member elsewhere", async () => {
    const { tenant, user, identity } = await memberWithSession();
    const signal = whileSessionHolds(new AbortController().signal, () => stillMember(db.prisma, identity, tenant), CHECK_MS);
    await removeMember(db.prisma, { tenantId: tenant, userId: user });
    expect(await aborted(signal)).toBe("session ended");
  });

  it("ends with the request, and survives a check that fails", async () => {
    const request = new AbortController();
    let checks = 0;
    const signal = whileSessionHolds(request.signal, async () => {
      checks++;
      throw new Error("database away");
    }, CHECK_MS);
    while (checks < 3) await new Promise((resolve) => setTimeout(resolve, CHECK_MS));
    expect(signal.aborted).toBe(false);
    request.abort("client gone");
    expect(await aborted(signal)).toBe("client gone");
  });
});
