// Accepting invitations (server/control/invitations.ts) against a real PostgreSQL: nobody is a
// member before accepting; a token is used once, also under concurrency; unknown, expired,
// revoked, replaced, declined and used tokens are refused with one and the same error; only the
// invited address may accept; someone new gets the account, the membership and the used
// invitation together, and an address with an account must sign in instead.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "../../engine/errors.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser, PASSWORD } from "../../test/factories.ts";
import { authenticateCredentials } from "../auth/credentials.ts";
import {
  ACCOUNT_EXISTS,
  acceptAsNewUser,
  acceptInvitation,
  createInvitation,
  declineInvitation,
  INVALID_INVITATION,
  INVITATION_TTL_MS,
  revokeInvitation,
  viewInvitation,
} from "./invitations.ts";
import { addMember } from "./users.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const NEW_PASSWORD = "a new password of mine";
const unknownEmail = () => `new-${randomBytes(4).toString("hex")}@example.test`;

/** A tenant with an admin, and an invitation of `email` to it; the token as the link carries it. */
async function invited(email: string, role: "member" | "admin" = "member", now?: Date) {
  const tenant = await makeTenant(db);
  const admin = await makeUser(db, { memberOf: [[tenant.id, "admin"]] });
  const invitation = await createInvitation(db.prisma, { tenantId: tenant.id, email, role, invitedByUserId: admin.id }, now);
  return { tenantId: tenant.id, admin, ...invitation };
}

/** What a refused call threw, as code and message (the same for every dead token). */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(() => null, (e: unknown) => e);
  if (!isAppError(error)) throw new Error(`expected an AppError, got ${String(error)}`);
  return { code: error.code, message: error.message };
}
const INVALID = { code: "not_found", message: INVALID_INVITATION };

const roleOf = async (tenantId: string, userId: string) =>
  (await db.prisma.membership.findUnique({ where: { tenantId_userId: { tenantId, userId } }, select: { role: true } }))?.role ?? null;

const auditOf = async (tenantId: string, action: string) =>
  (await db.sql.query("SELECT actor, actor_user_id, details FROM audit_log WHERE tenant_id = $1 AND action = $2 ORDER BY id", [tenantId, action]))
    .rows;

describe("accepting an invitation", () => {
  it("makes the membership only then, once, in the invited role, audited", async () => {
    const user = await makeUser(db, { memberOf: [[(await makeTenant(db)).id, "admin"]] });
    const invitation = await invited(user.email, "admin");
    expect(await roleOf(invitation.tenantId, user.id)).toBeNull();
    await expect(viewInvitation(db.prisma, invitation.token)).resolves.toMatchObject({
      tenantId: invitation.tenantId, email: user.email, role: "admin", expiresAt: invitation.expiresAt,
    });

    await expect(acceptInvitation(db.prisma, { token: invitation.token, userId: user.id })).resolves.toEqual({
      tenantId: invitation.tenantId, email: user.email, role: "admin",
    });
    expect(await roleOf(invitation.tenantId, user.id)).toBe("admin");
    expect(await auditOf(invitation.tenantId, "member.join")).toEqual([
      { actor: user.email, actor_user_id: user.id, details: { email: user.email, role: "admin", invitation: invitation.id, new_user: false } },
    ]);

    // Used: refused like any dead token, and the page shows it as invalid.
    expect(await refusal(acceptInvitation(db.prisma, { token: invitation.token, userId: user.id }))).toEqual(INVALID);
    await expect(viewInvitation(db.prisma, invitation.token)).resolves.toBeNull();
    expect(await auditOf(invitation.tenantId, "member.join")).toHaveLength(1);
  });

  it("of many acceptances at once, exactly one wins", async () => {
    const user = await makeUser(db);
    const invitation = await invited(user.email);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => acceptInvitation(db.prisma, { token: invitation.token, userId: user.id })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "not_found", message: INVALID_INVITATION });
    expect(await db.prisma.membership.count({ where: { tenantId: invitation.tenantId } })).toBe(2);
    expect(await auditOf(invitation.tenantId, "member.join")).toHaveLength(1);
  });

  it("keeps the role of a membership made meanwhile (the CLI adds directly): accepting never demotes", async () => {
    const user = await makeUser(db);
    const invitation = await invited(user.email, "member");
    await addMember(db.prisma, { tenantId: invitation.tenantId, email: user.email, role: "admin" });
    await acceptInvitation(db.prisma, { token: invitation.token, userId: user.id });
    expect(await roleOf(invitation.tenantId, user.id)).toBe("admin");
  });

  it("signed in as another address, refuses to accept or decline, and the invitation still works for its invitee", async () => {
    const invitee = await makeUser(db);
    const someoneElse = await makeUser(db);
    const invitation = await invited(invitee.email);
    expect(await refusal(acceptInvitation(db.prisma, { token: invitation.token, userId: someoneElse.id }))).toEqual(INVALID);
    expect(await refusal(declineInvitation(db.prisma, { token: invitation.token, userId: someoneElse.id }))).toEqual(INVALID);
    expect(await roleOf(invitation.tenantId, someoneElse.id)).toBeNull();
    await expect(viewInvitation(db.prisma, invitation.token)).resolves.not.toBeNull();
    await acceptInvitation(db.prisma, { token: invitation.token, userId: invitee.id });
    expect(await roleOf(invitation.tenantId, invitee.id)).toBe("member");
  });

  it("declining kills the link and makes no membership", async () => {
    const user = await makeUser(db);
    const invitation = await invited(user.email);
    await declineInvitation(db.prisma, { token: invitation.token, userId: user.id });
    expect(await roleOf(invitation.tenantId, user.id)).toBeNull();
    expect(await refusal(acceptInvitation(db.prisma, { token: invitation.token, userId: user.id }))).toEqual(INVALID);
    expect(await auditOf(invitation.tenantId, "member.invite.decline")).toEqual([
      { actor: user.email, actor_user_id: user.id, details: { email: user.email, role: "member", invitation: invitation.id } },
    ]);
  });
});

