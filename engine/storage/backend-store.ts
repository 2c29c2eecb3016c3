// What an engine's scheduler does on one backend: claim, keep and reap leases, commit progress,
// sweep, and keep breakers and metrics. The pool stays in here; a claimed instance gets its own
// tenant-bound RunStore.
import pg from "pg";
import type { Logger } from "../logger.ts";
import type { MetricRow } from "../metrics/tenant-metrics.ts";
import type { Backend } from "./backends.ts";
import { listBudgetedTenants } from "./budgets.ts";
import { deleteOpenBreaker, latestResetId, listBreakerSettings, listOpenBreakers, resetsSince, upsertOpenBreaker, type OpenBreakerRow } from "./breakers.ts";
import { listExpiringCredentials, refreshCredential, type ExpiringCredential, type RefreshedCredential } from "./credentials.ts";
import { claimDueInstances, nextDueAfter, type ClaimedInstance, type ClaimOptions } from "./claim.ts";
import { fireDueCronSchedules, type CronClaimOptions, type NextFire } from "./cron-schedules.ts";
import { commitProgressBatch, type Progress } from "./execution.ts";
import { asTenantId, type TenantId } from "./ids.ts";
import { reapExpiredLeases, releaseLeases, renewLeases, wakeDueWaiting } from "./leases.ts";
import { pruneEventMinutes } from "./events.ts";
import { mergeInstanceCounts } from "./instance-counts.ts";
import { advanceTenantActivity } from "./tenant-activity.ts";
import { dueBacklog, pruneTenantMetrics, writeTenantMetrics } from "./metrics.ts";
import { clearRetentionPending, countExpired, pruneExpired, recordRetention, tenantsWithExpired } from "./retention.ts";
import { RunStore } from "./run-store.ts";
import { instancesWithQueuedSignals } from "./signals.ts";
import { reapWorkerTasks, type ReapOptions } from "./worker-tasks.ts";

/**
 * Batches of tenant_activity_hour rows (1,000 each) one reaper round moves on at most: moving a
 * row on reads the one minute that left it, so 20,000 rows are a small round, and rows read
 * while not moved on yet cost the read an index probe each.
 */
const ADVANCE_BATCHES = 20;

/** The server refused the statement (so nothing of it was written), as opposed to a lost connection. */
export function refusedByDatabase(error: unknown): boolean {
  return error instanceof pg.DatabaseError;
}

export class BackendStore {
  constructor(private readonly backend: Backend) {}

  get id(): string {
    return this.backend.id;
  }

  /** The store one claimed instance runs with, bound to its tenant and lease. */
  run(claim: ClaimedInstance): RunStore {
    return new RunStore(this.backend, claim);
  }

  /** Which of the engine's running instances have a signal queued (G.2's poll, for them all at once). */
  instancesWithQueuedSignals(ids: readonly string[]) {
    return instancesWithQueuedSignals(this.backend.pool, ids);
  }

  // ---------------------------------------------------------------- claims and leases

  claim(options: ClaimOptions) {
    return claimDueInstances(this.backend.pool, options);
  }

  /** OAuth2 credentials of this backend's tenants expiring by `before` (the refresh sweep). */
  listExpiringCredentials(before: Date, limit: number) {
    return listExpiringCredentials(this.backend.pool, before, limit);
  }

  /** Refreshes one of them under a row lock, if it is still due and no other engine holds it. */
  refreshCredential(key: { tenantId: TenantId; id: string }, before: Date, refresh: (credential: ExpiringCredential) => Promise<RefreshedCredential | null>) {
    return refreshCredential(this.backend.pool, key, before, refresh);
  }

  /** When the next instance not yet due becomes due (null: none is scheduled). */
  nextDueAfter(now: Date) {
    return nextDueAfter(this.backend.pool, now);
  }

  releaseLeases(claims: ClaimedInstance[], dueAt: Date, deferReason: string | null = null) {
    return releaseLeases(this.backend.pool, claims, dueAt, deferReason);
  }

  /** The ids still held; any other lease was lost. */
  renewLeases(leases: { id: string; leaseEpoch: number }[], until: Date) {
    return renewLeases(this.backend.pool, leases, until);
  }

