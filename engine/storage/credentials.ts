// SQL for `credentials` (wire-format N). Every statement is scoped by tenant_id, so another
// tenant's credential is simply not there. `value` and `refresh_token` are sealed on the way in
// and opened only by `resolveCredentials`, for a run's step; no other read returns them.
import { AppError } from "../errors.ts";
import { needsResealing, open, seal } from "../secrets/sealed-text.ts";
import type { TenantId } from "./ids.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";

export const CREDENTIAL_KINDS = ["api_key", "oauth2", "basic"] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];
/** Letters, digits, `.`, `_` and `-`, as N says: safe in a `credentials://` reference and a URL path. */
export const CREDENTIAL_ID = /^[A-Za-z0-9._-]{1,255}$/;

/** What any reader may see of a credential: everything but its secrets. */
export interface CredentialRecord {
  id: string;
  name: string;
  kind: CredentialKind;
  enabled: boolean;
  expiresAt: Date | null;
  refreshUrl: string | null;
  hasRefreshToken: boolean;
  description: string | null;
  lastUsedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewCredential {
  id: string;
  name: string;
  kind: CredentialKind;
  value: string;
  expiresAt: Date | null;
  refreshUrl: string | null;
  refreshToken: string | null;
  description: string | null;
}

/** A change: absent fields stay as they are (N: no field can be cleared). */
export type CredentialChange = Partial<Omit<NewCredential, "id">> & { enabled?: boolean };

interface CredentialRow {
  id: string;
  name: string;
  kind: CredentialKind;
  enabled: boolean;
  expires_at: Date | null;
  refresh_url: string | null;
  has_refresh_token: boolean;
  description: string | null;
  last_used_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  "id, name, kind, enabled, expires_at, refresh_url, refresh_token IS NOT NULL AS has_refresh_token, description, last_used_at, created_at, updated_at";

const toRecord = (row: CredentialRow): CredentialRecord => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  enabled: row.enabled,
  expiresAt: row.expires_at,
  refreshUrl: row.refresh_url,
  hasRefreshToken: row.has_refresh_token,
  description: row.description,
  lastUsedAt: row.last_used_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function listCredentials(db: Queryable, tenantId: TenantId, limit: number): Promise<CredentialRecord[]> {
  const { rows } = await db.query<CredentialRow>({
    name: "list_credentials",
    text: `SELECT ${COLUMNS} FROM credentials WHERE tenant_id = $1 ORDER BY id LIMIT $2`,
    values: [tenantId, limit],
  });
  return rows.map(toRecord);
}

export async function getCredential(db: Queryable, tenantId: TenantId, id: string): Promise<CredentialRecord | null> {
  if (!CREDENTIAL_ID.test(id)) return null;
  const { rows } = await db.query<CredentialRow>({ name: "get_credential", text: `SELECT ${COLUMNS} FROM credentials WHERE tenant_id = $1 AND id = $2`, values: [tenantId, id] });
  return rows[0] ? toRecord(rows[0]) : null;
}

const sealOrNull = (text: string | null | undefined) => (text === null || text === undefined ? null : seal(text));

/** Creates the credential; an id the tenant already has is a conflict. */
export async function createCredential(db: Queryable, tenantId: TenantId, credential: NewCredential): Promise<CredentialRecord> {
  const { rows } = await db.query<CredentialRow>({
    name: "create_credential",
    text: `INSERT INTO credentials (tenant_id, id, name, kind, value, refresh_token, refresh_url, expires_at, description)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (tenant_id, id) DO NOTHING
           RETURNING ${COLUMNS}`,
    values: [
      tenantId, credential.id, credential.name, credential.kind, seal(credential.value), sealOrNull(credential.refreshToken),
      credential.refreshUrl, credential.expiresAt, credential.description,
    ],
  });
  if (!rows[0]) throw new AppError("already_exists", `credential '${credential.id}'`);
  return toRecord(rows[0]);
}

/** Applies the change; null when the tenant has no such credential. A new value is sealed with the current key. */
export async function updateCredential(db: Queryable, tenantId: TenantId, id: string, change: CredentialChange): Promise<CredentialRecord | null> {
  if (!CREDENTIAL_ID.test(id)) return null;
  const { rows } = await db.query<CredentialRow>({
    name: "update_credential",
    text: `UPDATE credentials SET
             name = coalesce($3, name), kind = coalesce($4, kind), value = coalesce($5, value),
             refresh_token = coalesce($6, refresh_token), refresh_url = coalesce($7, refresh_url),
             expires_at = coalesce($8, expires_at), enabled = coalesce($9, enabled), description = coalesce($10, description),
             updated_at = now()
           WHERE tenant_id = $1 AND id = $2
           RETURNING ${COLUMNS}`,
    values: [
      tenantId, id, change.name ?? null, change.kind ?? null, sealOrNull(change.value), sealOrNull(change.refreshToken),
      change.refreshUrl ?? null, change.expiresAt ?? null, change.enabled ?? null, change.description ?? null,
    ],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function deleteCredential(db: Queryable, tenantId: TenantId, id: string): Promise<boolean> {
  if (!CREDENTIAL_ID.test(id)) return false;
  const { rowCount } = await db.query({ name: "delete_credential", text: "DELETE FROM credentials WHERE tenant_id = $1 AND id = $2", values: [tenantId, id] });
  return (rowCount ?? 0) > 0;
}

/** An opened credential, for one step's params. */
export interface OpenedCredential {
  enabled: boolean;
  value: string;
}

/**
 * The tenant's credentials of these ids, opened, and marked as used now. Values sealed under an
 * old key, or stored before a key was set, are sealed again with the current one (lazy rotation).
 */
export async function resolveCredentials(db: Queryable, tenantId: TenantId, ids: readonly string[]): Promise<Map<string, OpenedCredential>> {
  const wanted = ids.filter((id) => CREDENTIAL_ID.test(id));
  if (wanted.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; enabled: boolean; value: string }>({
    name: "resolve_credentials",
    text: `UPDATE credentials SET last_used_at = now() WHERE tenant_id = $1 AND id = ANY($2::text[]) RETURNING id, enabled, value`,
    values: [tenantId, wanted],
  });
  const opened = new Map<string, OpenedCredential>();
  for (const row of rows) {
    const value = open(row.value);
    opened.set(row.id, { enabled: row.enabled, value });
    if (needsResealing(row.value)) {
      await db.query({
        name: "reseal_credential",
        text: "UPDATE credentials SET value = $3 WHERE tenant_id = $1 AND id = $2 AND value = $4",
        values: [tenantId, row.id, seal(value), row.value],
      });
    }
  }
  return opened;
}

/** An OAuth2 credential due for a refresh, opened for the refresh call only. */
export interface ExpiringCredential {
  tenantId: TenantId;
  id: string;
  value: string;
  refreshToken: string;
  refreshUrl: string;
}

/** What a refresh learned: the merged value, a new refresh token if one was sent, and the new expiry. */
export interface RefreshedCredential {
  value: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

const DUE_FOR_REFRESH = "kind = 'oauth2' AND enabled AND refresh_url IS NOT NULL AND refresh_token IS NOT NULL AND expires_at <= $1";

/** Every tenant's OAuth2 credentials expiring by `before`, soonest first (the engine's refresh sweep). */
export async function listExpiringCredentials(db: Queryable, before: Date, limit: number): Promise<{ tenantId: TenantId; id: string }[]> {
  const { rows } = await db.query<{ tenant_id: string; id: string }>({
    name: "list_expiring_credentials",
    text: `SELECT tenant_id, id FROM credentials WHERE ${DUE_FOR_REFRESH} ORDER BY expires_at LIMIT $2`,
    values: [before, limit],
  });
  return rows.map((row) => ({ tenantId: row.tenant_id as TenantId, id: row.id }));
}

/**
 * Locks one credential that is still due (another engine holding it: null), opened, for
 * `refresh`; stores what it answers in the same transaction, or leaves the row as it was when
 * it answers null or throws.
 */
export async function refreshCredential(
  db: Connectable, key: { tenantId: TenantId; id: string }, before: Date, refresh: (credential: ExpiringCredential) => Promise<RefreshedCredential | null>,
): Promise<boolean> {
  return inTransaction(db, async (client) => {
    const { rows } = await client.query<{ value: string; refresh_token: string; refresh_url: string }>({
      name: "lock_expiring_credential",
      text: `SELECT value, refresh_token, refresh_url FROM credentials WHERE ${DUE_FOR_REFRESH} AND tenant_id = $2 AND id = $3 FOR UPDATE SKIP LOCKED`,
      values: [before, key.tenantId, key.id],
    });
    const row = rows[0];
    if (!row) return false;
    const refreshed = await refresh({ ...key, value: open(row.value), refreshToken: open(row.refresh_token), refreshUrl: row.refresh_url });
    if (!refreshed) return false;
    await client.query({
      name: "store_refreshed_credential",
      text: `UPDATE credentials SET value = $3, refresh_token = coalesce($4, refresh_token), expires_at = $5, updated_at = now() WHERE tenant_id = $1 AND id = $2`,
      values: [key.tenantId, key.id, seal(refreshed.value), sealOrNull(refreshed.refreshToken), refreshed.expiresAt],
    });
    return true;
  });
}
