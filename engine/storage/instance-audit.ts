// The instances' audit log (wire-format P) and the tenant's change feed over it (S). The rows
// are written by a trigger on task_instances (state transitions, migration
// 20261203100000_instance_audit_log) and by batch actions (batch-actions.ts).
//
// The feed must never step past a row that is still to commit: a cursor after it would skip it
// for good. Rows are stamped when written (clock_timestamp()), so a row not committed yet belongs
// to a transaction that already holds a transaction id and started no later than the row's time.
// A page therefore reads only below `visibleBefore`: the start of the oldest such transaction on
// the backend, or the time of asking when there is none, read in a statement before the page's
// own, so the page's snapshot sees every commit made before it. A tenant copy is left out of
// that: it writes only a quiesced tenant's rows (tenant-rows.ts).
import { AppError } from "../errors.ts";
import type { TenantId } from "./ids.ts";
import { TENANT_COPY_APPLICATION } from "./tenant-rows.ts";
import type { Queryable } from "./transaction.ts";

export interface AuditEntry {
  id: string;
  instance_id: string;
  tenant_id: string;
  event_type: string;
  from_state?: string;
  to_state?: string;
  block_id?: string;
  details: unknown;
  /** RFC 3339, UTC, to the microsecond. */
  created_at: string;
}

/** A position in the feed: the (created_at, id) of the last entry read; exclusive. */
export interface ChangeCursor {
  createdAt: string;
  id: string;
}

export interface ChangesPage {
  changes: AuditEntry[];
  nextCursor: ChangeCursor | null;
  hasMore: boolean;
}

/** Run in a transaction: its state changes write no `state_transition` entries (P: PATCH and bulk state). */
export const QUIET_TRANSITIONS = "SELECT set_config('bulkhead.quiet_transitions', 'on', true)";

/** P: an instance's audit rows shown at most. */
export const INSTANCE_AUDIT_LIMIT = 200;
/** S: a feed page's size, its default and range (0 reads as 1). */
export const CHANGES_LIMIT = { min: 1, default: 100, max: 500 } as const;

const ENTRY_COLUMNS = `id, instance_id, tenant_id, event_type, from_state, to_state, block_id, details,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at`;

interface EntryRow {
  id: string; instance_id: string; tenant_id: string; event_type: string; from_state: string | null;
  to_state: string | null; block_id: string | null; details: unknown; created_at: string;
}

function toEntry(row: EntryRow): AuditEntry {
  return {
    id: row.id, instance_id: row.instance_id, tenant_id: row.tenant_id, event_type: row.event_type,
    ...(row.from_state !== null ? { from_state: row.from_state } : {}),
    ...(row.to_state !== null ? { to_state: row.to_state } : {}),
    ...(row.block_id !== null ? { block_id: row.block_id } : {}),
    details: row.details ?? null, created_at: row.created_at,
  };
}

/** P: the instance's audit entries, newest first (created_at, then id), at most 200. */
export async function listInstanceAudit(db: Queryable, tenantId: TenantId, instanceId: string): Promise<AuditEntry[]> {
  const { rows } = await db.query<EntryRow>({
    name: "list_instance_audit",
    text: `SELECT ${ENTRY_COLUMNS} FROM instance_audit_log WHERE tenant_id = $1 AND instance_id = $2
            ORDER BY instance_audit_log.created_at DESC, id DESC LIMIT $3`,
    values: [tenantId, instanceId, INSTANCE_AUDIT_LIMIT],
  });
  return rows.map(toEntry);
}

/** Below this time every row of the backend is committed or will be written later (see top). */
async function visibleBefore(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ bound: string }>({
    name: "change_feed_bound",
    text: `SELECT LEAST(clock_timestamp(), min(xact_start))::text AS bound FROM pg_stat_activity
            WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
              AND backend_xid IS NOT NULL AND application_name IS DISTINCT FROM $1`,
    values: [TENANT_COPY_APPLICATION],
  });
  return rows[0]!.bound;
}

/** S: the tenant's feed after `after` (from the start when null), oldest first. */
export async function readChanges(db: Queryable, tenantId: TenantId, after: ChangeCursor | null, limit: number): Promise<ChangesPage> {
  const bound = await visibleBefore(db);
  const { rows } = await db.query<EntryRow>({
    name: "read_changes",
    text: `SELECT ${ENTRY_COLUMNS} FROM instance_audit_log
            WHERE tenant_id = $1 AND instance_audit_log.created_at < $2::timestamptz
              AND (instance_audit_log.created_at, id) > ($3::timestamptz, $4::uuid)
            ORDER BY instance_audit_log.created_at, id LIMIT $5`,
    values: [tenantId, bound, after?.createdAt ?? "-infinity", after?.id ?? "00000000-0000-0000-0000-000000000000", limit + 1],
  });
  const changes = rows.slice(0, limit).map(toEntry);
  const last = changes.at(-1);
  return { changes, nextCursor: last ? { createdAt: last.created_at, id: last.id } : null, hasMore: rows.length > limit };
}

/**
 * The newest entry of the tenant's feed after `after` (any entry when null), or null when there
 * is none: what a page that only needs to know that something changed reads, one row however
 * busy the tenant is.
 */
export async function newestChange(db: Queryable, tenantId: TenantId, after: ChangeCursor | null): Promise<ChangeCursor | null> {
  const bound = await visibleBefore(db);
  const { rows } = await db.query<{ created_at: string; id: string }>({
    name: "newest_change",
    text: `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at, id FROM instance_audit_log
            WHERE tenant_id = $1 AND instance_audit_log.created_at < $2::timestamptz
              AND (instance_audit_log.created_at, id) > ($3::timestamptz, $4::uuid)
            ORDER BY instance_audit_log.created_at DESC, id DESC LIMIT 1`,
    values: [tenantId, bound, after?.createdAt ?? "-infinity", after?.id ?? "00000000-0000-0000-0000-000000000000"],
  });
  return rows[0] ? { createdAt: rows[0].created_at, id: rows[0].id } : null;
}

/** S: base64url (no padding) of `{"created_at", "id"}`. */
export function encodeChangeCursor(cursor: ChangeCursor): string {
  return Buffer.from(JSON.stringify({ created_at: cursor.createdAt, id: cursor.id })).toString("base64url");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** A cursor as sent; anything that does not decode to a timestamp and a uuid is a 400. */
export function decodeChangeCursor(text: string): ChangeCursor {
  const malformed = () => new AppError("invalid_argument", "malformed change cursor", ["cursor"]);
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw malformed();
  }
  const { created_at: createdAt, id } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof createdAt !== "string" || !RFC3339.test(createdAt) || Number.isNaN(Date.parse(createdAt))) throw malformed();
  if (typeof id !== "string" || !UUID.test(id)) throw malformed();
  return { createdAt, id };
}
