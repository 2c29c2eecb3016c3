// Credentials (wire-format N), shared by REST (/credentials) and the settings page (tRPC): the
// checks N gives, the writes, and their lines in the audit log, which name the credential and
// never hold a value.
import { z } from "zod";
import { AppError } from "../engine/errors.ts";
import { classifyAddress } from "../engine/handlers/outbound-guard.ts";
import {
  CREDENTIAL_ID, CREDENTIAL_KINDS, type CredentialChange, type CredentialRecord, type NewCredential, type TenantStore,
} from "../engine/storage/index.ts";
import { recordAudit, type AuditEntry } from "./control/audit.ts";
import type { Prisma } from "./db/prisma.ts";

/** N: a value over this is a 413. */
export const CREDENTIAL_VALUE_LIMIT = 256 * 1024;

/** The fields of a create, as both doors take them (absent optional fields are null). */
export const CredentialInput = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(CREDENTIAL_KINDS).default("api_key"),
  value: z.string(),
  expires_at: z.iso.datetime({ offset: true }).nullish(),
  refresh_url: z.string().nullish(),
  refresh_token: z.string().nullish(),
  description: z.string().nullish(),
});
export type CredentialInput = z.output<typeof CredentialInput>;

/** A change: absent or null fields stay as they are (N: no field can be cleared). */
export const CredentialPatch = z.object({
  name: z.string().nullish(),
  kind: z.enum(CREDENTIAL_KINDS).nullish(),
  value: z.string().nullish(),
  expires_at: z.iso.datetime({ offset: true }).nullish(),
  refresh_url: z.string().nullish(),
  refresh_token: z.string().nullish(),
  enabled: z.boolean().nullish(),
  description: z.string().nullish(),
});
export type CredentialPatch = z.output<typeof CredentialPatch>;

const invalid = (message: string) => new AppError("invalid_argument", message);

/** The refresh call goes out through the SSRF guard too; a URL that is plainly not public is refused up front. */
function checkRefreshUrl(raw: string): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("refresh_url must be an absolute http(s) URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalid("refresh_url must be an absolute http(s) URL");
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || classifyAddress(host) !== null) {
    throw invalid(`refresh_url must be a public address: ${url.hostname} is not`);
  }
}

function checkValue(value: string): void {
  if (Buffer.byteLength(value, "utf8") > CREDENTIAL_VALUE_LIMIT) throw new AppError("payload_too_large", "credential value exceeds 256 KiB");
}

const dateOrNull = (iso: string | null | undefined) => (iso ? new Date(iso) : null);

/** Who made the change, as the audit log names them. */
type Actor = Pick<AuditEntry, "actor" | "actorUserId">;

export async function addCredential(prisma: Prisma, store: TenantStore, by: Actor, input: CredentialInput): Promise<CredentialRecord> {
  if (!input.id || !input.name || !input.value) throw invalid("id, name, and value are required");
  if (!CREDENTIAL_ID.test(input.id)) throw invalid("credential id must be 1 to 255 characters of A-Z, a-z, 0-9, '.', '_' and '-'");
  checkValue(input.value);
  if (input.refresh_url) checkRefreshUrl(input.refresh_url);
  if (input.kind === "oauth2" && input.refresh_url && !input.refresh_token) throw invalid("oauth2 credential with refresh_url requires refresh_token");
  const credential: NewCredential = {
    id: input.id, name: input.name, kind: input.kind, value: input.value, expiresAt: dateOrNull(input.expires_at),
    refreshUrl: input.refresh_url ?? null, refreshToken: input.refresh_token ?? null, description: input.description ?? null,
  };
  const created = await store.createCredential(credential);
  await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "credential.create", details: { id: input.id, kind: input.kind } });
  return created;
}

/** The changed credential, or null when the tenant has none by that id. */
export async function changeCredential(prisma: Prisma, store: TenantStore, by: Actor, id: string, patch: CredentialPatch): Promise<CredentialRecord | null> {
  if (patch.value !== null && patch.value !== undefined) checkValue(patch.value);
  if (patch.refresh_url) checkRefreshUrl(patch.refresh_url);
  const change: CredentialChange = {
    ...(patch.name ? { name: patch.name } : {}),
    ...(patch.kind ? { kind: patch.kind } : {}),
    ...(patch.value ? { value: patch.value } : {}),
    ...(patch.expires_at ? { expiresAt: new Date(patch.expires_at) } : {}),
    ...(patch.refresh_url ? { refreshUrl: patch.refresh_url } : {}),
    ...(patch.refresh_token ? { refreshToken: patch.refresh_token } : {}),
    ...(patch.enabled !== null && patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
    ...(patch.description ? { description: patch.description } : {}),
  };
  const changed = await store.updateCredential(id, change);
  if (changed) {
    // Which fields changed, never what to.
    const fields = Object.keys(patch).filter((key) => patch[key as keyof CredentialPatch] !== null && patch[key as keyof CredentialPatch] !== undefined);
    await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "credential.update", details: { id, fields } });
  }
  return changed;
}

export async function removeCredential(prisma: Prisma, store: TenantStore, by: Actor, id: string): Promise<boolean> {
  const removed = await store.deleteCredential(id);
  if (removed) await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "credential.delete", details: { id } });
  return removed;
}

/** The 404 of a credential, missing or another tenant's alike (N: `not found: credential '<id>'`). */
export const credentialNotFound = (id: string) => new AppError("not_found", `credential '${id}'`);

/** CredentialResponse (N): optional fields omitted when unset, and never a value. */
export function wireCredential(tenantId: string, credential: CredentialRecord) {
  return {
    id: credential.id,
    tenant_id: tenantId,
    name: credential.name,
    kind: credential.kind,
    enabled: credential.enabled,
    ...(credential.expiresAt ? { expires_at: credential.expiresAt.toISOString() } : {}),
    ...(credential.refreshUrl ? { refresh_url: credential.refreshUrl } : {}),
    has_refresh_token: credential.hasRefreshToken,
    ...(credential.description ? { description: credential.description } : {}),
    ...(credential.lastUsedAt ? { last_used_at: credential.lastUsedAt.toISOString() } : {}),
    created_at: credential.createdAt.toISOString(),
    updated_at: credential.updatedAt.toISOString(),
  };
}
