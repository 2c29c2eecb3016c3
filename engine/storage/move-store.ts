// What a tenant move (engine/moves) reads and writes, as `storage.moves`: the move's record and
// the placement on the primary, the one-runner-per-move lock, and the tenant's rows on the two
// backends it moves between. The pools stay in here.
import { AppError } from "../errors.ts";
import type { StorageBackends } from "./backends.ts";
import {
  activeMove, advanceMove, auditMoveDone, insertMove, listActiveMoves, listMoves, recordMoveError, type MovePhase, type MoveRecord,
} from "./moves.ts";
import { advanceTenantPlacement, quiescePlacement, readPlacement, resumePlacement, type Placement } from "./placements.ts";
import { asTenantId } from "./ids.ts";
import { copyTenantRows, deleteTenantRows, runningInstances, summarizeTenantRows, type TableSummary } from "./tenant-rows.ts";

export type NewMove = { tenantId: string; fromBackend: string; toBackend: string; fromEpoch: number; requestedBy: string };

export class MoveStore {
  constructor(private readonly backends: StorageBackends) {}

  private get primary() {
    return this.backends.primary.pool;
  }

  // ---------------------------------------------------------------- the move's record (primary)

  /** The tenant's unfinished move, if any. */
  active(tenantId: string): Promise<MoveRecord | null> {
    return activeMove(this.primary, tenantId);
  }

  /** Records a new move in phase quiesce; a conflict when the tenant already has one under way. */
  insert(move: NewMove): Promise<MoveRecord> {
    return insertMove(this.primary, move);
  }

  /** Records that `phase` is next, merging `detail` in and clearing the last error. */
  advance(id: string, phase: MovePhase, detail?: Record<string, unknown>): Promise<MoveRecord> {
    return advanceMove(this.primary, id, phase, detail);
  }

  recordError(id: string, message: string): Promise<void> {
    return recordMoveError(this.primary, id, message);
  }

  /** The latest moves, newest first (every tenant, or one). */
  list(options: { tenantId?: string; limit: number }): Promise<MoveRecord[]> {
    return listMoves(this.primary, options);
  }

  /** Every unfinished move, oldest first, for the engines that run them. */
  listActive(): Promise<MoveRecord[]> {
    return listActiveMoves(this.primary);
  }

  /** The audit line of a move an engine finished. */
  auditDone(move: MoveRecord): Promise<void> {
    return auditMoveDone(this.primary, move);
  }

  // ---------------------------------------------------------------- the placement (primary)

  placement(tenantId: string): Promise<Placement | null> {
    return readPlacement(this.primary, tenantId);
  }

  /** false when the placement is no longer at `epoch`. */
  quiesce(tenantId: string, epoch: number): Promise<boolean> {
    return quiescePlacement(this.primary, tenantId, epoch);
  }

  /** Points the placement at `backendId` at `epoch` (still quiesced); a conflict unless `epoch` is newer. */
  cutover(tenantId: string, backendId: string, epoch: number): Promise<Placement> {
    return advanceTenantPlacement(this.primary, tenantId, backendId, epoch);
  }

  resume(tenantId: string, backendId: string): Promise<boolean> {
    return resumePlacement(this.primary, tenantId, backendId);
  }

  // ---------------------------------------------------------------- one runner per move

  /**
   * Runs `run` holding the tenant's move lock: a session advisory lock on the primary, so a second
   * runner (the CLI and an engine, two engines) is turned away with a conflict, and a runner that
   * dies releases it with its connection.
   */
  async withLock<T>(tenantId: string, run: () => Promise<T>): Promise<T> {
    const lock = await this.primary.connect();
    try {
      const { rows } = await lock.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(hashtext('tenant_move'), hashtext($1)) AS locked", [tenantId]);
      if (!rows[0]!.locked) throw new AppError("conflict", "another process is running this move");
      try {
        return await run();
      } finally {
        await lock.query("SELECT pg_advisory_unlock(hashtext('tenant_move'), hashtext($1))", [tenantId]).catch(() => {});
      }
    } finally {
      lock.release();
    }
  }

  // ---------------------------------------------------------------- the tenant's rows

  /** The two backends of a move; Unsupported unless this process serves both. */
  between(fromBackend: string, toBackend: string): MoveRows {
    return new MoveRows(this.backends.get(fromBackend).pool, this.backends.get(toBackend).pool);
  }
}

type Pool = ReturnType<StorageBackends["get"]>["pool"];

/** A tenant's rows on the source and target backends of a move. */
export class MoveRows {
  constructor(
    private readonly source: Pool,
    private readonly target: Pool,
  ) {}

  /** Instances of the tenant a live lease holds on the source; expired leases are handed back first. */
  runningOnSource(tenantId: string, now: Date): Promise<number> {
    return runningInstances(this.source, asTenantId(tenantId), now);
  }

  /** Replaces the tenant's rows on the target with the source's, from one snapshot; rows copied per table. */
  copy(tenantId: string): Promise<Record<string, number>> {
    return copyTenantRows(this.source, this.target, asTenantId(tenantId));
  }

  /** Row counts and checksums per table, source and target. */
  summaries(tenantId: string): Promise<[source: Record<string, TableSummary>, target: Record<string, TableSummary>]> {
    return Promise.all([summarizeTenantRows(this.source, asTenantId(tenantId)), summarizeTenantRows(this.target, asTenantId(tenantId))]);
  }

  /** Deletes the tenant's rows from the source; returns how many. */
  deleteFromSource(tenantId: string): Promise<number> {
    return deleteTenantRows(this.source, asTenantId(tenantId));
  }
}
