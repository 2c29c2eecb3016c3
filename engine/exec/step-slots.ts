// Step slots: how many steps an engine process runs at once, in all and per tenant. A slot is
// held around each handler call and each worker-task dispatch, so the branches of a parallel,
// race or for_each count one each. A step that finds no free slot waits in its tenant's FIFO
// queue; freed slots go round robin across the tenants that wait, so a tenant at its own limit
// never holds back another tenant's steps. Waiting holds no database connection: pre-flight has
// finished before a slot is asked for.
import type { Interruptible } from "./interrupt.ts";

/** Handlers that only wait on a timer hold no slot: a 10-minute sleep is not work. */
const TIMER_HANDLERS: ReadonlySet<string> = new Set(["sleep"]);

export function holdsSlot(handler: string): boolean {
  return !TIMER_HANDLERS.has(handler);
}

export interface Slot {
  release(): void;
  /** The step queued for it (the tenant or the process was at its limit). */
  waited: boolean;
}

interface Waiter {
  grant: (release: () => void) => void;
}

export class StepSlots {
  private inUse = 0;
  private readonly byTenant = new Map<string, number>();
  private readonly queues = new Map<string, Waiter[]>();
  /** Tenants with waiting steps, in the order they are served. */
  private readonly turns: string[] = [];

  constructor(
    private readonly limit: number,
    private readonly tenantLimit: (tenantId: string) => number,
  ) {}

  /**
   * Resolves with the slot once the step may run, or with null when `interrupt` aborts first (the
   * request is withdrawn; nothing is held).
   */
  acquire(tenantId: string, interrupt: Interruptible): Promise<Slot | null> {
    if (interrupt.aborted) return Promise.resolve(null);
    if (!this.queues.has(tenantId) && this.fits(tenantId)) return Promise.resolve({ release: this.take(tenantId), waited: false });
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: (release) => {
          stopWaiting();
          resolve({ release, waited: true });
        },
      };
      const stopWaiting = interrupt.onAbort(() => {
        this.withdraw(tenantId, waiter);
        resolve(null);
      });
      const queue = this.queues.get(tenantId);
      if (queue) queue.push(waiter);
      else {
        this.queues.set(tenantId, [waiter]);
        this.turns.push(tenantId);
      }
      this.dispatch();
    });
  }

  /** Steps running now, in all or of one tenant. */
  running(tenantId?: string): number {
    return tenantId === undefined ? this.inUse : (this.byTenant.get(tenantId) ?? 0);
  }

  /** Steps waiting for a slot, in all or of one tenant. */
  waiting(tenantId?: string): number {
    if (tenantId !== undefined) return this.queues.get(tenantId)?.length ?? 0;
    let n = 0;
    for (const queue of this.queues.values()) n += queue.length;
    return n;
  }

  private fits(tenantId: string): boolean {
    return this.inUse < this.limit && (this.byTenant.get(tenantId) ?? 0) < this.tenantLimit(tenantId);
  }

  private take(tenantId: string): () => void {
    this.inUse++;
    this.byTenant.set(tenantId, (this.byTenant.get(tenantId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      const left = this.byTenant.get(tenantId)! - 1;
      if (left > 0) this.byTenant.set(tenantId, left);
      else this.byTenant.delete(tenantId);
      this.dispatch();
    };
  }

  /** Hands free slots to waiting tenants in turn, skipping those at their own limit. */
  private dispatch(): void {
    let skipped = 0;
    while (this.inUse < this.limit && skipped < this.turns.length) {
      const tenantId = this.turns.shift()!;
      if (!this.fits(tenantId)) {
        this.turns.push(tenantId);
        skipped++;
        continue;
      }
      skipped = 0;
      const queue = this.queues.get(tenantId)!;
      const waiter = queue.shift()!;
      if (queue.length > 0) this.turns.push(tenantId);
      else this.queues.delete(tenantId);
      waiter.grant(this.take(tenantId));
    }
  }

  private withdraw(tenantId: string, waiter: Waiter): void {
    const queue = this.queues.get(tenantId);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) {
      this.queues.delete(tenantId);
      const turn = this.turns.indexOf(tenantId);
      if (turn >= 0) this.turns.splice(turn, 1);
    }
  }
}
