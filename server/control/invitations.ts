// Invitations: how anyone joins a tenant from the web app. A tenant admin invites an email address
// and gets a one-time link to pass on; the invitee joins only by accepting it. Inviting answers
// the same whatever the address is (an account elsewhere on the platform, or none), so the form is
// no oracle for who has an account, and nobody is put into a tenant without their consent.
// Operators (the CLI's `members add`, ops.createTenant) still add members directly (users.ts).
import { createHash, randomBytes } from "node:crypto";
import { AppError, notFound } from "../../engine/errors.ts";
import { hashPassword, newPasswordProblem } from "../auth/password.ts";
import type { Prisma as PrismaTypes } from "../db/generated/client.ts";
import type { Prisma } from "../db/prisma.ts";
import { recordAudit } from "./audit.ts";
import { assertRole, normalizeEmail, type Role } from "./users.ts";

type Tx = PrismaTypes.TransactionClient;

/** How long a link works: long enough to be read after a weekend, short enough not to linger. */
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** The public page's path for a token (the only place a token is ever shown). */
export const INVITE_PATH_PREFIX = "/invite/";

/**
 * The one answer for a token that cannot be used, whatever the reason (unknown, expired, revoked,
 * replaced, already used, or meant for another account): whoever holds a dead link learns nothing
 * about what became of it.
 */
export const INVALID_INVITATION = "This invitation is not valid (expired, revoked or already used)";

export const ACCOUNT_EXISTS = "An account with this address exists: sign in to accept";

const invalid = () => new AppError("not_found", INVALID_INVITATION);

/** 32 random bytes, base64url: 43 characters, unguessable, safe in a URL path as is. */
function newToken(): string {
  return randomBytes(32).toString("base64url");
}

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * SHA-256 of the token, the only form stored: tokens are 256-bit random, so a fast hash is as
 * strong as a slow one (as for API keys), and a leaked table holds no usable link.
 */
export function hashInvitationToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The rows an invitation's token still works for: not accepted, not revoked, not expired. */
const pending = (now: Date) => ({ acceptedAt: null, revokedAt: null, expiresAt: { gt: now } });

// Invitation ids are UUIDs in the database; anything else is simply not one of the tenant's.
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const isUniqueViolation = (error: unknown) => (error as { code?: string } | null)?.code === "P2002";

// ---------------------------------------------------------------- tenant admins

export interface CreatedInvitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: Date;
  /** Returned once, to the admin who invited; stored only as its hash. */
  token: string;
  /** An earlier pending invitation of the address was revoked by this one. */
  replaced: boolean;
}

/**
 * Invites an address to the tenant. Nothing here looks at whether the address has an account, so
 * the answer cannot depend on it. A current member is refused (CONFLICT): the admin sees the
 * members list anyway. Inviting a pending address again replaces its invitation: the old link
 * stops working, so a link sent to a wrong place can be killed by sending a new one.
 */
