// API keys: a tenant key acts for its own tenant only; an operator key (no tenant) is for
// platform automation. The secret is shown once at creation and stored only as a SHA-256 hash.
import { createHash, randomBytes } from "node:crypto";
import { notFound } from "../../engine/errors.ts";
import type { Prisma } from "../db/prisma.ts";

const SECRET_PREFIX = "bh_";
const SHOWN_PREFIX_LENGTH = 11;

export interface CreatedApiKey {
  id: string;
  prefix: string;
  /** Shown once; never stored. */
  secret: string;
}

export interface ApiKeyPrincipal {
  keyId: string;
  /** null for an operator key. */
  tenantId: string | null;
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export async function createApiKey(prisma: Prisma, input: { tenantId: string | null; name?: string }): Promise<CreatedApiKey> {
  if (input.tenantId !== null) {
    const tenant = await prisma.tenant.findUnique({ where: { id: input.tenantId }, select: { id: true } });
    if (!tenant) throw notFound("tenant");
  }
  const secret = SECRET_PREFIX + randomBytes(32).toString("base64url");
  const prefix = secret.slice(0, SHOWN_PREFIX_LENGTH);
  const key = await prisma.apiKey.create({
    data: { tenantId: input.tenantId, name: input.name ?? "", prefix, secretHash: hashSecret(secret) },
    select: { id: true },
  });
  return { id: key.id, prefix, secret };
}

/** The key's principal, or null for an unknown or revoked secret. */
export async function authenticateApiKey(prisma: Prisma, secret: string): Promise<ApiKeyPrincipal | null> {
  if (!secret.startsWith(SECRET_PREFIX)) return null;
  const key = await prisma.apiKey.findUnique({
    where: { secretHash: hashSecret(secret) },
    select: { id: true, tenantId: true, revokedAt: true },
  });
  if (!key || key.revokedAt) return null;
  return { keyId: key.id, tenantId: key.tenantId };
}
