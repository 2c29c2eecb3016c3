// SQL for tenant deletions: the record on the primary (tenant_deletions, one unfinished per
// tenant), the tenant's rows on a backend deleted in batches, and its control-plane rows.
import { AppError } from "../errors.ts";
import { uuidv7 } from "./ids.ts";
import type { TenantId } from "./ids.ts";
import { deleteInstancesWithRows } from "./retention.ts";
import { CONTROL_PLANE_TABLES, TENANT_TABLES } from "./tenant-rows.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";

/** In order; a deletion records the phase it is about to run, so a crash resumes by running it again. */
export const DELETION_PHASES = ["quiesce", "drain", "delete_rows", "control_plane", "done"] as const;
export type DeletionPhase = (typeof DELETION_PHASES)[number];

export interface DeletionRecord {
  id: string;
  tenantId: string;
  /** Where the tenant was placed, and at which epoch, when the deletion began. */
  backendId: string;
  epoch: number;
  phase: DeletionPhase;
  /** Rows deleted so far, per backend and table. */
  detail: Record<string, unknown>;
  error: string | null;
  requestedBy: string;
  startedAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

interface Row {
  id: string; tenant_id: string; backend_id: string; epoch: string; phase: DeletionPhase; detail: Record<string, unknown>;
  error: string | null; requested_by: string; started_at: Date; updated_at: Date; finished_at: Date | null;
}

const COLUMNS = "id, tenant_id, backend_id, epoch, phase, detail, error, requested_by, started_at, updated_at, finished_at";

const toRecord = (r: Row): DeletionRecord => ({
  id: r.id, tenantId: r.tenant_id, backendId: r.backend_id, epoch: Number(r.epoch), phase: r.phase, detail: r.detail, error: r.error,
  requestedBy: r.requested_by, startedAt: r.started_at, updatedAt: r.updated_at, finishedAt: r.finished_at,
});

export async function activeDeletion(db: Queryable, tenantId: string): Promise<DeletionRecord | null> {
  const { rows } = await db.query<Row>({ name: "active_deletion", text: `SELECT ${COLUMNS} FROM tenant_deletions WHERE tenant_id = $1 AND phase <> 'done'`, values: [tenantId] });
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function getDeletion(db: Queryable, id: string): Promise<DeletionRecord | null> {
  const { rows } = await db.query<Row>({ name: "get_deletion", text: `SELECT ${COLUMNS} FROM tenant_deletions WHERE id = $1`, values: [id] });
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function listActiveDeletions(db: Queryable): Promise<DeletionRecord[]> {
  const { rows } = await db.query<Row>({ name: "list_active_deletions", text: `SELECT ${COLUMNS} FROM tenant_deletions WHERE phase <> 'done' ORDER BY started_at` });
  return rows.map(toRecord);
}

/** Records a new deletion in phase quiesce, and its audit line, in one transaction. */
export async function insertDeletion(
  db: Connectable, deletion: { tenantId: string; backendId: string; epoch: number; requestedBy: string },
): Promise<DeletionRecord> {
  try {
    return await inTransaction(db, async (client) => {
      const { rows } = await client.query<Row>({
        name: "insert_deletion",
        text: `INSERT INTO tenant_deletions (id, tenant_id, backend_id, epoch, phase, requested_by)
               VALUES ($1, $2, $3, $4, 'quiesce', $5) RETURNING ${COLUMNS}`,
        values: [uuidv7(), deletion.tenantId, deletion.backendId, deletion.epoch, deletion.requestedBy],
      });
      await auditDeletion(client, "tenant.delete.start", toRecord(rows[0]!));
      return toRecord(rows[0]!);
    });
  } catch (error) {
    if ((error as { code?: string }).code === "23505") throw new AppError("conflict", "the tenant is already being deleted");
    throw error;
  }
}

/** Records that `phase` is next, merging `detail` in and clearing the last error. */
export async function advanceDeletion(db: Queryable, id: string, phase: DeletionPhase, detail: Record<string, unknown> = {}): Promise<DeletionRecord> {
  const { rows } = await db.query<Row>({
    name: "advance_deletion",
    text: `UPDATE tenant_deletions SET phase = $2, detail = detail || $3::jsonb, error = NULL, updated_at = now(),
                  finished_at = CASE WHEN $2 = 'done' THEN now() END
            WHERE id = $1 RETURNING ${COLUMNS}`,
    values: [id, phase, JSON.stringify(detail)],
  });
  return toRecord(rows[0]!);
}

export async function recordDeletionError(db: Queryable, id: string, message: string): Promise<void> {
  await db.query({ name: "record_deletion_error", text: "UPDATE tenant_deletions SET error = $2, updated_at = now() WHERE id = $1", values: [id, message.slice(0, 2000)] });
}

/**
 * The deletion's audit lines name the tenant in their details, not in `tenant_id`: the tenant's
 * own audit rows go with it, these stay as the record of the deletion.
 */
async function auditDeletion(db: Queryable, action: string, deletion: DeletionRecord, extra: Record<string, unknown> = {}): Promise<void> {
  await db.query({
    name: "audit_deletion",
    text: "INSERT INTO audit_log (actor, tenant_id, action, details) VALUES ($1, NULL, $2, $3::jsonb)",
    values: [deletion.requestedBy, action, JSON.stringify({ tenant: deletion.tenantId, deletion_id: deletion.id, ...extra })],
  });
}

/** Where the tenant's console exports were written (their files are the tenant's data too). */
export async function exportDirsOf(db: Queryable, tenantId: string): Promise<string[]> {
  const { rows } = await db.query<{ dir: string }>({ name: "deletion_export_dirs", text: "SELECT dir FROM tenant_exports WHERE tenant_id = $1", values: [tenantId] });
  return rows.map((r) => r.dir);
}

const ROWS_PER_BATCH = 5_000;

/**
 * Deletes every row of the tenant on one backend, in batches of their own transactions (no
 * long lock, no giant transaction): its instances with their rows first, through the instance
 * indexes, then each table's remaining rows by tenant. `onBatch` hears each batch. Returns the
 * rows deleted per table (instance rows as "task_instances" and "instance_rows").
 */
export async function deleteTenantRowsInBatches(
  db: Queryable, tenantId: TenantId, onBatch: (table: string, rows: number) => void | Promise<void> = () => {},
): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  const add = async (table: string, rows: number) => {
    deleted[table] = (deleted[table] ?? 0) + rows;
    if (rows > 0) await onBatch(table, rows);
  };
  for (;;) {
    const { instances, related } = await deleteInstancesWithRows(db, tenantId, ROWS_PER_BATCH / 5, null);
    await add("task_instances", instances);
    await add("instance_rows", related);
    if (instances === 0) break;
  }
  for (const table of TENANT_TABLES) {
    for (;;) {
      // Table names come from the fixed list, never from input.
      const { rowCount } = await db.query({
        text: `DELETE FROM ${table.name} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table.name} WHERE tenant_id = $1 LIMIT $2))`,
        values: [tenantId, ROWS_PER_BATCH],
      });
      await add(table.name, rowCount ?? 0);
      if ((rowCount ?? 0) < ROWS_PER_BATCH) break;
    }
  }
  return deleted;
}

/**
 * The tenant's control-plane rows and then the tenant itself, in one transaction on the primary:
 * memberships, API keys, invitations, trigger slugs, limits, moves, exports, its audit rows and
 * its placement. Users it leaves with no tenant lose their sessions, as on removal from their last
 * tenant. The deletion's own record and audit lines stay; the record is marked done in the same
 * transaction, with the rows deleted per table.
 */
export async function deleteControlPlaneRows(db: Connectable, deletion: DeletionRecord): Promise<DeletionRecord> {
  return inTransaction(db, async (client) => {
    const tenantId = deletion.tenantId;
    const { rowCount: sessions } = await client.query({
      name: "deletion_end_sessions",
      text: `DELETE FROM user_sessions s USING memberships m
              WHERE m.tenant_id = $1 AND s.user_id = m.user_id
                AND NOT EXISTS (SELECT 1 FROM memberships o WHERE o.user_id = m.user_id AND o.tenant_id <> $1)`,
      values: [tenantId],
    });
    const deleted: Record<string, number> = { user_sessions: sessions ?? 0 };
    for (const table of CONTROL_PLANE_TABLES) {
      if (table === "tenant_deletions") continue;
      const { rowCount } = await client.query({ text: `DELETE FROM ${table} WHERE tenant_id = $1`, values: [tenantId] });
      deleted[table] = rowCount ?? 0;
    }
    const { rowCount: tenants } = await client.query({ name: "deletion_tenant_row", text: "DELETE FROM tenants WHERE id = $1", values: [tenantId] });
    deleted.tenants = tenants ?? 0;
    await auditDeletion(client, "tenant.delete.done", deletion, { rows: { ...(deletion.detail.rows as object | undefined), control_plane: deleted } });
    // Done in the same transaction: a deleter that dies after it does not run (or audit) it twice.
    return advanceDeletion(client, deletion.id, "done", { control_plane: deleted });
  });
}
