// The retention pruner: on one backend, deletes each tenant's terminal instances older than its
// retention (tenant_limits.retention_days, else BULKHEAD_RETENTION_DAYS) with all their rows.
// Any engine may run it on any backend it serves; two engines on one backend share the work
// (the delete skips rows another holds).
// Fair by construction: a pass gives every tenant with expired instances one batch, starting
// from a different tenant each pass, so a tenant with ten million old rows costs the others one
// batch of its own per pass and never delays their pruning beyond that. It runs beside the
// scheduler, not in its loop, and locks only terminal rows, which no claim touches.
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../logger.ts";
import type { BackendStore, TenantLimits } from "../storage/index.ts";

export interface RetentionOptions {
  /** Instances of one tenant deleted per statement (and per pass). */
  batch: number;
  /** The pause after a pass that left nothing expired, and the longest between two counts. */
  intervalMs: number;
  /** The pause between passes while some tenant still has expired instances. */
  busyPauseMs: number;
  /** Expired instances are counted up to this for the Resources page ("100,000 or more"). */
  countCap: number;
}

export const RETENTION_DEFAULTS: Omit<RetentionOptions, "intervalMs" | "batch"> = { busyPauseMs: 200, countCap: 100_000 };

export interface RetentionDeps {
  store: Pick<BackendStore, "id" | "tenantsWithExpired" | "pruneExpired" | "countExpired" | "recordRetention" | "clearRetentionPending">;
  /** The tenants placed on this backend and not quiesced (a moving or deleted tenant is left alone), and their limits. */
  tenants: { claimable(backendId: string): string[]; limitsOf(tenantId: string): TenantLimits | undefined };
  defaultDays: number;
  log: Logger;
  options: RetentionOptions;
}

export interface PassResult {
  /** Instances deleted per tenant. */
  pruned: Map<string, number>;
  /** Some tenant filled its batch: there is probably more. */
  more: boolean;
}

export class RetentionPruner {
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;
  private rotation = 0;
  private lastCount = 0;

  constructor(private readonly deps: RetentionDeps) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops after the statement in flight. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { signal } = this.stopping;
    while (!signal.aborted) {
      let more = false;
      try {
        ({ more } = await this.pass());
      } catch (error) {
        this.deps.log.warn({ err: error, backend_id: this.deps.store.id }, "retention pass failed");
      }
      await sleep(more ? this.deps.options.busyPauseMs : this.deps.options.intervalMs, undefined, { signal }).catch(() => {});
    }
  }

  /** One batch for every tenant with expired instances; counts them too when a count is due. */
  async pass(): Promise<PassResult> {
    const { store, tenants, options } = this.deps;
    const retention = tenants.claimable(store.id).map((tenantId) => ({ tenantId, days: this.daysOf(tenantId) }));
    const expired = await store.tenantsWithExpired(retention);
    const count = Date.now() - this.lastCount >= options.intervalMs;
    if (count) {
      this.lastCount = Date.now();
      await store.clearRetentionPending(expired);
    }
    const pruned = new Map<string, number>();
    let more = false;
    const start = expired.length === 0 ? 0 : this.rotation++ % expired.length;
    for (const tenantId of [...expired.slice(start), ...expired.slice(0, start)]) {
      if (this.stopping.signal.aborted) break;
      const days = this.daysOf(tenantId);
      const pending = count ? await store.countExpired(tenantId, days, options.countCap) : null;
      const { instances } = await store.pruneExpired(tenantId, days, options.batch);
      await store.recordRetention(tenantId, { pending, capped: pending !== null && pending >= options.countCap, pruned: instances });
      pruned.set(tenantId, instances);
      if (instances >= options.batch) more = true;
    }
    const total = [...pruned.values()].reduce((n, v) => n + v, 0);
    if (total > 0) this.deps.log.info({ backend_id: store.id, tenants: pruned.size, instances: total }, "retention pass");
    return { pruned, more };
  }

  private daysOf(tenantId: string): number {
    return this.deps.tenants.limitsOf(tenantId)?.retentionDays ?? this.deps.defaultDays;
  }
}
