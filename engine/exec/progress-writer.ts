// Group commit for step progress: commits that arrive while a write is in flight go out together
// in the next statement. Under load that is one round trip (and one WAL flush) for many steps;
// when idle a commit leaves at once, so nothing waits on a timer.
import { refusedByDatabase, type BackendStore, type Progress } from "../storage/index.ts";

interface Pending {
  progress: Progress;
  resolve: (written: boolean) => void;
  reject: (error: unknown) => void;
}

export class ProgressWriter {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly store: Pick<BackendStore, "commitProgress">,
    /** Told of every progress that was written (the scheduler counts ends and deferrals). */
    private readonly onWritten: (progress: Progress) => void = () => {},
    private readonly maxBatch = 256,
  ) {}

  /** Resolves true once written, false when the instance's lease was lost. */
  commit(progress: Progress): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ progress, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    // Let the commits issued in this turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) await this.write(this.queue.splice(0, this.maxBatch));
    this.flushing = false;
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
