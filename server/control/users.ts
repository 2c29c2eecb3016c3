// Users and memberships (control plane).
import { randomBytes } from "node:crypto";
import { AppError, notFound } from "../../engine/errors.ts";
import { unstorableText } from "../../engine/text-hygiene.ts";
import { hashPassword, newPasswordProblem } from "../auth/password.ts";
import { endSessionsOf } from "../auth/sessions.ts";
import type { Prisma as PrismaTypes } from "../db/generated/client.ts";
import type { Prisma } from "../db/prisma.ts";

export type Role = "member" | "admin";
export const ROLES: readonly Role[] = ["member", "admin"];

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * The user's role in the tenant, or null: not a member, no such tenant, or an id no tenant can
 * have (too long, or text PostgreSQL could not even compare). One answer for all of them, so every
 * gate built on it (tRPC, pages, live streams) tells "not yours" and "missing" alike.
 */
export async function roleIn(prisma: Prisma, tenantId: string, userId: string): Promise<Role | null> {
  if (tenantId.length > 64 || unstorableText(tenantId)) return null;
  const membership = await prisma.membership.findUnique({ where: { tenantId_userId: { tenantId, userId } }, select: { role: true } });
  return (membership?.role as Role | undefined) ?? null;
}

export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL_PATTERN.test(normalized) || normalized.length > 254) {
    throw new AppError("invalid_argument", `invalid email "${email.slice(0, 64)}"`, ["email"]);
  }
  return normalized;
}

export async function createUser(
  prisma: Prisma,
  input: { email: string; password: string; name?: string; isOperator?: boolean },
): Promise<{ id: string; email: string }> {
  const email = normalizeEmail(input.email);
  const problem = newPasswordProblem(input.password);
  if (problem) throw new AppError("invalid_argument", `password ${problem}`, ["password"]);
  if (await prisma.user.findUnique({ where: { email }, select: { id: true } })) {
    throw new AppError("already_exists", `user "${email}" already exists`, ["email"]);
  }
  return prisma.user.create({
    data: { email, name: input.name ?? "", passwordHash: await hashPassword(input.password), isOperator: input.isOperator ?? false },
    select: { id: true, email: true },
  });
}

/** Adds the user to the tenant, or changes the role of an existing membership. */
export async function addMember(prisma: Prisma, input: { tenantId: string; email: string; role: Role }): Promise<void> {
  if (!ROLES.includes(input.role)) throw new AppError("invalid_argument", `role must be one of ${ROLES.join(", ")}`, ["role"]);
  const email = normalizeEmail(input.email);
  const [tenant, user] = await Promise.all([
    prisma.tenant.findUnique({ where: { id: input.tenantId }, select: { id: true } }),
    prisma.user.findUnique({ where: { email }, select: { id: true } }),
  ]);
  if (!tenant) throw notFound("tenant");
  if (!user) throw notFound("user");
  await prisma.membership.upsert({
    where: { tenantId_userId: { tenantId: tenant.id, userId: user.id } },
    create: { tenantId: tenant.id, userId: user.id, role: input.role },
    update: { role: input.role },
  });
}

// ---------------------------------------------------------------- member management (admins, operators)

type Tx = PrismaTypes.TransactionClient;

export interface AddedMember {
  userId: string;
  email: string;
  role: Role;
  /** Set only when the account was created by this call: returned once, stored only as a bcrypt hash. */
  oneTimePassword: string | null;
}

export interface MemberChange {
  userId: string;
  email: string;
  /** The role before the change. */
  from: Role;
  /** The role after it; null once removed. */
  to: Role | null;
  /** False when there was nothing to do (the role was already the one asked for). */
  changed: boolean;
}

// Membership keys are UUIDs in the database; anything else is simply not a member (and must not
// reach PostgreSQL, which would reject it with an error that differs from "not found").
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function assertRole(role: string): asserts role is Role {
  if (!ROLES.includes(role as Role)) throw new AppError("invalid_argument", `role must be one of ${ROLES.join(", ")}`, ["role"]);
}

const isUniqueViolation = (error: unknown) => (error as { code?: string } | null)?.code === "P2002";

/** 16 base64url characters (96 random bits) for an account an admin creates on someone's behalf. */
export function generateOneTimePassword(): string {
  return randomBytes(12).toString("base64url");
}

/**
 * Adds a user to the tenant by email, for operators only (ops.createTenant names the new tenant's
 * first admin): its answer tells whether the email has an account, and it adds an existing
 * account without asking. Tenant admins invite instead (invitations.ts). An unknown email gets a
 * new account with a generated password, returned here once. Someone who is already a member is
 * refused rather than silently given the new role, so "add" can never demote anyone
 * (setMemberRole guards the last admin).
 */
