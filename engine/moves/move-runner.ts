// The engine's part in tenant moves: operators start a move in the console (which only records
// it); every engine process looks for unfinished moves and runs them (engine/lifecycle/recorded-job-runner.ts).
import type { Logger } from "../logger.ts";
import type { MoveRecord, Storage } from "../storage/index.ts";
import { RecordedJobRunner } from "../lifecycle/recorded-job-runner.ts";
import { runMove } from "./move-tenant.ts";

export class MoveRunner extends RecordedJobRunner<MoveRecord> {
  constructor(storage: Storage, log: Logger, options: { intervalMs?: number; graceMs?: number } = {}) {
    super("move", {
      listActive: () => storage.moves.listActive(),
      runnable: (move) => storage.backends.has(move.fromBackend) && storage.backends.has(move.toBackend),
      run: async (move, stop, jobLog) => {
        const moved = await runMove(storage, move, {
          requestedBy: move.requestedBy,
          ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
          stop, // an engine shutting down leaves the move for the next runner
          beforePhase: (_move, phase) => jobLog.info({ phase }, "tenant move phase"),
        });
        if (moved.phase !== "done") return jobLog.info({ phase: moved.phase }, "tenant move paused for shutdown");
        jobLog.info({ to: moved.toBackend }, "tenant move done");
        await storage.moves.auditDone(moved);
      },
    }, log, options.intervalMs);
  }
}
