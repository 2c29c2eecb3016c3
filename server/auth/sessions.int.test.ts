// Revocable sessions on a real PostgreSQL: a session reads as its user while its row lives, and
// not at all once it is ended (sign-out), once the user is removed from their last tenant, or
// when the token names no session; other sessions of the user are not touched by a sign-out; a
// sign-in racing a password change gets no session.
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser, PASSWORD, sessionOf } from "../../test/factories.ts";
import { addMember, removeMember } from "../control/users.ts";
import { authenticateCredentials } from "./credentials.ts";
import { hashPassword } from "./password.ts";
import { endSession, endSessionsOf, identityOf, readSessionUser, startSession } from "./sessions.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

it("a session is its user until it is ended; ending one leaves the user's others", async () => {
  const user = await makeUser(db);
  const laptop = await sessionOf(db, user.id);
  const phone = await sessionOf(db, user.id);
  expect(await readSessionUser(db.prisma, laptop)).toMatchObject({ id: user.id, email: user.email });
  await endSession(db.prisma, laptop.sessionId);
  expect(await readSessionUser(db.prisma, laptop)).toBeNull();
  expect(await readSessionUser(db.prisma, phone)).toMatchObject({ id: user.id });
  // A session id is the user's own: another user's id with it reads as nobody.
  const other = await makeUser(db);
  expect(await readSessionUser(db.prisma, { userId: other.id, sessionId: phone.sessionId })).toBeNull();
  expect(await endSessionsOf(db.prisma, user.id)).toBe(1);
  expect(await readSessionUser(db.prisma, phone)).toBeNull();
});

it("removal from the last tenant ends every session of the user; removal from one of two does not", async () => {
  const [a, b] = [(await makeTenant(db)).id, (await makeTenant(db)).id];
  const user = await makeUser(db, { memberOf: [[a, "member"], [b, "member"]] });
  await makeUser(db, { memberOf: [[a, "admin"], [b, "admin"]] }); // the last admin stays
  const session = await sessionOf(db, user.id);
  await removeMember(db.prisma, { tenantId: a, userId: user.id });
  expect(await readSessionUser(db.prisma, session)).not.toBeNull();
  await removeMember(db.prisma, { tenantId: b, userId: user.id });
  expect(await readSessionUser(db.prisma, session)).toBeNull();
  // Added again, they sign in afresh.
  await addMember(db.prisma, { tenantId: a, email: user.email, role: "member" });
  expect(await readSessionUser(db.prisma, session)).toBeNull();
});

it("a token that names no session (from before sessions were revocable) is nobody", async () => {
  expect(identityOf({ user: { id: "u" } })).toBeNull();
  expect(identityOf({ user: { id: "u" }, sessionId: "s" })).toEqual({ userId: "u", sessionId: "s" });
  expect(await readSessionUser(db.prisma, null)).toBeNull();
});

it("a sign-in clears the user's sessions older than a token lives", async () => {
  const user = await makeUser(db);
  const old = await sessionOf(db, user.id);
  await db.sql.query("UPDATE user_sessions SET created_at = now() - interval '31 days' WHERE id = $1", [old.sessionId]);
  const fresh = await sessionOf(db, user.id);
  const { rows } = await db.sql.query("SELECT id FROM user_sessions WHERE user_id = $1", [user.id]);
  expect(rows.map((r) => r.id)).toEqual([fresh.sessionId]);
});

it("a sign-in whose password was changed before its session was made gets no session", async () => {
  const user = await makeUser(db);
  const signedIn = await authenticateCredentials(db.prisma, { email: user.email, password: PASSWORD, ip: null });
  // The password changes between the check and the session (ending every session there is).
  await db.prisma.user.update({ where: { id: user.id }, data: { passwordHash: await hashPassword("a-brand-new-password") } });
  expect(await startSession(db.prisma, user.id, { passwordHash: signedIn.verifiedHash })).toBeNull();
  expect(await db.prisma.userSession.count({ where: { userId: user.id } })).toBe(0);
  // Checked against the hash that is the user's now, it is made.
  const again = await authenticateCredentials(db.prisma, { email: user.email, password: "a-brand-new-password", ip: null });
  const sessionId = await startSession(db.prisma, user.id, { passwordHash: again.verifiedHash });
  expect(await readSessionUser(db.prisma, { userId: user.id, sessionId: sessionId! })).toMatchObject({ id: user.id });
});
