// Who is calling and for which tenant. A tenant key acts for its own tenant only; an operator key
// (platform automation) acts for the existing tenant the request names. A request that names any
// other tenant gets the answer a missing object gets, so it learns nothing about that tenant.
import { AppError } from "../../engine/errors.ts";
import { authenticateApiKey, type ApiKeyPrincipal } from "../control/api-keys.ts";
import { TENANT_SLUG_PATTERN } from "../control/tenants.ts";
import type { Prisma } from "../db/prisma.ts";

export type Principal = ApiKeyPrincipal;

/** The secret from `x-api-key`, else from `Authorization: Bearer`. */
function secretOf(request: Request): string | null {
  const header = request.headers.get("x-api-key")?.trim();
  if (header) return header;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
  return match?.[1] ?? null;
}

export async function authenticate(prisma: Prisma, request: Request): Promise<Principal> {
  const secret = secretOf(request);
  if (secret === null) throw new AppError("unauthorized", "missing API key (send it in x-api-key or Authorization: Bearer)");
  const principal = await authenticateApiKey(prisma, secret);
  // Unknown and revoked keys answer alike.
  if (!principal) throw new AppError("unauthorized", "invalid API key");
  return principal;
}

/**
 * Every tenant the request names: the `X-Tenant-Id` header first (it wins for an operator key),
 * then query, path and body values. Blank body values are left to the body's shape check (422).
 */
export function namedTenants(request: Request, url: URL, pathTenant: string | undefined, bodyTenants: readonly unknown[]): string[] {
  const names: string[] = [];
  const header = request.headers.get("x-tenant-id");
  if (header !== null) {
    if (header.trim() === "") throw new AppError("invalid_argument", "X-Tenant-Id must not be blank");
    names.push(header);
  }
  for (const value of [...url.searchParams.getAll("tenant_id"), pathTenant, ...bodyTenants]) {
    if (typeof value === "string" && value.trim() !== "") names.push(value);
  }
  return names;
}

/**
 * The tenant the request acts for, or null for an operator key that named none. `undefined`
 * means the request names a tenant it may not act for (another one, or one that cannot exist):
 * the caller answers exactly as for a missing object.
 */
export function actingTenant(principal: Principal, names: readonly string[]): string | null | undefined {
  const acting = principal.tenantId ?? names[0] ?? null;
  if (names.some((name) => name !== acting)) return undefined;
  if (acting !== null && !TENANT_SLUG_PATTERN.test(acting)) return undefined;
  return acting;
}

/** How the audit log names the key a request came with: its prefix. */
export async function keyActor(prisma: Prisma, principal: Principal): Promise<string> {
  const key = await prisma.apiKey.findUnique({ where: { id: principal.keyId }, select: { prefix: true } });
  return key?.prefix ?? "unknown";
}
