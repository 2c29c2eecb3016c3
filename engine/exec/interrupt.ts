// A run's or a step's interruption (lease lost, shutdown, cancelled, paused, timed out), told to
// plain callbacks, with an AbortSignal made only when something asks for one (a handler that
// passes it to a request, say). Most steps end before anything would listen: an AbortController
// per run and per step, with the listeners that relayed them, were a tenth of the engine's CPU
// per one-step instance in the throughput bench.

/** What waits on an interruption: the step slots, a handler call. */
export interface Interruptible {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Calls `listener` once when aborted (never when already aborted); returns its removal. */
  onAbort(listener: () => void): () => void;
}

export class Interrupt implements Interruptible {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] | null = null;
  private controller: AbortController | null = null;

  /** Aborts once, with the first reason given; later calls change nothing. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = null;
    this.controller?.abort(reason);
    if (listeners) for (const listener of listeners) listener();
  }

  onAbort(listener: () => void): () => void {
    if (this.aborted) return noop;
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.listeners!.splice(at, 1);
    };
  }

  /** The same interruption as an AbortSignal, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}

const noop = () => {};
