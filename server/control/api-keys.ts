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

// "Last used" is kept to the minute: one write per key per minute at most, not one per request.
const LAST_USED_RESOLUTION_MS = 60_000;

/** The key's principal, or null for an unknown or revoked secret. */
export async function authenticateApiKey(prisma: Prisma, secret: string): Promise<ApiKeyPrincipal | null> {
  if (!secret.startsWith(SECRET_PREFIX)) return null;
  const key = await prisma.apiKey.findUnique({
    where: { secretHash: hashSecret(secret) },
    select: { id: true, tenantId: true, revokedAt: true, lastUsedAt: true },
  });
  if (!key || key.revokedAt) return null;
  const now = new Date();
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    // updateMany: a key deleted meanwhile (its tenant removed) is no error here.
    await prisma.apiKey.updateMany({ where: { id: key.id }, data: { lastUsedAt: now } });
  }
  return { keyId: key.id, tenantId: key.tenantId };
}

export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const SUMMARY = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true } as const;

// Key ids are UUIDs in the database; any other id is simply not one of the tenant's keys.
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The tenant's keys, newest first, revoked ones included; never a secret or its hash. */
export function listApiKeys(prisma: Prisma, tenantId: string): Promise<ApiKeySummary[]> {
  return prisma.apiKey.findMany({ where: { tenantId }, select: SUMMARY, orderBy: [{ createdAt: "desc" }, { id: "asc" }] });
}

/**
 * Revokes one of the tenant's keys. Another tenant's key, an operator key and an id that does not
 * exist all give the same not-found. Revoking a revoked key changes nothing (`changed: false`).
 */
export async function revokeApiKey(prisma: Prisma, tenantId: string, id: string): Promise<ApiKeySummary & { changed: boolean }> {
  if (!UUID_PATTERN.test(id)) throw notFound("API key");
  // Conditional on not yet revoked, so the first revocation time is the one kept.
  const { count } = await prisma.apiKey.updateMany({ where: { id, tenantId, revokedAt: null }, data: { revokedAt: new Date() } });
  const key = await prisma.apiKey.findFirst({ where: { id, tenantId }, select: SUMMARY });
  if (!key) throw notFound("API key");
  return { ...key, changed: count === 1 };
}