  /** Group commit: the ids whose progress was written (the others had lost their lease). */
  commitProgress(batch: Progress[]) {
    return commitProgressBatch(this.backend.pool, batch);
  }

  /** The cron tick's claim: due schedules of every tenant here, fairly, each fired and advanced. */
  fireDueCronSchedules(options: CronClaimOptions, nextFire: NextFire, log: Logger) {
    return fireDueCronSchedules(this.backend.pool, options, nextFire, log);
  }

  // ---------------------------------------------------------------- sweeps

  reapExpiredLeases(now: Date, limit: number) {
    return reapExpiredLeases(this.backend.pool, now, limit);
  }

  wakeDueWaiting(now: Date, limit: number, onlyTenants: string[] | null) {
    return wakeDueWaiting(this.backend.pool, now, limit, onlyTenants);
  }

  reapWorkerTasks(now: Date, options: Partial<ReapOptions>) {
    return reapWorkerTasks(this.backend.pool, now, options);
  }

  listBudgetedTenants() {
    return listBudgetedTenants(this.backend.pool);
  }

  // ---------------------------------------------------------------- metrics

  dueBacklog(now: Date, onlyTenants: string[] | null) {
    return dueBacklog(this.backend.pool, now, onlyTenants);
  }

  writeTenantMetrics(rows: readonly MetricRow[]) {
    return writeTenantMetrics(this.backend.pool, rows);
  }

  pruneTenantMetrics(before: Date) {
    return pruneTenantMetrics(this.backend.pool, before);
  }

  /**
   * Moves tenants' hours (tenant_activity_hour) on to the one ending at `now`, at most
   * ADVANCE_BATCHES batches a call (once a minute every active tenant's row is due; once an hour
   * each is summed again, spread over the rounds that takes).
   */
  async advanceTenantActivity(now: Date) {
    let moved = 0;
    for (let i = 0; i < ADVANCE_BATCHES; i++) {
      const batch = await advanceTenantActivity(this.backend.pool, now);
      moved += batch;
      if (batch === 0) break;
    }
    return moved;
  }

  /** Folds the deltas of tenant_instance_counts into one row per tenant and state. */
  mergeInstanceCounts() {
    return mergeInstanceCounts(this.backend.pool);
  }

  /** Emit counts of minutes before `before` (they bound nothing any more). */
  pruneEventMinutes(before: Date) {
    return pruneEventMinutes(this.backend.pool, before);
  }

  // ---------------------------------------------------------------- retention (engine/retention)

  /** Which of the tenants have instances past their retention (days per tenant). */
  tenantsWithExpired(retention: readonly { tenantId: string; days: number }[]) {
    return tenantsWithExpired(this.backend.pool, retention);
  }

  /** Deletes up to `limit` of the tenant's expired instances with their rows. */
  pruneExpired(tenantId: string, days: number, limit: number) {
    return pruneExpired(this.backend.pool, asTenantId(tenantId), days, limit);
  }

  countExpired(tenantId: string, days: number, cap: number) {
    return countExpired(this.backend.pool, asTenantId(tenantId), days, cap);
  }

  recordRetention(tenantId: string, change: { pending: number | null; capped: boolean; pruned: number }) {
    return recordRetention(this.backend.pool, asTenantId(tenantId), change);
  }

  clearRetentionPending(exceptTenants: readonly string[]) {
    return clearRetentionPending(this.backend.pool, exceptTenants);
  }

  // ---------------------------------------------------------------- breakers (every tenant here)

  upsertOpenBreaker(row: OpenBreakerRow) {
    return upsertOpenBreaker(this.backend.pool, row);
  }

  /** For the breaker registry, whose tenants all came from claims on this backend. */
  deleteOpenBreaker(tenantId: string, handler: string) {
    return deleteOpenBreaker(this.backend.pool, asTenantId(tenantId), handler);
  }

  listOpenBreakers() {
    return listOpenBreakers(this.backend.pool);
  }

  listBreakerSettings() {
    return listBreakerSettings(this.backend.pool);
  }

  latestResetId() {
    return latestResetId(this.backend.pool);
  }

  resetsSince(afterId: number) {
    return resetsSince(this.backend.pool, afterId);
  }
}
