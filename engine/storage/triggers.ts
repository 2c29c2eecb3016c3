// SQL for `triggers`: a tenant's slugs for the sequences emit_event spawns. Every statement is
// scoped by tenant_id, so another tenant's slug is simply not there.
import { AppError } from "../errors.ts";
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

/** Lower-case letters and digits, then also `-`, `_` and `.`: safe in a URL path and a log line. */
export const TRIGGER_SLUG = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export interface TriggerRecord {
  slug: string;
  sequenceName: string;
  /** null: the latest version that is not deprecated, looked up at each emit. */
  sequenceVersion: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewTrigger {
  sequenceName: string;
  sequenceVersion: number | null;
}

interface TriggerRow {
  slug: string;
  sequence_name: string;
  sequence_version: number | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = "slug, sequence_name, sequence_version, created_at, updated_at";

const toRecord = (row: TriggerRow): TriggerRecord => ({
  slug: row.slug,
  sequenceName: row.sequence_name,
  sequenceVersion: row.sequence_version,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Whether `slug` can name a trigger at all; a malformed slug is as missing as an unknown one. */
export const isTriggerSlug = (slug: string) => TRIGGER_SLUG.test(slug);

export async function listTriggers(db: Queryable, tenantId: TenantId): Promise<TriggerRecord[]> {
  const { rows } = await db.query<TriggerRow>({
    name: "list_triggers",
    text: `SELECT ${COLUMNS} FROM triggers WHERE tenant_id = $1 ORDER BY slug`,
    values: [tenantId],
  });
  return rows.map(toRecord);
}

export async function getTrigger(db: Queryable, tenantId: TenantId, slug: string): Promise<TriggerRecord | null> {
  if (!isTriggerSlug(slug)) return null;
  const { rows } = await db.query<TriggerRow>({
    name: "get_trigger",
    text: `SELECT ${COLUMNS} FROM triggers WHERE tenant_id = $1 AND slug = $2`,
    values: [tenantId, slug],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Creates or repoints a trigger. The sequence must exist in the tenant (at that version, when one
 * is pinned), so a typo fails here rather than at the first emit. `created` tells the two apart.
 */
export async function putTrigger(
  db: Queryable, tenantId: TenantId, slug: string, trigger: NewTrigger,
): Promise<{ trigger: TriggerRecord; created: boolean }> {
  if (!isTriggerSlug(slug)) {
    throw new AppError("invalid_argument", `invalid trigger slug ${JSON.stringify(slug.slice(0, 80))}: use 1-64 lower-case letters, digits, '.', '-' or '_', starting with a letter or digit`, ["slug"]);
  }
  const { rows } = await db.query<TriggerRow & { created: boolean }>({
    name: "put_trigger",
    text: `WITH target AS (
             SELECT 1 FROM sequences
              WHERE tenant_id = $1 AND name = $3 AND ($4::int IS NULL OR version = $4) AND NOT deprecated
              LIMIT 1
           )
           INSERT INTO triggers (tenant_id, slug, sequence_name, sequence_version)
           SELECT $1, $2, $3, $4 FROM target
           ON CONFLICT (tenant_id, slug) DO UPDATE
             SET sequence_name = EXCLUDED.sequence_name, sequence_version = EXCLUDED.sequence_version, updated_at = now()
           RETURNING ${COLUMNS}, (xmax = 0) AS created`,
    values: [tenantId, slug, trigger.sequenceName, trigger.sequenceVersion],
  });
  const row = rows[0];
  if (!row) {
    const what = trigger.sequenceVersion === null ? JSON.stringify(trigger.sequenceName) : `${JSON.stringify(trigger.sequenceName)} version ${trigger.sequenceVersion}`;
    throw new AppError("invalid_argument", `no sequence ${what} in this tenant`, ["sequence_name"]);
  }
  return { trigger: toRecord(row), created: row.created };
}

/** The removed trigger, or null when there was none. */
export async function deleteTrigger(db: Queryable, tenantId: TenantId, slug: string): Promise<TriggerRecord | null> {
  if (!isTriggerSlug(slug)) return null;
  const { rows } = await db.query<TriggerRow>({
    name: "delete_trigger",
    text: `DELETE FROM triggers WHERE tenant_id = $1 AND slug = $2 RETURNING ${COLUMNS}`,
    values: [tenantId, slug],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}
