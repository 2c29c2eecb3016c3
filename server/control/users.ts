// Users and memberships (control plane).
import { AppError, notFound } from "../../engine/errors.ts";
import { hashPassword, MIN_PASSWORD_LENGTH } from "../auth/password.ts";
import type { Prisma } from "../db/prisma.ts";

export type Role = "member" | "admin";
export const ROLES: readonly Role[] = ["member", "admin"];

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

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
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError("invalid_argument", `password must be at least ${MIN_PASSWORD_LENGTH} characters`, ["password"]);
  }
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