export async function createInvitation(
  prisma: Prisma,
  input: { tenantId: string; email: string; role: string; invitedByUserId: string | null },
  now = new Date(),
): Promise<CreatedInvitation> {
  assertRole(input.role);
  const role = input.role;
  const email = normalizeEmail(input.email);
  const token = newToken();
  return prisma.$transaction(async (tx) => {
    // Two invitations of one tenant at once take turns, so exactly one of them stays pending (the
    // partial unique index in the migration would refuse the second). NO KEY UPDATE, not UPDATE:
    // an acceptance inserting a membership (a foreign key to this row) is not held up by it.
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${input.tenantId} FOR NO KEY UPDATE`;
    if (await tx.membership.findFirst({ where: { tenantId: input.tenantId, user: { email } }, select: { userId: true } })) {
      throw new AppError("already_exists", `${email} is already a member of this tenant`, ["email"]);
    }
    // Expired ones too: they would otherwise hold the (tenant, email) slot of the unique index.
    const { count } = await tx.invitation.updateMany({
      where: { tenantId: input.tenantId, email, acceptedAt: null, revokedAt: null },
      data: { revokedAt: now },
    });
    const created = await tx.invitation.create({
      data: {
        tenantId: input.tenantId,
        email,
        role,
        tokenHash: hashInvitationToken(token),
        invitedByUserId: input.invitedByUserId,
        createdAt: now,
        expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
      },
      select: { id: true, expiresAt: true },
    });
    return { id: created.id, email, role, expiresAt: created.expiresAt, token, replaced: count > 0 };
  });
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
  /** The inviting admin's email; null once their account is gone (or the CLI made it). */
  invitedBy: string | null;
}

/** The tenant's pending invitations, newest first; never a token or its hash. */
export async function listPendingInvitations(prisma: Prisma, tenantId: string, now = new Date()): Promise<PendingInvitation[]> {
  const rows = await prisma.invitation.findMany({
    where: { tenantId, ...pending(now) },
    select: { id: true, email: true, role: true, createdAt: true, expiresAt: true, invitedBy: { select: { email: true } } },
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
  });
  return rows.map(({ invitedBy, ...row }) => ({ ...row, invitedBy: invitedBy?.email ?? null }));
}

/**
 * Revokes one of the tenant's pending invitations: its link stops working at once. Another
 * tenant's invitation, one no longer pending and an id that does not exist all give the same
 * not-found (the list shows only pending ones, so there is nothing else to revoke).
 */
export async function revokeInvitation(
  prisma: Prisma,
  input: { tenantId: string; id: string },
  now = new Date(),
): Promise<{ id: string; email: string; role: Role }> {
  if (!UUID_PATTERN.test(input.id)) throw notFound("invitation");
  // One conditional UPDATE: of a revocation and an acceptance at once, exactly one takes effect.
  const [revoked] = await prisma.invitation.updateManyAndReturn({
    where: { id: input.id, tenantId: input.tenantId, ...pending(now) },
    data: { revokedAt: now },
    select: { id: true, email: true, role: true },
  });
  if (!revoked) throw notFound("invitation");
  return revoked;
}

// ---------------------------------------------------------------- the invitee

export interface InvitationView {
  tenantId: string;
  tenantName: string;
  email: string;
  role: Role;
  expiresAt: Date;
}

/** What the invitation page shows for a token that still works; null for any other. */
export async function viewInvitation(prisma: Prisma, token: string, now = new Date()): Promise<InvitationView | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const row = await prisma.invitation.findFirst({
    where: { tokenHash: hashInvitationToken(token), ...pending(now) },
    select: { tenantId: true, email: true, role: true, expiresAt: true, tenant: { select: { name: true } } },
  });
  return row && { tenantId: row.tenantId, tenantName: row.tenant.name, email: row.email, role: row.role, expiresAt: row.expiresAt };
}

/**
 * Marks the token's invitation used, if it still works (and, with `email`, is for that address):
 * one conditional UPDATE, so of any number of uses at once exactly one gets the row and the
 * others find it already used. Throws the one invalid answer otherwise.
 */
async function takeInvitation(tx: Tx, token: string, use: "acceptedAt" | "revokedAt", now: Date, email?: string) {
  if (!TOKEN_PATTERN.test(token)) throw invalid();
  const [taken] = await tx.invitation.updateManyAndReturn({
    where: { tokenHash: hashInvitationToken(token), ...pending(now), ...(email !== undefined ? { email } : {}) },
    data: { [use]: now },
    select: { id: true, tenantId: true, email: true, role: true },
  });
  if (!taken) throw invalid();
  return taken;
}

/** The membership an invitation grants. An existing one (the CLI added them meanwhile) keeps its role: accepting never demotes. */
async function join(tx: Tx, invitation: { tenantId: string; role: Role }, userId: string) {
  await tx.membership.createMany({ data: [{ tenantId: invitation.tenantId, userId, role: invitation.role }], skipDuplicates: true });
}

export interface Joined {
  tenantId: string;
  email: string;
  role: Role;
}

async function signedInUser(prisma: Prisma, userId: string) {
  const user = await prisma.user.findUnique({ where: { id: userId }, select: { id: true, email: true } });
  if (!user) throw new AppError("unauthorized", "sign in first");
  return user;
}

/**
 * The signed-in user accepts: only an invitation for their own address, used once, and the
 * membership with it in one transaction (no used invitation without its membership, or the other
 * way round). Signed in as anyone else, the token is refused like a dead one.
 */
export async function acceptInvitation(prisma: Prisma, input: { token: string; userId: string }, now = new Date()): Promise<Joined> {
  const user = await signedInUser(prisma, input.userId);
  return prisma.$transaction(async (tx) => {
    const invitation = await takeInvitation(tx, input.token, "acceptedAt", now, user.email);
    await join(tx, invitation, user.id);
    await recordAudit(tx, {
      actor: user.email, actorUserId: user.id, tenantId: invitation.tenantId, action: "member.join",
      details: { email: user.email, role: invitation.role, invitation: invitation.id, new_user: false },
    });
    return { tenantId: invitation.tenantId, email: user.email, role: invitation.role };
  });
}

/** The signed-in invitee declines: the link stops working, and no membership is made. */
export async function declineInvitation(prisma: Prisma, input: { token: string; userId: string }, now = new Date()): Promise<void> {
  const user = await signedInUser(prisma, input.userId);
  await prisma.$transaction(async (tx) => {
    const invitation = await takeInvitation(tx, input.token, "revokedAt", now, user.email);
    await recordAudit(tx, {
      actor: user.email, actorUserId: user.id, tenantId: invitation.tenantId, action: "member.invite.decline",
      details: { email: user.email, role: invitation.role, invitation: invitation.id },
    });
  });
}

/**
 * Someone new to Bulkhead accepts by choosing a password: the account (for the invited address,
 * never another), the membership and the used invitation are made in one transaction.
 *
 * An address that already has an account is told so (ACCOUNT_EXISTS) and must sign in to accept.
 * That answer names whether the address has an account, which inviting never does: it is given
 * only to someone holding a working invitation link, which is a secret for its invitee (as a
 * password-reset link would be), and one invitation per probe is made by an admin and audited.
 */
export async function acceptAsNewUser(prisma: Prisma, input: { token: string; password: string }, now = new Date()): Promise<Joined> {
  const invitation = await viewInvitation(prisma, input.token, now);
  if (!invitation) throw invalid();
  if (await prisma.user.findUnique({ where: { email: invitation.email }, select: { id: true } })) {
    throw new AppError("already_exists", ACCOUNT_EXISTS, ["email"]);
  }
  const problem = newPasswordProblem(input.password);
  if (problem) throw new AppError("invalid_argument", `the password ${problem}`, ["password"]);
  // Hashed before the transaction: bcrypt's ~100 ms need not hold it open.
  const passwordHash = await hashPassword(input.password);
  try {
    return await prisma.$transaction(async (tx) => {
      const taken = await takeInvitation(tx, input.token, "acceptedAt", now);
      const user = await tx.user.create({ data: { email: taken.email, passwordHash }, select: { id: true } });
      await join(tx, taken, user.id);
      const by = { actor: taken.email, actorUserId: user.id, tenantId: taken.tenantId };
      await recordAudit(tx, { ...by, action: "user.create", details: { email: taken.email } });
      await recordAudit(tx, {
        ...by, action: "member.join", details: { email: taken.email, role: taken.role, invitation: taken.id, new_user: true },
      });
      return { tenantId: taken.tenantId, email: taken.email, role: taken.role };
    });
  } catch (error) {
    // The address was registered meanwhile: the transaction is rolled back, the invitation still works.
    if (isUniqueViolation(error)) throw new AppError("already_exists", ACCOUNT_EXISTS, ["email"]);
    throw error;
  }
}
