// The engine's part in tenant deletions: the console only records one; every engine process
// looks for unfinished deletions and runs them (one runner per tenant: the move lock), as it does
// moves. A deletion that failed is retried after a pause, so a backend restarting heals on its own.
import { isAppError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { Storage } from "../storage/index.ts";
import { runDeletion } from "./delete-tenant.ts";

const RETRY_AFTER_ERROR_MS = 30_000;

export class DeletionRunner {
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

  /** Stops looking; a deletion in progress stops at its next phase and is resumed later. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
    await Promise.all(this.running.values());
  }

  async poll(): Promise<void> {
    try {
      for (const deletion of await this.storage.deletions.listActive()) {
        if (this.running.has(deletion.id)) continue;
        if (deletion.error !== null && Date.now() - deletion.updatedAt.getTime() < RETRY_AFTER_ERROR_MS) continue;
        const log = this.log.child({ tenant_id: deletion.tenantId, deletion_id: deletion.id });
        const run = runDeletion(this.storage, deletion, {
          ...(this.options.graceMs === undefined ? {} : { graceMs: this.options.graceMs }),
          stop: this.stopping.signal,
          beforePhase: (_deletion, phase) => log.info({ phase }, "tenant deletion phase"),
        })
          .then((done) => log.info({ phase: done.phase }, done.phase === "done" ? "tenant deleted" : "tenant deletion paused for shutdown"))
          .catch((error: unknown) => {
            if (!(isAppError(error, "conflict") && (error as Error).message.startsWith("another process"))) {
              log.warn({ err: error }, "tenant deletion stopped; it is retried");
            }
          })
          .finally(() => this.running.delete(deletion.id));
        this.running.set(deletion.id, run);
      }
    } catch (error) {
      this.log.warn({ err: error }, "could not look for tenant deletions");
    }
  }
}
