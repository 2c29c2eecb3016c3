// Ending sessions on purpose, on a real PostgreSQL, through the tRPC procedures: a password change
// ends every session of the user (a copied token included) and only theirs, and a wrong current
// password changes nothing; "sign out everywhere" by the user and, for any user, by an operator.
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser, PASSWORD, sessionOf } from "../../test/factories.ts";
import { authenticateCredentials } from "../auth/credentials.ts";
import { readSessionUser, type SessionIdentity } from "../auth/sessions.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenant: string;
beforeAll(async () => {
  db = await freshDatabase();
  tenant = (await makeTenant(db)).id;
});
afterAll(() => db.drop());

const callerFor = (userId: string) => createCaller(createContext(db, userId));
const signIn = (email: string, password: string) => authenticateCredentials(db.prisma, { email, password, ip: null });
const live = async (...sessions: SessionIdentity[]) => Promise.all(sessions.map(async (s) => (await readSessionUser(db.prisma, s)) !== null));
const auditOf = (action: string, email: string) =>
  db.prisma.auditLog.findMany({ where: { action, details: { path: ["email"], equals: email } }, select: { actor: true, details: true } });
/** The refusal a call ends in: code and message. */
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ code: "none (it succeeded)", message: "" }),
    (error: unknown) => (error instanceof TRPCError ? { code: error.code, message: error.message } : { code: "not a TRPCError", message: String(error) }),
  );

/** A member of the tenant signed in on two devices, one of whose tokens was also copied. */
async function userOnTwoDevices() {
  const user = await makeUser(db, { memberOf: [[tenant, "member"]] });
  const laptop = await sessionOf(db, user.id);
  const phone = await sessionOf(db, user.id);
  // A copied token is the same cookie elsewhere: the same identity, the same row.
  const copied: SessionIdentity = structuredClone(laptop);
  return { user, laptop, phone, copied };
}

describe("account.changePassword", () => {
  it("ends every session of the user, a copied token included, and no one else's; the new password signs in, the old one does not", async () => {
    const { user, laptop, phone, copied } = await userOnTwoDevices();
    const other = await makeUser(db, { memberOf: [[tenant, "admin"]] });
    const othersSession = await sessionOf(db, other.id);
    expect(await live(laptop, phone, copied)).toEqual([true, true, true]);

    const answer = await callerFor(user.id).account.changePassword({ currentPassword: PASSWORD, newPassword: "a brand new passphrase" });

    expect(answer).toEqual({ ended: 2 });
    expect(await live(laptop, phone, copied)).toEqual([false, false, false]);
    expect(await live(othersSession)).toEqual([true]);
    await expect(signIn(user.email, "a brand new passphrase")).resolves.toMatchObject({ id: user.id });
    await expect(signIn(user.email, PASSWORD)).rejects.toMatchObject({ code: "unauthorized" });
    await expect(signIn(other.email, PASSWORD)).resolves.toMatchObject({ id: other.id });
    expect(await auditOf("user.password", user.email)).toEqual([{ actor: user.email, details: { email: user.email, sessions_ended: 2 } }]);
  });

  it("refuses a wrong current password as BAD_REQUEST, changes nothing, and counts it against the sign-in throttle", async () => {
    const { user, laptop, phone } = await userOnTwoDevices();
    const wrong = await refusal(callerFor(user.id).account.changePassword({ currentPassword: "not my password", newPassword: "a brand new passphrase" }));

    expect(wrong).toEqual({ code: "BAD_REQUEST", message: "the current password is wrong" });
    expect(await live(laptop, phone)).toEqual([true, true]);
    expect(await db.prisma.signInThrottle.findUnique({ where: { key: `account:${user.email}` } })).toMatchObject({ failures: 1 });
    expect(await auditOf("user.password", user.email)).toEqual([]);
    await expect(signIn(user.email, "a brand new passphrase")).rejects.toMatchObject({ code: "unauthorized" });
    // The sign-in above failed too (2 so far); three more and the account is throttled, for
    // password changes and sign-ins alike, the right password included.
    for (let i = 0; i < 3; i++) await refusal(callerFor(user.id).account.changePassword({ currentPassword: `wrong ${i}`, newPassword: "a brand new passphrase" }));
    expect(await refusal(callerFor(user.id).account.changePassword({ currentPassword: PASSWORD, newPassword: "a brand new passphrase" }))).toMatchObject({ code: "TOO_MANY_REQUESTS" });
    await expect(signIn(user.email, PASSWORD)).rejects.toMatchObject({ code: "rate_limited" });
    expect(await live(laptop, phone)).toEqual([true, true]);

    // Once the window has passed, the old password is still the one.
    await db.prisma.signInThrottle.deleteMany({ where: { key: `account:${user.email}` } });
    await expect(signIn(user.email, PASSWORD)).resolves.toMatchObject({ id: user.id });
  });

  it("refuses a new password that is too short, longer than bcrypt reads, or the current one, changing nothing", async () => {
    const { user, laptop, phone } = await userOnTwoDevices();
    const change = (newPassword: string) => refusal(callerFor(user.id).account.changePassword({ currentPassword: PASSWORD, newPassword }));

    expect(await change("short")).toEqual({ code: "BAD_REQUEST", message: "the new password must be at least 8 characters" });
    // 37 characters, 74 bytes: bcrypt would ignore the last two.
    expect(await change("é".repeat(37))).toEqual({ code: "BAD_REQUEST", message: "the new password must be at most 72 bytes (UTF-8): bcrypt ignores the rest" });
    expect(await change(PASSWORD)).toEqual({ code: "BAD_REQUEST", message: "the new password is the current one: choose another" });
    expect(await live(laptop, phone)).toEqual([true, true]);
    expect(await auditOf("user.password", user.email)).toEqual([]);
    await expect(signIn(user.email, PASSWORD)).resolves.toMatchObject({ id: user.id });

    // 72 bytes exactly is a password like any other.
    const longest = "é".repeat(36);
    expect(await callerFor(user.id).account.changePassword({ currentPassword: PASSWORD, newPassword: longest })).toEqual({ ended: 2 });
    await expect(signIn(user.email, longest)).resolves.toMatchObject({ id: user.id });
  });

  it("of two changes from the same current password at once, one wins and the other changes nothing", async () => {
    const { user } = await userOnTwoDevices();
    const answers = await Promise.allSettled(
      ["first new password", "second new password"].map((newPassword) => callerFor(user.id).account.changePassword({ currentPassword: PASSWORD, newPassword })),
    );
    const won = answers.findIndex((a) => a.status === "fulfilled");
    expect(answers.map((a) => a.status).sort()).toEqual(["fulfilled", "rejected"]);
    const winner = won === 0 ? "first new password" : "second new password";
    const loser = won === 0 ? "second new password" : "first new password";
    await expect(signIn(user.email, winner)).resolves.toMatchObject({ id: user.id });
    await expect(signIn(user.email, loser)).rejects.toMatchObject({ code: "unauthorized" });
    expect(await auditOf("user.password", user.email)).toHaveLength(1);
  });
});

