// The engine's part in tenant moves: operators start a move in the console (which only records
// it); every engine process looks for unfinished moves and runs them, one runner per move (the
// advisory lock in runMove). A move that failed is retried after a pause, so a transient fault
// (a backend restarting) heals on its own and a lasting one does not spin.
import type { Logger } from "../logger.ts";
import type { Storage } from "../storage/index.ts";
import { isAppError } from "../errors.ts";
import { runMove } from "./move-tenant.ts";

const RETRY_AFTER_ERROR_MS = 30_000;

export class MoveRunner {
  private timer: NodeJS.Timeout | null = null;
  private readonly running = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly storage: Storage,
    private readonly log: Logger,
    private readonly options: { intervalMs?: number; graceMs?: number } = {},
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.options.intervalMs ?? 2_000);
    this.timer.unref();
  }

  /** Stops looking; a move in progress stops at its next phase boundary and is resumed later. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
    await Promise.all(this.running.values());
  }

  async poll(): Promise<void> {
    try {
      for (const move of await this.storage.moves.listActive()) {
        if (this.running.has(move.id)) continue;
        if (move.error !== null && Date.now() - move.updatedAt.getTime() < RETRY_AFTER_ERROR_MS) continue;
        if (!this.storage.backends.has(move.fromBackend) || !this.storage.backends.has(move.toBackend)) continue;
        const log = this.log.child({ tenant_id: move.tenantId, move_id: move.id });
        const run = runMove(this.storage, move, {
          requestedBy: move.requestedBy,
          ...(this.options.graceMs === undefined ? {} : { graceMs: this.options.graceMs }),
          stop: this.stopping.signal, // an engine shutting down leaves the move for the next runner
          beforePhase: (_move, phase) => log.info({ phase }, "tenant move phase"),
        })
          .then(async (moved) => {
            if (moved.phase !== "done") return log.info({ phase: moved.phase }, "tenant move paused for shutdown");
            log.info({ to: moved.toBackend }, "tenant move done");
            await this.storage.moves.auditDone(moved);
          })
          .catch((error: unknown) => {
            // Another process holds the move: nothing to report.
            if (!(isAppError(error, "conflict") && (error as Error).message.startsWith("another process"))) {
              log.warn({ err: error }, "tenant move stopped; it is retried");
            }
          })
          .finally(() => this.running.delete(move.id));
        this.running.set(move.id, run);
      }
    } catch (error) {
      this.log.warn({ err: error }, "could not look for tenant moves");
    }
  }
}