describe("a token that cannot be used", () => {
  it("unknown, malformed, expired, revoked, replaced, declined or used: one and the same refusal, whichever way it is used", async () => {
    const user = await makeUser(db);
    const dead: Record<string, string> = {
      unknown: randomBytes(32).toString("base64url"),
      malformed: "not a token",
      empty: "",
    };
    // Made 8 days ago: it expired a day ago.
    dead.expired = (await invited(user.email, "member", new Date(Date.now() - INVITATION_TTL_MS - 24 * 3600 * 1000))).token;
    const revoked = await invited(user.email);
    await revokeInvitation(db.prisma, { tenantId: revoked.tenantId, id: revoked.id });
    dead.revoked = revoked.token;
    const replaced = await invited(user.email);
    await createInvitation(db.prisma, { tenantId: replaced.tenantId, email: user.email, role: "member", invitedByUserId: null });
    dead.replaced = replaced.token;
    const declined = await invited(user.email);
    await declineInvitation(db.prisma, { token: declined.token, userId: user.id });
    dead.declined = declined.token;
    const used = await invited(user.email);
    await acceptInvitation(db.prisma, { token: used.token, userId: user.id });
    dead.used = used.token;

    const membershipsBefore = await db.prisma.membership.count({ where: { userId: user.id } });
    for (const [what, token] of Object.entries(dead)) {
      await expect(viewInvitation(db.prisma, token), what).resolves.toBeNull();
      expect(await refusal(acceptInvitation(db.prisma, { token, userId: user.id })), what).toEqual(INVALID);
      expect(await refusal(declineInvitation(db.prisma, { token, userId: user.id })), what).toEqual(INVALID);
      expect(await refusal(acceptAsNewUser(db.prisma, { token, password: NEW_PASSWORD })), what).toEqual(INVALID);
    }
    expect(await db.prisma.membership.count({ where: { userId: user.id } })).toBe(membershipsBefore);
    // The replacement of the replaced one still works.
    const [pending] = await db.prisma.invitation.findMany({ where: { tenantId: replaced.tenantId, acceptedAt: null, revokedAt: null } });
    expect(pending?.email).toBe(user.email);
  });
});

describe("accepting as someone new to Bulkhead", () => {
  it("makes the account for the invited address with the chosen password, the membership and the used invitation at once", async () => {
    const email = unknownEmail();
    const invitation = await invited(email, "admin");
    const joined = await acceptAsNewUser(db.prisma, { token: invitation.token, password: NEW_PASSWORD });
    expect(joined).toEqual({ tenantId: invitation.tenantId, email, role: "admin" });

    const signedIn = await authenticateCredentials(db.prisma, { email, password: NEW_PASSWORD, ip: null });
    expect(await roleOf(invitation.tenantId, signedIn.id)).toBe("admin");
    const { rows } = await db.sql.query("SELECT * FROM users WHERE id = $1", [signedIn.id]);
    expect(rows[0].password_hash).toMatch(/^\$2[aby]\$/);
    expect(JSON.stringify(rows[0])).not.toContain(NEW_PASSWORD);
    expect(await auditOf(invitation.tenantId, "member.join")).toEqual([
      { actor: email, actor_user_id: signedIn.id, details: { email, role: "admin", invitation: invitation.id, new_user: true } },
    ]);
    expect(JSON.stringify(await auditOf(invitation.tenantId, "user.create"))).not.toContain(NEW_PASSWORD);
    expect(await refusal(acceptAsNewUser(db.prisma, { token: invitation.token, password: NEW_PASSWORD }))).toEqual(INVALID);
  });

  it("refuses a short password, creating nothing: the invitation still works", async () => {
    const email = unknownEmail();
    const invitation = await invited(email);
    expect(await refusal(acceptAsNewUser(db.prisma, { token: invitation.token, password: "short" }))).toEqual({
      code: "invalid_argument", message: "the password must be at least 8 characters",
    });
    expect(await db.prisma.user.findUnique({ where: { email } })).toBeNull();
    await expect(viewInvitation(db.prisma, invitation.token)).resolves.not.toBeNull();
  });

  it("tells an address with an account to sign in, and changes nothing of that account", async () => {
    const user = await makeUser(db);
    const invitation = await invited(user.email);
    expect(await refusal(acceptAsNewUser(db.prisma, { token: invitation.token, password: NEW_PASSWORD }))).toEqual({
      code: "already_exists", message: ACCOUNT_EXISTS,
    });
    await expect(authenticateCredentials(db.prisma, { email: user.email, password: PASSWORD, ip: null })).resolves.toMatchObject({ id: user.id });
    expect(await roleOf(invitation.tenantId, user.id)).toBeNull();
    await expect(viewInvitation(db.prisma, invitation.token)).resolves.not.toBeNull();
  });

  it("of many at once, exactly one account is made and joins", async () => {
    const email = unknownEmail();
    const invitation = await invited(email);
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, (_, i) => acceptAsNewUser(db.prisma, { token: invitation.token, password: `${NEW_PASSWORD} ${i}` })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) {
      if (r.status === "rejected") expect([INVALID_INVITATION, ACCOUNT_EXISTS]).toContain((r.reason as Error).message);
    }
    const users = await db.prisma.user.findMany({ where: { email }, select: { id: true } });
    expect(users).toHaveLength(1);
    expect(await roleOf(invitation.tenantId, users[0]!.id)).toBe("member");
  });
});
