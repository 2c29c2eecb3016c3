// G.2's poll for queued signals, for every run of an engine at once: each running instance is
// watched, and every 250 ms one statement asks which of them have a signal queued; only those
// runs then read their queue. Per-run polling cost a statement per run per poll, most of it
// for runs waiting for a step slot.
import type { Logger } from "../logger.ts";

/** G.2: queued signals are looked for this often while an instance runs. */
export const SIGNAL_POLL_MS = 250;

export class SignalWatch {
  private readonly watched = new Map<string, () => void>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(
    private readonly withQueuedSignals: (ids: readonly string[]) => Promise<Set<string>>,
    private readonly log: Logger,
    private readonly everyMs = SIGNAL_POLL_MS,
  ) {}

  /** Calls `onSignals` after each poll that finds a signal queued for `instanceId`; returns the unwatch. */
  watch(instanceId: string, onSignals: () => void): () => void {
    this.watched.set(instanceId, onSignals);
    this.timer ??= setInterval(() => void this.poll(), this.everyMs);
    return () => {
      if (this.watched.get(instanceId) === onSignals) this.watched.delete(instanceId);
      if (this.watched.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    };
  }

  private async poll(): Promise<void> {
    if (this.polling || this.watched.size === 0) return; // a slow poll is not stacked on
    this.polling = true;
    try {
      for (const id of await this.withQueuedSignals([...this.watched.keys()])) this.watched.get(id)?.();
    } catch (error) {
      this.log.warn({ err: error }, "looking for queued signals failed");
    } finally {
      this.polling = false;
    }
  }
}