export async function addMemberByEmail(
  prisma: Prisma,
  input: { tenantId: string; email: string; role: string },
): Promise<AddedMember> {
  assertRole(input.role);
  const role = input.role;
  const email = normalizeEmail(input.email);
  const alreadyMember = () => new AppError("already_exists", `${email} is already a member of this tenant; change their role instead`, ["email"]);

  const existing = await prisma.user.findUnique({ where: { email }, select: { id: true } });
  if (existing) {
    try {
      await prisma.membership.create({ data: { tenantId: input.tenantId, userId: existing.id, role } });
    } catch (error) {
      if (isUniqueViolation(error)) throw alreadyMember();
      throw error;
    }
    return { userId: existing.id, email, role, oneTimePassword: null };
  }

  const oneTimePassword = generateOneTimePassword();
  // Hashed before the transaction: bcrypt's ~100 ms need not hold it open.
  const passwordHash = await hashPassword(oneTimePassword);
  try {
    // User and membership together, so a failure leaves no account nobody knows the password of.
    const user = await prisma.$transaction(async (tx) => {
      const created = await tx.user.create({ data: { email, passwordHash }, select: { id: true } });
      await tx.membership.create({ data: { tenantId: input.tenantId, userId: created.id, role } });
      return created;
    });
    return { userId: user.id, email, role, oneTimePassword };
  } catch (error) {
    // Someone registered the same email meanwhile: the caller may retry and add the existing user.
    if (isUniqueViolation(error)) throw new AppError("conflict", `${email} was registered meanwhile; try again`, ["email"]);
    throw error;
  }
}

/**
 * Serialises membership changes of one tenant (row lock on the tenant until commit), so two
 * admins demoting each other at once cannot both pass the last-admin check.
 */
async function lockTenant(tx: Tx, tenantId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId} FOR UPDATE`;
}

async function membershipOf(tx: Tx, tenantId: string, userId: string) {
  const membership = UUID_PATTERN.test(userId)
    ? await tx.membership.findUnique({
        where: { tenantId_userId: { tenantId, userId } },
        select: { role: true, user: { select: { email: true } } },
      })
    : null;
  if (!membership) throw notFound("member");
  return { role: membership.role as Role, email: membership.user.email };
}

async function assertNotLastAdmin(tx: Tx, tenantId: string, email: string, doing: "demote" | "remove"): Promise<void> {
  const admins = await tx.membership.count({ where: { tenantId, role: "admin" } });
  if (admins <= 1) {
    throw new AppError(
      "invalid_argument",
      `cannot ${doing} ${email}: they are the tenant's last admin; make another member an admin first`,
      ["userId"],
    );
  }
}

/** Changes a member's role; refuses to demote the tenant's last admin. */
export async function setMemberRole(
  prisma: Prisma,
  input: { tenantId: string; userId: string; role: string },
): Promise<MemberChange> {
  assertRole(input.role);
  const to = input.role;
  return prisma.$transaction(async (tx) => {
    await lockTenant(tx, input.tenantId);
    const { role: from, email } = await membershipOf(tx, input.tenantId, input.userId);
    if (from === to) return { userId: input.userId, email, from, to, changed: false };
    if (from === "admin") await assertNotLastAdmin(tx, input.tenantId, email, "demote");
    await tx.membership.update({ where: { tenantId_userId: { tenantId: input.tenantId, userId: input.userId } }, data: { role: to } });
    return { userId: input.userId, email, from, to, changed: true };
  });
}

/** Removes a member (their account stays: it may belong to other tenants); never the last admin. */
export async function removeMember(prisma: Prisma, input: { tenantId: string; userId: string }): Promise<MemberChange> {
  return prisma.$transaction(async (tx) => {
    await lockTenant(tx, input.tenantId);
    const { role: from, email } = await membershipOf(tx, input.tenantId, input.userId);
    if (from === "admin") await assertNotLastAdmin(tx, input.tenantId, email, "remove");
    await tx.membership.delete({ where: { tenantId_userId: { tenantId: input.tenantId, userId: input.userId } } });
    // Removed from the last tenant: whoever holds one of the user's sessions is signed out at once.
    if ((await tx.membership.count({ where: { userId: input.userId } })) === 0) await endSessionsOf(tx, input.userId);
    return { userId: input.userId, email, from, to: null, changed: true };
  });
}
