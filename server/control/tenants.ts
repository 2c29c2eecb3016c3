// Tenants (control plane). A tenant's id is its slug; it gets its storage placement (the default
// backend at epoch 1) in the same transaction that creates it, so no tenant exists unplaced.
import { AppError, isAppError } from "../../engine/errors.ts";
import type { Prisma } from "../db/prisma.ts";

export const TENANT_SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

export interface TenantSummary {
  id: string;
  name: string;
  createdAt: Date;
}

/** Slugs that name a console page instead: /ops/tenants/new would never reach the tenant "new". */
export const RESERVED_TENANT_SLUGS: readonly string[] = ["new"];

export function validateTenantSlug(slug: string): string {
  if (!TENANT_SLUG_PATTERN.test(slug)) {
    throw new AppError(
      "invalid_argument",
      `invalid tenant slug "${slug.slice(0, 64)}": use 2-63 lowercase letters, digits or '-', starting with a letter or digit`,
      ["slug"],
    );
  }
  if (RESERVED_TENANT_SLUGS.includes(slug)) throw new AppError("invalid_argument", `tenant slug "${slug}" is reserved: choose another`, ["slug"]);
  return slug;
}

/** A tenant's display name is at most this long (the console's search indexes it). */
export const TENANT_NAME_MAX = 200;

export async function createTenant(
  prisma: Prisma,
  input: { slug: string; name?: string; backendId: string },
): Promise<TenantSummary> {
  const id = validateTenantSlug(input.slug);
  const name = input.name?.trim() || id;
  if (name.length > TENANT_NAME_MAX) throw new AppError("invalid_argument", `tenant name must be at most ${TENANT_NAME_MAX} characters`, ["name"]);
  const existing = await prisma.tenant.findUnique({ where: { id }, select: { id: true } });
  if (existing) throw new AppError("already_exists", `tenant "${id}" already exists`, ["slug"]);
  try {
    return await prisma.tenant.create({
      data: { id, name, placement: { create: { backendId: input.backendId, epoch: 1 } } },
      select: { id: true, name: true, createdAt: true },
    });
  } catch (error) {
    // Lost a race with another creator of the same slug.
    if ((error as { code?: string }).code === "P2002") throw new AppError("already_exists", `tenant "${id}" already exists`, ["slug"]);
    throw error;
  }
}

/**
 * Creates the tenant, or returns the existing one with that id as it is (name unchanged), so
 * platform automation can retry a create safely.
 */
export async function ensureTenant(
  prisma: Prisma,
  input: { slug: string; name?: string; backendId: string },
): Promise<{ tenant: TenantSummary; created: boolean }> {
  try {
    return { tenant: await createTenant(prisma, input), created: true };
  } catch (error) {
    if (!isAppError(error, "already_exists")) throw error;
    const tenant = await prisma.tenant.findUnique({ where: { id: input.slug }, select: { id: true, name: true, createdAt: true } });
    if (!tenant) throw error;
    return { tenant, created: false };
  }
}

export function listTenants(
  prisma: Prisma,
): Promise<(TenantSummary & { memberCount: number; backendId: string | null; epoch: number | null; quiesced: boolean })[]> {
  return prisma.tenant
    .findMany({
      orderBy: { id: "asc" },
      select: { id: true, name: true, createdAt: true, placement: true, _count: { select: { memberships: true } } },
    })
    .then((tenants) =>
      tenants.map((t) => ({
        id: t.id,
        name: t.name,
        createdAt: t.createdAt,
        memberCount: t._count.memberships,
        backendId: t.placement?.backendId ?? null,
        epoch: t.placement ? Number(t.placement.epoch) : null,
        quiesced: t.placement?.quiescedAt != null,
      })),
    );
}
