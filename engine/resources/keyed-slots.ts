// A counting semaphore per key, first come first served within a key: at most `limit(key)`
// holders of one key at a time. Keys never share or borrow slots, so a caller of a key nobody
// saturates starts at once however long another key's queue is. Used for outbound requests per
// (tenant, host) and for a tenant's share of a connection pool.

/** The bound for a key; read at every acquire and release, so a changed limit applies at once. */
export type KeyLimit = (key: string) => number;

/** Gives the slot back; calling it more than once gives it back once. */
export type ReleaseSlot = () => void;

interface Entry {
  active: number;
  /** A Set keeps insertion order (FIFO) and lets an aborted waiter leave in O(1). */
  readonly waiters: Set<() => void>;
}

export class KeyedSlots {
  // An entry exists only while its key has holders or waiters.
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly limit: KeyLimit) {}

  /**
   * Resolves with a release function once the caller holds a slot of `key`; `onWait` runs when
   * it has to queue first. Rejects with `signal.reason` if the signal fires while it waits; the
   * place in the queue is withdrawn.
   */
  acquire(key: string, signal?: AbortSignal, onWait?: () => void): Promise<ReleaseSlot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const entry = this.entry(key);
    this.drain(key, entry); // a raised limit lets waiters in before a newcomer
    if (entry.waiters.size === 0 && entry.active < this.bound(key)) {
      entry.active++;
      return Promise.resolve(this.releaser(key, entry));
    }
    onWait?.();
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const onAbort = () => {
        entry.waiters.delete(grant);
        this.forget(key, entry);
        reject(signal!.reason);
      };
      const grant = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve(this.releaser(key, entry));
      };
      entry.waiters.add(grant);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Holders and waiters of `key`. */
  usage(key: string): { active: number; waiting: number } {
    const entry = this.entries.get(key);
    return { active: entry?.active ?? 0, waiting: entry?.waiters.size ?? 0 };
  }

  private bound(key: string): number {
    const limit = this.limit(key);
    // Below 1 nothing could ever run and waiters would wait forever: a bad value means 1.
    return limit >= 1 ? limit : 1;
  }

  private entry(key: string): Entry {
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { active: 0, waiters: new Set() }));
    return entry;
  }

  private releaser(key: string, entry: Entry): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.active--;
      this.drain(key, entry);
      this.forget(key, entry);
    };
  }

  /** Hands free slots to the longest waiters. */
  private drain(key: string, entry: Entry): void {
    if (entry.waiters.size === 0) return;
    const bound = this.bound(key);
    for (const grant of entry.waiters) {
      if (entry.active >= bound) break;
      entry.waiters.delete(grant);
      entry.active++;
      grant();
    }
  }

  /** Drops an idle entry, so keys no longer used cost nothing. */
  private forget(key: string, entry: Entry): void {
    if (entry.active > 0 || entry.waiters.size > 0) return;
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }
}
