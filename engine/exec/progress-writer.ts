// Group commit for step progress: commits that arrive while writes are in flight go out together
// in a later statement. Under load that is one round trip (and one WAL flush) for many steps;
// when idle a commit leaves at once, so nothing waits on a timer. Up to `maxWrites` batches are
// written at once: a run has at most one commit pending, so their rows never overlap, and with
// one at a time every run waited for the whole previous batch's WAL flush (the throughput bench
// was bound by that latency, the engine and PostgreSQL both partly idle).
import { refusedByDatabase, type BackendStore, type Progress } from "../storage/index.ts";

interface Pending {
  progress: Progress;
  resolve: (written: boolean) => void;
  reject: (error: unknown) => void;
}

export class ProgressWriter {
  private queue: Pending[] = [];
  private writing = 0;
  private startPending = false;

  constructor(
    private readonly store: Pick<BackendStore, "commitProgress">,
    /** Told of every progress that was written (the scheduler counts ends and deferrals). */
    private readonly onWritten: (progress: Progress) => void = () => {},
    private readonly maxBatch = 256,
    private readonly maxWrites = 3,
  ) {}

  /** Resolves true once written, false when the instance's lease was lost. */
  commit(progress: Progress): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ progress, resolve, reject });
      this.startSoon();
    });
  }

  /** Starts a write after this turn of the event loop, so the commits issued in it share a batch. */
  private startSoon(): void {
    if (this.startPending || this.writing >= this.maxWrites || this.queue.length === 0) return;
    this.startPending = true;
    setImmediate(() => {
      this.startPending = false;
      while (this.writing < this.maxWrites && this.queue.length > 0) {
        this.writing++;
        void this.write(this.queue.splice(0, this.maxBatch)).finally(() => {
          this.writing--;
          this.startSoon();
        });
      }
    });
  }

  /**
   * One statement for the batch. When the database refuses it (nothing of it was written), the
   * halves are retried on their own, down to single commits, so only a commit that fails alone
   * fails its run. Any other error (the connection) leaves unknown what was written: no retry.
   */
  private async write(batch: Pending[]): Promise<void> {
    try {
      const written = await this.store.commitProgress(batch.map((p) => p.progress));
      for (const p of batch) {
        const ok = written.has(p.progress.instanceId);
        if (ok) this.onWritten(p.progress);
        p.resolve(ok);
      }
    } catch (error) {
      if (batch.length > 1 && refusedByDatabase(error)) {
        const half = Math.ceil(batch.length / 2);
        await this.write(batch.slice(0, half));
        await this.write(batch.slice(half));
      } else {
        for (const p of batch) p.reject(error);
      }
    }
  }
}