describe("account.signOutEverywhere", () => {
  it("ends every session of the user and no one else's; the password stays", async () => {
    const { user, laptop, phone, copied } = await userOnTwoDevices();
    const other = await makeUser(db, { memberOf: [[tenant, "member"]] });
    const othersSession = await sessionOf(db, other.id);
    expect(await callerFor(user.id).account.sessions()).toEqual({ live: 2 });

    expect(await callerFor(user.id).account.signOutEverywhere()).toEqual({ ended: 2 });

    expect(await live(laptop, phone, copied)).toEqual([false, false, false]);
    expect(await live(othersSession)).toEqual([true]);
    expect(await callerFor(user.id).account.sessions()).toEqual({ live: 0 });
    expect(await auditOf("user.sessions.end", user.email)).toEqual([{ actor: user.email, details: { email: user.email, ended: 2 } }]);
    await expect(signIn(user.email, PASSWORD)).resolves.toMatchObject({ id: user.id });
  });
});

describe("ops.users.signOutEverywhere", () => {
  it("ends the named user's sessions for an operator, answering how many, audited", async () => {
    const operator = await makeUser(db, { isOperator: true });
    const operatorsSession = await sessionOf(db, operator.id);
    const { user, laptop, phone, copied } = await userOnTwoDevices();
    const bystander = await makeUser(db, { memberOf: [[tenant, "member"]] });
    const bystandersSession = await sessionOf(db, bystander.id);

    // The email as typed, in any case.
    const answer = await callerFor(operator.id).ops.users.signOutEverywhere({ email: ` ${user.email.toUpperCase()} ` });

    expect(answer).toEqual({ email: user.email, ended: 2 });
    expect(await live(laptop, phone, copied)).toEqual([false, false, false]);
    expect(await live(bystandersSession, operatorsSession)).toEqual([true, true]);
    expect(await auditOf("user.sessions.end", user.email)).toEqual([{ actor: operator.email, details: { email: user.email, ended: 2 } }]);
    // Again: nothing left to end.
    expect(await callerFor(operator.id).ops.users.signOutEverywhere({ email: user.email })).toEqual({ email: user.email, ended: 0 });
  });

  it("answers NOT_FOUND for an email no account has, and BAD_REQUEST for one that is not an email", async () => {
    const operator = await makeUser(db, { isOperator: true });
    expect(await refusal(callerFor(operator.id).ops.users.signOutEverywhere({ email: "nobody@example.test" }))).toEqual({ code: "NOT_FOUND", message: "user not found" });
    expect(await refusal(callerFor(operator.id).ops.users.signOutEverywhere({ email: "not an email" }))).toMatchObject({ code: "BAD_REQUEST" });
  });

  it("is refused to anyone but an operator, ending nothing", async () => {
    const { user, laptop, phone } = await userOnTwoDevices();
    const admin = await makeUser(db, { memberOf: [[tenant, "admin"]] });
    const member = await makeUser(db, { memberOf: [[tenant, "member"]] });
    const auditsBefore = await db.prisma.auditLog.count({ where: { action: "user.sessions.end" } });
    // The refusal's exact answer is the operator gate's (server/api/trpc.ts): here only that it is one.
    for (const caller of [admin, member, user]) {
      const answer = await refusal(callerFor(caller.id).ops.users.signOutEverywhere({ email: user.email }));
      expect(answer.code).not.toBe("none (it succeeded)");
      expect(answer.code).not.toBe("not a TRPCError");
    }
    expect(await live(laptop, phone)).toEqual([true, true]);
    expect(await db.prisma.auditLog.count({ where: { action: "user.sessions.end" } })).toBe(auditsBefore);
  });
});
