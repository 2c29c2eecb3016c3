// The outbound-request bound of the resource ledger: at most `limit(tenantId)` requests of one
// tenant to one host at a time (http_request and llm_call share it). Over the bound a request
// waits for a slot, first come first served per (tenant, host); it never fails because of the
// bound, only when its own signal fires while it waits. Tenants never share or borrow slots: the
// key is the pair, so a quiet tenant's request to a host a noisy one saturates starts at once.

/** Concurrent outbound requests per (tenant, host) unless the engine configures another limit. */
export const DEFAULT_OUTBOUND_PER_HOST = 16;

/** The bound for a tenant; a function so per-tenant (tiered) overrides can plug in. */
export type SlotLimit = (tenantId: string) => number;

/** Gives the slot back; calling it more than once gives it back once. */
export type ReleaseSlot = () => void;

interface Waiter {
  grant: () => void;
}

interface Entry {
  active: number;
  /** A Set keeps insertion order (FIFO) and lets an aborted waiter leave in O(1). */
  readonly waiters: Set<Waiter>;
}

export class HostSlots {
  // tenant -> host -> entry; an entry exists only while it has holders or waiters.
  private readonly entries = new Map<string, Map<string, Entry>>();

  constructor(private readonly limit: SlotLimit = () => DEFAULT_OUTBOUND_PER_HOST) {}

  /**
   * Resolves with a release function once the caller holds one of the tenant's slots for `host`.
   * Rejects with `signal.reason` if the signal fires first; the place in the queue is withdrawn.
   */
  acquire(tenantId: string, host: string, signal: AbortSignal): Promise<ReleaseSlot> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const entry = this.entry(tenantId, host);
    this.drain(tenantId, host, entry); // a raised limit lets waiters in before a newcomer
    if (entry.waiters.size === 0 && entry.active < this.bound(tenantId)) {
      entry.active++;
      return Promise.resolve(this.releaser(tenantId, host, entry));
    }
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const onAbort = () => {
        entry.waiters.delete(waiter);
        this.forget(tenantId, host, entry);
        reject(signal.reason);
      };
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(this.releaser(tenantId, host, entry));
        },
      };
      entry.waiters.add(waiter);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Requests holding a slot and requests waiting for one, for (tenant, host). */
  usage(tenantId: string, host: string): { active: number; waiting: number } {
    const entry = this.entries.get(tenantId)?.get(host);
    return { active: entry?.active ?? 0, waiting: entry?.waiters.size ?? 0 };
  }

  private bound(tenantId: string): number {
    const limit = this.limit(tenantId);
    // Below 1 nothing could ever run and waiters would wait forever: a bad value means 1.
    return limit >= 1 ? limit : 1;
  }

  private entry(tenantId: string, host: string): Entry {
    let hosts = this.entries.get(tenantId);
    if (!hosts) this.entries.set(tenantId, (hosts = new Map()));
    let entry = hosts.get(host);
    if (!entry) hosts.set(host, (entry = { active: 0, waiters: new Set() }));
    return entry;
  }

  private releaser(tenantId: string, host: string, entry: Entry): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.active--;
      this.drain(tenantId, host, entry);
      this.forget(tenantId, host, entry);
    };
  }

  /** Hands free slots to the longest waiters. */
  private drain(tenantId: string, host: string, entry: Entry): void {
    if (entry.waiters.size === 0) return;
    const bound = this.bound(tenantId);
    for (const waiter of entry.waiters) {
      if (entry.active >= bound) break;
      entry.waiters.delete(waiter);
      entry.active++;
      waiter.grant();
    }
  }

  /** Drops an idle entry, so hosts a tenant no longer calls cost nothing. */
  private forget(tenantId: string, host: string, entry: Entry): void {
    if (entry.active > 0 || entry.waiters.size > 0) return;
    const hosts = this.entries.get(tenantId);
    if (hosts?.get(host) !== entry) return;
    hosts.delete(host);
    if (hosts.size === 0) this.entries.delete(tenantId);
  }
}
