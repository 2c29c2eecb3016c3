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

/**
 * Every tenant by id with its placement and member count, in one statement: Prisma's relation
 * loading read 10,000 tenants as three queries with 10,000-id lists and took 1.6 s (the console
 * benchmark's audit page, whose tenant filter lists them all).
 */
export async function listTenants(
  prisma: Prisma,
): Promise<(TenantSummary & { memberCount: number; backendId: string | null; epoch: number | null; quiesced: boolean })[]> {
  const rows = await prisma.$queryRaw<{
    id: string; name: string; created_at: Date; backend_id: string | null; epoch: bigint | null; quiesced: boolean; member_count: number;
  }[]>`SELECT t.id, t.name, t.created_at, p.backend_id, p.epoch, p.quiesced_at IS NOT NULL AS quiesced,
              (SELECT count(*)::int FROM memberships m WHERE m.tenant_id = t.id) AS member_count
         FROM tenants t LEFT JOIN tenant_storage_placements p ON p.tenant_id = t.id
        ORDER BY t.id`;
  return rows.map((t) => ({
    id: t.id, name: t.name, createdAt: t.created_at, memberCount: t.member_count,
    backendId: t.backend_id, epoch: t.epoch === null ? null : Number(t.epoch), quiesced: t.backend_id !== null && t.quiesced,
  }));
}
