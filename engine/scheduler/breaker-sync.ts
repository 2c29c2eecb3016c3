// Keeps one backend's circuit breakers in step across engine processes. Breakers live in memory
// (engine/breakers); PostgreSQL carries what must outlive a process or reach the others:
// - Open transitions are written off the hot path (a tracked set of pending writes that stop()
//   awaits); leaving Open deletes the row;
// - at boot the Open rows come back with their opened_at, so the cooldown clock survives;
// - every SYNC_MS, Open rows written by other processes are honoured, and resets (by operators or
//   admins, from the reset feed) drop the breaker here too: both reach every process within 5 s;
//   tenant admins' per-handler settings are picked up on the same sweep.
import type { BreakerSettings, BreakerTransition, CircuitBreakerRegistry } from "../breakers/registry.ts";
import type { Logger } from "../logger.ts";
import type { BackendStore } from "../storage/index.ts";

export const SYNC_MS = 2_000;

export class BreakerSync {
  private readonly pending = new Set<Promise<void>>();
  /**
   * Breakers with a write in flight, and those that changed while a sync was reading: a sync
   * must not undo with a stale row what this process has just decided.
   */
  private readonly writing = new Map<string, number>();
  private readonly touched = new Set<string>();
  private lastResetId = 0;
  /** Tenant admins' per-handler settings (tenant, then handler), refreshed with every sync. */
  private settings = new Map<string, Map<string, BreakerSettings>>();

  /** For the registry: a tenant's own settings for a handler, if it set any. */
  readonly settingsFor = (tenantId: string, handler: string): BreakerSettings | undefined => this.settings.get(tenantId)?.get(handler);
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: BackendStore,
    private readonly registry: CircuitBreakerRegistry,
    private readonly log: Logger,
  ) {}

  /** The registry's transition listener: mirror Open to the table, without waiting for it. */
  readonly onTransition = (transition: BreakerTransition): void => {
    const write =
      transition.kind === "opened"
        ? this.store.upsertOpenBreaker({
            tenantId: transition.tenantId, handler: transition.handler,
            failureCount: transition.failureCount, openedAt: new Date(transition.openedAt),
          })
        : this.store.deleteOpenBreaker(transition.tenantId, transition.handler);
    const key = `${transition.tenantId}\u0000${transition.handler}`;
    this.writing.set(key, (this.writing.get(key) ?? 0) + 1);
    this.touched.add(key);
    const tracked: Promise<void> = write
      .catch((error: unknown) => this.log.warn({ err: error, tenant_id: transition.tenantId, handler: transition.handler }, "breaker write failed"))
      .finally(() => {
        this.pending.delete(tracked);
        const left = (this.writing.get(key) ?? 1) - 1;
        if (left > 0) this.writing.set(key, left);
        else this.writing.delete(key);
      });
    this.pending.add(tracked);
  };

  /** Boot: Open rows come back as they were; the reset feed is followed from now on. */
  async start(): Promise<void> {
    this.lastResetId = await this.store.latestResetId();
    await this.sync();
    this.timer = setInterval(() => void this.sync(), SYNC_MS);
  }

  async sync(): Promise<void> {
    this.touched.clear();
    try {
      const settings = new Map<string, Map<string, BreakerSettings>>();
      for (const row of await this.store.listBreakerSettings()) {
        if (!settings.has(row.tenantId)) settings.set(row.tenantId, new Map());
        settings.get(row.tenantId)!.set(row.handler, { threshold: row.failureThreshold, cooldownMs: row.cooldownSecs * 1000 });
      }
      this.settings = settings;
      for (const reset of await this.store.resetsSince(this.lastResetId)) {
        this.registry.reset(reset.tenantId, reset.handler);
        this.lastResetId = reset.id;
      }
      for (const row of await this.store.listOpenBreakers()) {
        const key = `${row.tenantId}\u0000${row.handler}`;
        if (!this.writing.has(key) && !this.touched.has(key) && !this.registry.isOpen(row.tenantId, row.handler)) {
          this.registry.restoreOpen(row.tenantId, row.handler, row.failureCount, row.openedAt.getTime());
        }
      }
    } catch (error) {
      this.log.warn({ err: error, backend_id: this.store.id }, "breaker sync failed");
    }
  }

  /** Stops syncing and waits for every breaker write still in flight. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
