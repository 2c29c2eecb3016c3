// How an engine runs the tenant jobs operators record (moves, deletions): every process looks for
// unfinished ones and runs each, one runner per tenant (the move lock, which turns a second one
// away with a conflict). A job that failed is retried after a pause, so a transient fault (a
// backend restarting) heals on its own and a lasting one does not spin. Stopping leaves a job at
// its next phase boundary, for the next runner.
import { isAppError } from "../errors.ts";
import type { Logger } from "../logger.ts";

const RETRY_AFTER_ERROR_MS = 30_000;

export interface RecordedJob {
  id: string;
  tenantId: string;
  error: string | null;
  updatedAt: Date;
}

export interface RecordedJobs<J extends RecordedJob> {
  /** Every unfinished job, oldest first. */
  listActive(): Promise<J[]>;
  /** Whether this process can run it (it serves the backends it needs). */
  runnable(job: J): boolean;
  /** Runs it to the end, or to the phase where `stop` finds it aborted. */
  run(job: J, stop: AbortSignal, log: Logger): Promise<void>;
}

export class RecordedJobRunner<J extends RecordedJob> {
  private timer: NodeJS.Timeout | null = null;
  private readonly running = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly kind: string,
    private readonly jobs: RecordedJobs<J>,
    private readonly log: Logger,
    private readonly intervalMs = 2_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
    await Promise.all(this.running.values());
  }

  async poll(): Promise<void> {
    try {
      for (const job of await this.jobs.listActive()) {
        if (this.running.has(job.id) || !this.jobs.runnable(job)) continue;
        if (job.error !== null && Date.now() - job.updatedAt.getTime() < RETRY_AFTER_ERROR_MS) continue;
        const log = this.log.child({ tenant_id: job.tenantId, [`${this.kind}_id`]: job.id });
        const run = this.jobs.run(job, this.stopping.signal, log)
          .catch((error: unknown) => {
            // Another process holds the tenant's lock: nothing to report.
            if (!(isAppError(error, "conflict") && (error as Error).message.startsWith("another process"))) {
              log.warn({ err: error }, `tenant ${this.kind} stopped; it is retried`);
            }
          })
          .finally(() => this.running.delete(job.id));
        this.running.set(job.id, run);
      }
    } catch (error) {
      this.log.warn({ err: error }, `could not look for tenant ${this.kind}s`);
    }
  }
}
