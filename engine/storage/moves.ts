// SQL for tenant_moves (control plane, on the primary): one row per move, with the phase it is
// in. A partial unique index allows one unfinished move per tenant.
import { AppError } from "../errors.ts";
import { uuidv7 } from "./ids.ts";
import type { Queryable } from "./transaction.ts";

/** In order; a move records the phase it is about to run, so a crash resumes by running it again. */
export const MOVE_PHASES = ["quiesce", "drain", "copy", "validate", "cutover", "resume", "cleanup", "done"] as const;
export type MovePhase = (typeof MOVE_PHASES)[number];

export interface MoveRecord {
  id: string;
  tenantId: string;
  fromBackend: string;
  toBackend: string;
  fromEpoch: number;
  phase: MovePhase;
  /** What each phase found: rows copied, the per-table counts and checksums, rows deleted. */
  detail: Record<string, unknown>;
  /** The last failure, while the move waits to be resumed. */
  error: string | null;
  requestedBy: string;
  startedAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

interface MoveRow {
  id: string;
  tenant_id: string;
  from_backend: string;
  to_backend: string;
  from_epoch: number;
  phase: MovePhase;
  detail: Record<string, unknown>;
  error: string | null;
  requested_by: string;
  started_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

const COLUMNS = "id, tenant_id, from_backend, to_backend, from_epoch, phase, detail, error, requested_by, started_at, updated_at, finished_at";

const toRecord = (row: MoveRow): MoveRecord => ({
  id: row.id, tenantId: row.tenant_id, fromBackend: row.from_backend, toBackend: row.to_backend, fromEpoch: row.from_epoch,
  phase: row.phase, detail: row.detail, error: row.error, requestedBy: row.requested_by,
  startedAt: row.started_at, updatedAt: row.updated_at, finishedAt: row.finished_at,
});

/** The tenant's unfinished move, if any. */
export async function activeMove(db: Queryable, tenantId: string): Promise<MoveRecord | null> {
  const { rows } = await db.query<MoveRow>({
    name: "active_move",
    text: `SELECT ${COLUMNS} FROM tenant_moves WHERE tenant_id = $1 AND phase <> 'done'`,
    values: [tenantId],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function insertMove(
  db: Queryable, move: { tenantId: string; fromBackend: string; toBackend: string; fromEpoch: number; requestedBy: string },
): Promise<MoveRecord> {
  try {
    const { rows } = await db.query<MoveRow>({
      name: "insert_move",
      text: `INSERT INTO tenant_moves (id, tenant_id, from_backend, to_backend, from_epoch, phase, requested_by)
             VALUES ($1, $2, $3, $4, $5, 'quiesce', $6) RETURNING ${COLUMNS}`,
      values: [uuidv7(), move.tenantId, move.fromBackend, move.toBackend, move.fromEpoch, move.requestedBy],
    });
    return toRecord(rows[0]!);
  } catch (error) {
    if ((error as { code?: string }).code === "23505") throw new AppError("conflict", "the tenant is already being moved");
    throw error;
  }
}

/** Records that `phase` is next, merging `detail` in and clearing the last error. */
export async function advanceMove(db: Queryable, id: string, phase: MovePhase, detail: Record<string, unknown> = {}): Promise<MoveRecord> {
  const { rows } = await db.query<MoveRow>({
    name: "advance_move",
    text: `UPDATE tenant_moves
              SET phase = $2, detail = detail || $3::jsonb, error = NULL, updated_at = now(),
                  finished_at = CASE WHEN $2 = 'done' THEN now() END
            WHERE id = $1 RETURNING ${COLUMNS}`,
    values: [id, phase, JSON.stringify(detail)],
  });
  return toRecord(rows[0]!);
}

export async function recordMoveError(db: Queryable, id: string, message: string): Promise<void> {
  await db.query({
    name: "record_move_error",
    text: "UPDATE tenant_moves SET error = $2, updated_at = now() WHERE id = $1",
    values: [id, message.slice(0, 2000)],
  });
}

/** The latest moves, newest first (every tenant, or one). */
export async function listMoves(db: Queryable, options: { tenantId?: string; limit: number }): Promise<MoveRecord[]> {
  const { rows } = await db.query<MoveRow>({
    name: "list_moves",
    text: `SELECT ${COLUMNS} FROM tenant_moves WHERE ($1::text IS NULL OR tenant_id = $1) ORDER BY started_at DESC, id DESC LIMIT $2`,
    values: [options.tenantId ?? null, options.limit],
  });
  return rows.map(toRecord);
}

/** Every unfinished move, oldest first, for the engines that run them. */
export async function listActiveMoves(db: Queryable): Promise<MoveRecord[]> {
  const { rows } = await db.query<MoveRow>({
    name: "list_active_moves",
    text: `SELECT ${COLUMNS} FROM tenant_moves WHERE phase <> 'done' ORDER BY started_at`,
  });
  return rows.map(toRecord);
}

/**
 * The audit line of a move an engine finished (the console's "Start move" records the start):
 * written here because engines reach the control plane with SQL only.
 */
export async function auditMoveDone(db: Queryable, move: MoveRecord): Promise<void> {
  await db.query({
    name: "audit_move_done",
    text: `INSERT INTO audit_log (actor, tenant_id, action, details) VALUES ('engine', $1, 'tenant.move.done', $2::jsonb)`,
    values: [move.tenantId, JSON.stringify({ move_id: move.id, from: move.fromBackend, to: move.toBackend, epoch: move.fromEpoch + 1, requested_by: move.requestedBy })],
  });
}
