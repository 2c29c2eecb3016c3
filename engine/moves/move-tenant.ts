// Moving a tenant to another storage backend, the piece the placement design leaves unbuilt.
// Phases, each recorded on the primary before it runs and each safe to run again, so a mover
// that dies anywhere is resumed by running the same move again:
//   quiesce   API writes answer 503 and schedulers stop claiming the tenant (placement refresh);
//             a grace lets requests and claims that read the placement just before finish.
//   drain     until no instance of the tenant is running on the old backend (steps in flight
//             finish; expired leases are handed back).
//   copy      the tenant's rows, read from one snapshot of the old backend, replace its rows on
//             the new one in one transaction.
//   validate  row counts and per-table checksums, old against new; a difference (a write that
//             slipped in) sends the move back to copy.
//   cutover   the placement advances to the new backend at epoch + 1 (still quiesced).
//   resume    the quiesce ends: writes and claims go to the new backend.
//   cleanup   the tenant's rows are deleted from the old backend, only now.
// Other tenants are never touched.
import { setTimeout as sleep } from "node:timers/promises";
import { AppError, notFound } from "../errors.ts";
import type { MovePhase, MoveRecord, Storage, TableSummary } from "../storage/index.ts";

export interface MoveOptions {
  /** Who asked, for the move's record (an email, "cli", a key prefix). */
  requestedBy: string;
  /** After quiescing: longer than the engines' placement refresh and a request's duration. */
  graceMs?: number;
  /** How long the drain waits for running steps before the move stops (to be resumed). */
  drainTimeoutMs?: number;
  /** Called before each phase runs: progress lines, and tests that stop the mover there. */
  beforePhase?: (move: MoveRecord, phase: MovePhase) => void | Promise<void>;
  /** Aborted: stop before the next phase, leaving the move to be resumed (an engine shutting down). */
  stop?: AbortSignal;
}

const DEFAULTS = { graceMs: 2_000, drainTimeoutMs: 5 * 60_000 };
/** Copies that differ from the source at validation, in a row, before the move gives up. */
const MAX_COPIES = 3;

export type MoveResult = { kind: "moved"; move: MoveRecord } | { kind: "already_placed"; backendId: string; epoch: number };
export type StartResult = { kind: "started" | "resumable"; move: MoveRecord } | { kind: "already_placed"; backendId: string; epoch: number };

/**
 * Records a move of `tenantId` to `toBackend` (phase quiesce), without running it; or finds the
 * unfinished move there. A tenant already on `toBackend` with no move under way is `already_placed`.
 */
export async function startMove(storage: Storage, tenantId: string, toBackend: string, requestedBy: string): Promise<StartResult> {
  const { moves } = storage;
  const active = await moves.active(tenantId);
  if (active && active.toBackend !== toBackend) {
    throw new AppError("conflict", `the tenant is being moved to "${active.toBackend}"; finish that move first`);
  }
  if (active) return { kind: "resumable", move: active };
  if (await storage.deletions.active(tenantId)) throw new AppError("conflict", "the tenant is being deleted");
  const placement = await moves.placement(tenantId);
  if (!placement) throw notFound("tenant");
  if (!storage.backends.has(toBackend)) {
    throw new AppError("invalid_argument", `backend "${toBackend.slice(0, 128)}" is not registered`, ["backend_id"]);
  }
  if (placement.backendId === toBackend) return { kind: "already_placed", backendId: placement.backendId, epoch: placement.epoch };
  storage.backends.get(placement.backendId); // Unsupported unless this process serves the old backend too
  const move = await moves.insert({ tenantId, fromBackend: placement.backendId, toBackend, fromEpoch: placement.epoch, requestedBy });
  return { kind: "started", move };
}

/** Starts (or resumes) the move and runs it to the end in this process. Idempotent. */
export async function moveTenant(storage: Storage, tenantId: string, toBackend: string, options: MoveOptions): Promise<MoveResult> {
  const started = await startMove(storage, tenantId, toBackend, options.requestedBy);
  if (started.kind === "already_placed") return started;
  return { kind: "moved", move: await runMove(storage, started.move, options) };
}

/**
 * Runs a recorded move from its phase to the end. One runner per move at a time: a session
 * advisory lock on the primary, held while it runs, turns a second runner (the CLI and an engine,
 * two engines) away with a conflict; a runner that dies releases it with its connection.
 */
export function runMove(storage: Storage, recorded: MoveRecord, options: MoveOptions): Promise<MoveRecord> {
  const { moves } = storage;
  return moves.withLock(recorded.tenantId, async () => {
    let move = recorded;
    try {
      move = (await moves.active(move.tenantId)) ?? { ...move, phase: "done" }; // it may have advanced meanwhile
      while (move.phase !== "done" && !options.stop?.aborted) {
        await options.beforePhase?.(move, move.phase);
        move = await runPhase(storage, move, { ...DEFAULTS, ...options });
      }
      return move;
    } catch (error) {
      await moves.recordError(move.id, (error as Error).message).catch(() => {});
      throw error;
    }
  });
}

async function runPhase(storage: Storage, move: MoveRecord, options: Required<Omit<MoveOptions, "beforePhase" | "stop">>): Promise<MoveRecord> {
  const { moves } = storage;
  const rows = moves.between(move.fromBackend, move.toBackend);
  const { tenantId } = move;
  switch (move.phase) {
    case "quiesce": {
      if (!(await moves.quiesce(tenantId, move.fromEpoch))) {
        throw new AppError("conflict", `the placement changed since the move started (epoch ${move.fromEpoch})`);
      }
      await sleep(options.graceMs);
      return moves.advance(move.id, "drain");
    }
    case "drain": {
      const deadline = Date.now() + options.drainTimeoutMs;
      for (;;) {
        const running = await rows.runningOnSource(tenantId, new Date());
        if (running === 0) break;
        if (Date.now() > deadline) throw new AppError("unavailable", `${running} instance(s) still running after ${options.drainTimeoutMs} ms; run the move again to resume`);
        await sleep(100);
      }
      return moves.advance(move.id, "copy");
    }
    case "copy": {
      const copied = await rows.copy(tenantId);
      return moves.advance(move.id, "validate", { copied, copies: Number(move.detail.copies ?? 0) + 1 });
    }
    case "validate": {
      const [before, after] = await rows.summaries(tenantId);
      const differing = Object.keys(before).filter((table) => !sameSummary(before[table], after[table]));
      if (differing.length === 0) return moves.advance(move.id, "cutover", { validated: before });
      if (Number(move.detail.copies ?? 0) >= MAX_COPIES) {
        throw new AppError("conflict", `the copy still differs from the source in ${differing.join(", ")} after ${MAX_COPIES} copies`);
      }
      return moves.advance(move.id, "copy", { differed: differing });
    }
    case "cutover": {
      const placement = await moves.placement(tenantId);
      const done = placement?.backendId === move.toBackend && placement.epoch === move.fromEpoch + 1;
      if (!done) await moves.cutover(tenantId, move.toBackend, move.fromEpoch + 1);
      return moves.advance(move.id, "resume", { epoch: move.fromEpoch + 1 });
    }
    case "resume": {
      await moves.resume(tenantId, move.toBackend);
      return moves.advance(move.id, "cleanup");
    }
    case "cleanup": {
      const deleted = await rows.deleteFromSource(tenantId);
      return moves.advance(move.id, "done", { deleted_from_source: deleted });
    }
    case "done":
      return move;
  }
}

const sameSummary = (a: TableSummary | undefined, b: TableSummary | undefined) => a?.rows === b?.rows && a?.checksum === b?.checksum;
