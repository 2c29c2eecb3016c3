// Per-tenant, per-minute engine metrics, counted in memory on the hot path (a couple of map
// lookups and integer adds per event, nothing allocated for a tenant already seen this minute)
// and written in one batched statement every few seconds (engine/storage/metrics.ts).
import type { DeferReason } from "../exec/preflight.ts";

/**
 * Upper bounds (ms) of the schedule-lag buckets: due → claimed. Bucket i counts lags up to
 * LAG_BUCKETS_MS[i]; the last bucket, one past these, counts everything slower than a minute.
 */
export const LAG_BUCKETS_MS = [10, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000] as const;

/** The deferrals that say something about fairness or a vendor (a plain `delay` is the workflow's own). */
export const COUNTED_DEFERRALS: readonly DeferReason[] = ["breaker", "rate_limit", "budget", "send_window", "cap"];

export interface MinuteCounts {
  claimed: number;
  completed: number;
  failed: number;
  deferred: Partial<Record<DeferReason, number>>;
  lagBuckets: number[];
  backlogSamples: number[];
  /** Step slots: the most the tenant held at once in this process, and its steps that had to wait. */
  stepsPeak: number;
  stepsWaited: number;
  /** Waits for another bounded resource of the ledger, by its id (db_connections, outbound_per_host, event_fan_out). */
  resourceWaits: Record<string, number>;
}

export interface MetricRow extends MinuteCounts {
  tenantId: string;
  minute: Date;
}

const MINUTE_MS = 60_000;

export function lagBucket(lagMs: number): number {
  let i = 0;
  while (i < LAG_BUCKETS_MS.length && lagMs > LAG_BUCKETS_MS[i]!) i++;
  return i;
}

export class TenantMetrics {
  /** minute (epoch ms) → tenant → counts. */
  private minutes = new Map<number, Map<string, MinuteCounts>>();

  private counts(tenantId: string, at: number): MinuteCounts {
    const minute = at - (at % MINUTE_MS);
    let tenants = this.minutes.get(minute);
    if (!tenants) this.minutes.set(minute, (tenants = new Map()));
    let counts = tenants.get(tenantId);
    if (!counts) {
      counts = { claimed: 0, completed: 0, failed: 0, deferred: {}, lagBuckets: new Array<number>(LAG_BUCKETS_MS.length + 1).fill(0), backlogSamples: [], stepsPeak: 0, stepsWaited: 0, resourceWaits: {} };
      tenants.set(tenantId, counts);
    }
    return counts;
  }

  claimed(tenantId: string, lagMs: number, at = Date.now()): void {
    const counts = this.counts(tenantId, at);
    counts.claimed++;
    counts.lagBuckets[lagBucket(Math.max(0, lagMs))]!++;
  }

  ended(tenantId: string, state: "completed" | "failed", at = Date.now()): void {
    this.counts(tenantId, at)[state]++;
  }

  deferred(tenantId: string, reason: DeferReason, at = Date.now()): void {
    if (!COUNTED_DEFERRALS.includes(reason)) return;
    const deferred = this.counts(tenantId, at).deferred;
    deferred[reason] = (deferred[reason] ?? 0) + 1;
  }

  /** A written commit: counted when it ends an instance or defers it for a counted reason. */
  written(progress: { tenantId: string; state: string; deferReason?: string | null }, at = Date.now()): void {
    if (progress.state === "completed" || progress.state === "failed") this.ended(progress.tenantId, progress.state, at);
    else if (progress.state === "scheduled" && progress.deferReason) this.deferred(progress.tenantId, progress.deferReason as DeferReason, at);
  }

  /** A step took a slot: the tenant now runs `running` steps; `waited` when it had to queue for it. */
  step(tenantId: string, running: number, waited: boolean, at = Date.now()): void {
    const counts = this.counts(tenantId, at);
    if (running > counts.stepsPeak) counts.stepsPeak = running;
    if (waited) counts.stepsWaited++;
  }

  /** The tenant had to wait for a bounded resource (a ledger id). */
  waited(tenantId: string, resource: string, at = Date.now()): void {
    const waits = this.counts(tenantId, at).resourceWaits;
    waits[resource] = (waits[resource] ?? 0) + 1;
  }

  /** How many of the tenant's instances were due but not claimed when sampled. */
  backlog(tenantId: string, due: number, at = Date.now()): void {
    this.counts(tenantId, at).backlogSamples.push(due);
  }

  /** Tenants with any count in the minute of `at` (active this minute). */
  tenantsInMinute(at = Date.now()): string[] {
    return [...(this.minutes.get(at - (at % MINUTE_MS))?.keys() ?? [])];
  }

  /** Everything counted since the last call, as rows to write; the counters start again at zero. */
  drain(): MetricRow[] {
    const rows: MetricRow[] = [];
    for (const [minute, tenants] of this.minutes) {
      for (const [tenantId, counts] of tenants) rows.push({ tenantId, minute: new Date(minute), ...counts });
    }
    this.minutes = new Map();
    return rows;
  }

  /** Puts rows back after a failed write, so a database blip loses nothing. */
  restore(rows: MetricRow[]): void {
    for (const row of rows) {
      const counts = this.counts(row.tenantId, row.minute.getTime());
      counts.claimed += row.claimed;
      counts.completed += row.completed;
      counts.failed += row.failed;
      for (const [reason, n] of Object.entries(row.deferred) as [DeferReason, number][]) counts.deferred[reason] = (counts.deferred[reason] ?? 0) + n;
      row.lagBuckets.forEach((n, i) => (counts.lagBuckets[i] = (counts.lagBuckets[i] ?? 0) + n));
      counts.backlogSamples.push(...row.backlogSamples);
      counts.stepsPeak = Math.max(counts.stepsPeak, row.stepsPeak);
      counts.stepsWaited += row.stepsWaited;
      for (const [resource, n] of Object.entries(row.resourceWaits)) counts.resourceWaits[resource] = (counts.resourceWaits[resource] ?? 0) + n;
    }
  }
}
