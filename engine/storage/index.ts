// engine/storage: the only module that reads or writes tenant data. A caller gets at a tenant's
// rows only through `storage.tenant(id)`, which routes the id through the partition router
// (failing closed) and binds every statement to that tenant.
import { AppError, isAppError } from "../errors.ts";
import type { Backend, StorageBackends } from "./backends.ts";
import type { TenantConnections } from "./connection-shares.ts";
import {
  listBreakerSettings, listOpenBreakers, listResets, resetBreaker, setBreakerSettings,
  type BreakerBounds, type BreakerReset, type OpenBreakerRow,
} from "./breakers.ts";
import { readBudget, refundBudget, removeBudget, setBudget, tryConsumeBudget } from "./budgets.ts";
import {
  createInstance, createInstances, getInstance, instanceOwner, listBlockOutputs, listChildInstances, listInstances, listSessionInstances,
  type InstanceFilter, type NewInstance,
} from "./instance-records.ts";
import { patchInstanceState, replaceInstanceContext } from "./instance-state.ts";
import { runBatchAction, type BatchAction } from "./batch-actions.ts";
import { bulkReschedule, bulkSetState } from "./bulk.ts";
import type { BulkFilter } from "./bulk-filter.ts";
import { listDeadLetters, type DeadLetterQuery } from "./dead-letters.ts";
import { listInstanceAudit, newestChange, readChanges, type AuditEntry, type ChangeCursor } from "./instance-audit.ts";
import { listFailureGroups } from "./failure-groups.ts";
import { resumeFrom, retryInstance, type ResumeFrom } from "./rerun.ts";
import { pollInstanceLive, type OutputPosition } from "./live.ts";
import { getInstanceDetail, listInstancesPage, type InstancePageQuery } from "./instance-pages.ts";
import { readInstanceCounts } from "./instance-counts.ts";
import { countBackendInstancesByState, type InstanceState } from "./instances.ts";
import { instanceThroughput, listRecentFailures } from "./overview.ts";
import { advanceTenantPlacement, listPlacements, readControlPlaneVersion, type Placement } from "./placements.ts";
import { listRateLimitPolicies, removeRateLimitPolicy, setRateLimitPolicy, tryConsumeRateLimit } from "./rate-limits.ts";
import { TenantPartitionRouter } from "./router.ts";
import { enqueueSignalIfActive, type NewSignal } from "./signals.ts";
import {
  getSequence, insertSequence, listHandlerNames, listSequences, sequenceInputSchemas, sequenceOwner, type NewSequence,
} from "./sequences.ts";
import {
  deleteSequence, deprecateSequence, listLiveVersions, listSequencePage, migrateInstance, sequenceByName, setSequenceStatus,
} from "./sequence-versions.ts";
import { deleteSequenceDraft, getSequenceDraft, putSequenceDraft, type SequenceDraft } from "./sequence-drafts.ts";
import type { MetricRow } from "../metrics/tenant-metrics.ts";
import { readTenantMetrics } from "./metrics.ts";
import { listRetentionStatus, type RetentionStatus } from "./retention.ts";
import { MoveStore } from "./move-store.ts";
import { DeletionStore } from "./deletion-store.ts";
import { TenantDirectory } from "./directory-store.ts";
import { FairnessStore } from "./fairness-store.ts";
import { listTenantLimits, setTenantLimits, type TenantLimits } from "./tenant-limits.ts";
import { exportTenantRows, type ExportVisitor } from "./tenant-export.ts";
import {
  claimWebhookNonce, deleteTrigger, fireTrigger, forgetDeliveries, getTrigger, insertTrigger, listDeliveries, listTriggers, recordDelivery,
  triggerForFiring, type NewTrigger, type TriggerDelivery, type TriggerEvent, type TriggerRecord,
} from "./triggers.ts";
import { claimTriggerSlug, releaseTriggerSlug, triggerSlugOwner } from "./trigger-slugs.ts";
import { createSession, existingSessions, getSession, getSessionByKey, replaceSessionData, setSessionState, type SessionState } from "./sessions.ts";
import { listPolledHandlers, listRegisteredWorkers, listWorkers, registerWorker, type RegisteredWorker, type WorkerRegistration } from "./worker-registrations.ts";
import { listWaitingTreeSources, type WaitingQuery } from "./waiting-sources.ts";
import { listCheckpoints, pruneCheckpoints, saveCheckpoint } from "./checkpoints.ts";
import { appendTaskLogLines, listLogLines, type LogLine } from "./instance-logs.ts";
import {
  createCredential, deleteCredential, getCredential, listCredentials, resolveCredentials, updateCredential, type CredentialChange, type NewCredential,
} from "./credentials.ts";
import {
  addPoolResource, createPool, deletePool, deletePoolResource, getPool, listPoolResources, listPools, updatePoolResource,
  type NewPoolResource, type PoolResourceChange, type PoolStrategy,
} from "./pools.ts";
import {
  countCronSchedules, deleteCronSchedule, getCronSchedule, insertCronSchedule, latestCronRuns, listCronSchedules, updateCronSchedule,
  type CronSchedulePatch, type NewCronSchedule, type NextFire,
} from "./cron-schedules.ts";
import {
  claimedTaskCounts, claimedTaskCountsOfBackend, compareFleetRank, completeWorkerTask, failWorkerTask, heartbeatWorkerTask, listWorkerTaskAttempts, listWorkerTasks,
  pollFleetWorkerTasks, pollWorkerTasks, rankFleetWorkerTasks, workerTaskOwner, workerTaskStats,
  type ClaimedTaskCount, type FleetTask, type PollRequest, type WorkerLease, type WorkerTaskFilter,
} from "./worker-tasks.ts";

export { backendOn, backendOptions, StorageBackends, type Backend } from "./backends.ts";
export { BackendStore, refusedByDatabase } from "./backend-store.ts";
export { RunStore, type NewStepTask, type WorkerResult } from "./run-store.ts";
export type { ClaimedInstance, ClaimedWithRow } from "./claim.ts";
export type { ClaimedRow, FailureCause, OutputRow, Progress, RunFacts } from "./execution.ts";
export type { LivePoll, OutputPosition } from "./live.ts";
export type { ChildCreation, ChildOutcome } from "./children.ts";
export type { EventLimits } from "./events.ts";
export { asTenantId, type TenantId } from "./ids.ts";
export type { Placement } from "./placements.ts";
export type { TenantActivity } from "./directory-store.ts";
export type { BackendMinute, FleetRanking, PlacedTenant, SpanWindow, TenantMinuteLine, TenantSpans } from "./fairness-store.ts";
export { rebuildMetricRollups, SPAN_MINUTES, spanStartOf, type SpanMinutes } from "./metric-rollups.ts";
export { activityWindowFrom } from "./tenant-activity.ts";
export { spansOfMinutes } from "./rollup-reads.ts";
export type { DirectoryRow } from "./tenant-directory.ts";
export type { NewSequence, SequenceRecord, SequenceSummary } from "./sequences.ts";
export { ACTIVE_STATES, STATUS_TRANSITIONS, type DeleteOutcome, type MigrateOutcome, type StatusOutcome } from "./sequence-versions.ts";
export type { SequenceDraft } from "./sequence-drafts.ts";
export type { BlockOutputRecord, InstanceFilter, InstanceRecord, NewInstance } from "./instance-records.ts";
export { INSTANCE_STATES, type InstanceState } from "./instances.ts";
export type { Reservation, RateLimitPolicy } from "./rate-limits.ts";
export type { BudgetReservation, TenantBudget } from "./budgets.ts";
export type { BreakerBounds, BreakerReset, BreakerSettingsRow, OpenBreakerRow } from "./breakers.ts";
export type { RecentFailure, ThroughputBucket } from "./overview.ts";
export {
  DELIVERIES_KEPT, isTriggerSlug, TRIGGER_TYPES, type DeliverySource, type NewTrigger, type TriggerDelivery, type TriggerEvent,
  type TriggerRecord, type TriggerType,
} from "./triggers.ts";
export type { RegisteredWorker, WorkerInfo, WorkerRegistration } from "./worker-registrations.ts";
export type { WaitingKey, WaitingQuery, WaitingTreeSource } from "./waiting-sources.ts";
export type { Checkpoint } from "./checkpoints.ts";
export { LOG_LIMITS, LOG_LINE_LEVELS, type LogLevel, type StoredLogLine } from "./instance-logs.ts";
export {
  CREDENTIAL_ID, CREDENTIAL_KINDS, type CredentialChange, type CredentialKind, type CredentialRecord, type ExpiringCredential, type NewCredential,
  type OpenedCredential, type RefreshedCredential,
} from "./credentials.ts";
export {
  POOL_STRATEGIES, type NewPoolResource, type PoolRecord, type PoolResourceChange, type PoolResourceRecord, type PoolStrategy, type ResourceLookup,
} from "./pools.ts";
export { SESSION_STATES, type SessionRecord, type SessionState } from "./sessions.ts";
export {
  BUFFER_RETRY_MS, OVERLAP_POLICIES, cronScheduleNotFound, type CronClaimOptions, type CronFireResult, type CronSchedulePatch,
  type CronRun, type CronScheduleRecord, type NewCronSchedule, type NextFire, type OverlapPolicy,
} from "./cron-schedules.ts";
export {
  FLEET_CLAIMED_PER_TENANT, STALE_HEARTBEAT_MS, WORKER_TASK_STATES, type ClaimedTaskCount, type FleetTask, type HeartbeatOutcome, type PollRequest, type ReportOutcome, type WorkerLease, type WorkerTaskAttempt,
  type WorkerTaskFilter, type WorkerTaskRecord, type WorkerTaskState, type WorkerTaskStats,
} from "./worker-tasks.ts";
import { asTenantId, type TenantId } from "./ids.ts";
export {
  CHANGES_LIMIT, decodeChangeCursor, encodeChangeCursor, type AuditEntry, type ChangeCursor, type ChangesPage,
} from "./instance-audit.ts";
export { decodeSignalType, type NewSignal, type PendingSignal, type SignalType } from "./signals.ts";
export { canTransition, TRANSITIONS } from "./instance-state.ts";
export { BATCH_ACTION_LIMIT, BATCH_ACTIONS, clampBatchLimit, type BatchAction, type BatchActionName, type BatchActionResult } from "./batch-actions.ts";
export type { BulkFilter } from "./bulk-filter.ts";
export type { DeadLetterQuery } from "./dead-letters.ts";
export type { FailureGroup } from "./failure-groups.ts";
export type { ResumeFrom, ResumedFrom } from "./rerun.ts";
export { isTerminal } from "../model.ts";
export { INSTANCE_PAGE_MAX, type InstanceKey } from "./instance-pages.ts";
export { MOVE_PHASES, type MovePhase, type MoveRecord } from "./moves.ts";
export { DELETION_PHASES, type DeletionPhase, type DeletionRecord } from "./deletions.ts";
export type { MoveRows, MoveStore, NewMove } from "./move-store.ts";
export type { TableSummary } from "./tenant-rows.ts";
export { EXPORT_FILES, type ExportVisitor } from "./tenant-export.ts";
export type { TenantLimits } from "./tenant-limits.ts";
export type { RetentionStatus } from "./retention.ts";

/** One tenant's rows on the backend its placement names. */
export class TenantStore {
  /** Statements of this tenant, within its share of the backend's connections. */
  private readonly db: TenantConnections;

  constructor(
    readonly tenantId: TenantId,
    private readonly backend: Backend,
    /** The placement epoch this store was routed with. */
    readonly epoch: number,
    /** Routed while the tenant was quiesced for a move: see Storage.tenantForWrite. */
    readonly quiesced = false,
  ) {
    this.db = backend.forTenant(tenantId);
  }

  /** Which backend the placement named (the pool stays in here). */
  get backendId(): string {
    return this.backend.id;
  }

  /** By state, from the maintained counts (engine/storage/instance-counts.ts), not from the instances. */
  countInstancesByState() {
    return readInstanceCounts(this.db, this.tenantId);
  }

  insertSequence(sequence: NewSequence) {
    return insertSequence(this.db, this.tenantId, sequence);
  }

  listSequences() {
    return listSequences(this.db, this.tenantId);
  }

  listHandlerNames() {
    return listHandlerNames(this.db, this.tenantId);
  }

  getSequence(id: string) {
    return getSequence(this.db, this.tenantId, id);
  }

  /** The name's versions that are not deprecated, highest first (wire-format Q). */
  listLiveVersions(namespace: string, name: string) {
    return listLiveVersions(this.db, this.tenantId, namespace, name);
  }

  /** A page of every version, by namespace, name and version descending (GET /sequences). */
  listSequencePage(query: { namespace: string | null; limit: number; offset: number }) {
    return listSequencePage(this.db, this.tenantId, query);
  }

  /** That version, or without one the latest not deprecated. */
  sequenceByName(namespace: string, name: string, version: number | null) {
    return sequenceByName(this.db, this.tenantId, namespace, name, version);
  }

  deprecateSequence(id: string) {
    return deprecateSequence(this.db, this.tenantId, id);
  }

  /** Refused (unchanged, with the status it is in) when its status may not go there. */
  setSequenceStatus(id: string, status: string) {
    return setSequenceStatus(this.db, this.tenantId, id, status);
  }

  /** Rebinds a non-terminal instance to another of the tenant's versions. */
  migrateInstance(instanceId: string, targetSequenceId: string) {
    return migrateInstance(this.db, this.tenantId, instanceId, targetSequenceId);
  }

  /** Refused (not deleted, with the count) while active instances use the version. */
  deleteSequence(id: string) {
    return deleteSequence(this.db, this.tenantId, id);
  }

  getSequenceDraft(key: string) {
    return getSequenceDraft(this.db, this.tenantId, key);
  }

  putSequenceDraft(key: string, draft: SequenceDraft) {
    return putSequenceDraft(this.db, this.tenantId, key, draft);
  }

  deleteSequenceDraft(key: string) {
    return deleteSequenceDraft(this.db, this.tenantId, key);
  }

  /** The tenant's sequences among `ids`, by id, with their input_schema (null: none). */
  sequenceInputSchemas(ids: readonly string[]) {
    return sequenceInputSchemas(this.db, this.tenantId, ids);
  }

  createInstance(instance: NewInstance) {
    return createInstance(this.db, this.tenantId, instance);
  }

  /** All or nothing; returns how many were created (idempotency-key repeats are skipped). */
  createInstances(instances: readonly NewInstance[]) {
    return createInstances(this.db, this.tenantId, instances);
  }

  getInstance(id: string) {
    return getInstance(this.db, this.tenantId, id);
  }

  listInstances(filter: InstanceFilter) {
    return listInstances(this.db, this.tenantId, filter);
  }

  /** null when the tenant has no such instance. */
  listBlockOutputs(instanceId: string) {
    return listBlockOutputs(this.db, this.tenantId, instanceId);
  }

  // Checkpoints (wire-format P): null when the tenant has no such instance.
  saveCheckpoint(instanceId: string, data: unknown) {
    return saveCheckpoint(this.db, this.tenantId, instanceId, data);
  }

  /** GET /instances/{id}/logs: null when the tenant has no such instance. */
  listLogLines(instanceId: string) {
    return listLogLines(this.db, this.tenantId, instanceId);
  }

  appendTaskLogLines(taskId: string, lines: readonly Omit<LogLine, "blockId">[]) {
    return appendTaskLogLines(this.db, this.tenantId, taskId, lines);
  }

  listCheckpoints(instanceId: string, limit?: number) {
    return listCheckpoints(this.db, this.tenantId, instanceId, limit);
  }

  pruneCheckpoints(instanceId: string, keep: number) {
    return pruneCheckpoints(this.db, this.tenantId, instanceId, keep);
  }

  /** Sub-sequence children, oldest first; null when the tenant has no such parent. */
  listChildInstances(parentId: string) {
    return listChildInstances(this.db, this.tenantId, parentId);
  }

  /** A live stream's poll: the state and the outputs after `after`; null when the tenant has no such instance. */
  pollLive(instanceId: string, after: OutputPosition | null, limit: number) {
    return pollInstanceLive(this.db, this.tenantId, instanceId, after, limit);
  }

  /** P: the instance's audit entries, newest first; null when the tenant has no such instance. */
  async instanceAudit(instanceId: string): Promise<AuditEntry[] | null> {
    if (!(await this.getInstance(instanceId))) return null;
    return listInstanceAudit(this.db, this.tenantId, instanceId);
  }

  /** S: the tenant's change feed after `after`, oldest first. */
  readChanges(after: ChangeCursor | null, limit: number) {
    return readChanges(this.db, this.tenantId, after, limit);
  }

  /** The newest entry of the feed after `after`, or null. */
  newestChange(after: ChangeCursor | null) {
    return newestChange(this.db, this.tenantId, after);
  }

  // ---------------------------------------------------------------- export (issue 23)
  /** The tenant's export files' rows, from one snapshot of this backend; returns the snapshot's time. */
  exportRows(visit: ExportVisitor) {
    return exportTenantRows(this.db, this.tenantId, visit);
  }

  // ---------------------------------------------------------------- limits
  // Rate limits per key and the tenant's budget: the pre-flight reservations and their settings.

  tryConsumeRateLimit(key: string, now: Date) {
    return tryConsumeRateLimit(this.db, this.tenantId, key, now);
  }

  setRateLimitPolicy(key: string, maxCount: number, windowMs: number) {
    return setRateLimitPolicy(this.db, this.tenantId, key, maxCount, windowMs);
  }

  /** false when the key had no policy. */
  removeRateLimitPolicy(key: string) {
    return removeRateLimitPolicy(this.db, this.tenantId, key);
  }

  listRateLimitPolicies(now: Date) {
    return listRateLimitPolicies(this.db, this.tenantId, now);
  }

  tryConsumeBudget(now: Date) {
    return tryConsumeBudget(this.db, this.tenantId, now);
  }

  refundBudget(periodStart: Date) {
    return refundBudget(this.db, this.tenantId, periodStart);
  }

  setBudget(stepsPerPeriod: number, periodSecs: number, now: Date) {
    return setBudget(this.db, this.tenantId, stepsPerPeriod, periodSecs, now);
  }

  /** false when the tenant had no budget. */
  removeBudget() {
    return removeBudget(this.db, this.tenantId);
  }

  /** null when the tenant's budget is unlimited. */
  readBudget(now: Date) {
    return readBudget(this.db, this.tenantId, now);
  }
  // ---------------------------------------------------------------- end of limits

  // ---------------------------------------------------------------- signals and instance state
  // The signal queue (wire-format G) and the state changes the API makes (F.2, E.10-E.12, E.14).

  /** Queues a signal and wakes the instance; not found for a missing instance, 400 for a terminal one. */
  enqueueSignalIfActive(instanceId: string, signal: NewSignal) {
    return enqueueSignalIfActive(this.db, this.tenantId, instanceId, signal);
  }

  /** An F.2 transition (400 otherwise); leaving `running` fences out the lease holder. */
  patchInstanceState(instanceId: string, to: InstanceState, nextFireAt?: Date | null) {
    return patchInstanceState(this.db, this.tenantId, instanceId, to, nextFireAt);
  }

  /** Replaces the whole context (defaults already filled in by the caller). */
  replaceInstanceContext(instanceId: string, context: unknown) {
    return replaceInstanceContext(this.db, this.tenantId, instanceId, context);
  }

  // ---------------------------------------------------------------- end of signals and instance state

  // ---------------------------------------------------------------- dead letters and bulk operations
  // The DLQ, retry and resume-from (wire-format J), bulk state, reschedule and batch actions (K).
  // Work over many instances goes a batch at a time, each through the tenant's connection share.

  /** The tenant's failed instances, most recently updated first. */
  listDeadLetters(query: DeadLetterQuery) {
    return listDeadLetters(this.db, this.tenantId, query);
  }

  /** The tenant's failed instances grouped by failure fingerprint, the largest group first. */
  listFailureGroups(limit: number) {
    return listFailureGroups(this.db, this.tenantId, limit);
  }

  /** A `failed` instance re-runs from its first unfinished top-level block, due now (400 from any other state). */
  retryInstance(instanceId: string) {
    return retryInstance(this.db, this.tenantId, instanceId);
  }

  /** The block and every later top-level block re-run from scratch (400 while running, or for a block that is not top-level). */
  resumeFrom(instanceId: string, request: ResumeFrom) {
    return resumeFrom(this.db, this.tenantId, instanceId, request);
  }

  /** Each matching instance moved to `to` where F.2 allows it; how many moved. */
  bulkSetState(filter: BulkFilter, to: InstanceState) {
    return bulkSetState(this.db, this.tenantId, filter, to);
  }

  /** Matching scheduled instances due `offsetSecs` later (or earlier); how many moved. */
  bulkReschedule(filter: BulkFilter, offsetSecs: number) {
    return bulkReschedule(this.db, this.tenantId, filter, offsetSecs);
  }

  runBatchAction(action: BatchAction) {
    return runBatchAction(this.db, this.tenantId, action);
  }
  // ---------------------------------------------------------------- end of dead letters and bulk operations

  // ---------------------------------------------------------------- worker tasks
  // External workers (wire-format H): claim, report under a fenced lease, and read. The engine's
  // side (findTaskResult, cancelWorkerTasks, reapWorkerTasks) takes its pool directly.

  /** Claims up to `poll.limit` pending tasks for the handler (and queue), oldest first. */
  pollWorkerTasks(poll: PollRequest) {
    return pollWorkerTasks(this.db, this.tenantId, poll);
  }

  /** "stale" when the task is not claimed under this lease; the refusal is recorded. */
  completeWorkerTask(taskId: string, lease: WorkerLease, output: unknown) {
    return completeWorkerTask(this.db, this.tenantId, taskId, lease, output);
  }

  failWorkerTask(taskId: string, lease: WorkerLease, failure: { message: string; retryable: boolean }) {
    return failWorkerTask(this.db, this.tenantId, taskId, lease, failure);
  }

  heartbeatWorkerTask(taskId: string, lease: WorkerLease, checkpoint: { value: unknown; seq: number } | null) {
    return heartbeatWorkerTask(this.db, this.tenantId, taskId, lease, checkpoint);
  }

  listWorkerTasks(filter: WorkerTaskFilter) {
    return listWorkerTasks(this.db, this.tenantId, filter);
  }

  workerTaskStats() {
    return workerTaskStats(this.db, this.tenantId);
  }

  /** null when the tenant has no such task (and never had one that was cancelled). */
  listWorkerTaskAttempts(taskId: string) {
    return listWorkerTaskAttempts(this.db, this.tenantId, taskId);
  }
  // ---------------------------------------------------------------- end of worker tasks

  // ---------------------------------------------------------------- execution tree
  // GET /instances/{id}/tree (E.13) is a view of the cursor over the sequence's blocks.

  /**
   * The instance with its cursor and its sequence's definition, read in one statement so both
   * come from the same moment. null when the tenant has no such instance; `definition` is null
   * when the sequence is missing (the join is tenant-scoped, as the engine's own load is).
   */
  async getExecutionTreeSource(instanceId: string) {
    const { rows } = await this.db.query<{
      id: string; state: InstanceState; created_at: Date; updated_at: Date; cursor: unknown; definition: unknown;
    }>({
      name: "get_execution_tree_source",
      text: `SELECT i.id, i.state, i.created_at, i.updated_at, i.cursor, s.definition
               FROM task_instances i
               LEFT JOIN sequences s ON s.id = i.sequence_id AND s.tenant_id = i.tenant_id
              WHERE i.tenant_id = $1 AND i.id = $2`,
      values: [this.tenantId, instanceId],
    });
    const row = rows[0];
    if (!row) return null;
    return {
      instance: { id: row.id, state: row.state, createdAt: row.created_at, updatedAt: row.updated_at },
      cursor: row.cursor ?? null,
      definition: row.definition ?? null,
    };
  }

  /**
   * The tenant's `waiting` instances, most recently updated first, each with what
   * describeInstance reads (the approvals inbox, wire-format R); a page over instances.
   */
  listWaitingTreeSources(query: WaitingQuery) {
    return listWaitingTreeSources(this.db, this.tenantId, query);
  }
  // ---------------------------------------------------------------- end of execution tree

  // ---------------------------------------------------------------- instance pages
  // The web app's instance list (keyset pages) and detail page.

  /** Newest first, `query.limit` rows after `query.after`; `next` is the key of the following page. */
  listInstancesPage(query: InstancePageQuery) {
    return listInstancesPage(this.db, this.tenantId, query);
  }

  /** The instance, its sequence, outputs, signals and worker tasks from one snapshot; null when the tenant has no such instance. */
  getInstanceDetail(instanceId: string) {
    return getInstanceDetail(this.db, this.tenantId, instanceId);
  }
  // ---------------------------------------------------------------- end of instance pages

  // ---------------------------------------------------------------- overview
  // The web app's tenant overview: finished instances per minute over the last hour, latest failures.

  /** One-minute buckets of completed and failed instances, oldest first, the last holding `now`. */
  instanceThroughput(now: Date) {
    return instanceThroughput(this.db, this.tenantId, now);
  }

  /** The latest failed instances with their sequence names, newest failure first. */
  listRecentFailures(limit: number) {
    return listRecentFailures(this.db, this.tenantId, limit);
  }
  // ---------------------------------------------------------------- end of overview

  // ---------------------------------------------------------------- circuit breakers
  // Breaker state lives in each engine's memory; these rows are what the other processes can
  // see: the Open breakers, and the resets (audit trail and the feed engines follow).

  /** The tenant's Open breakers, by handler. A Closed breaker has no row. */
  listOpenBreakers() {
    return listOpenBreakers(this.db, this.tenantId);
  }

  /** Drops the Open row (if any) and records who reset it, on this tenant's backend, where its engines follow the feed. */
  resetBreaker(handler: string, resetBy: string) {
    return resetBreaker(this.db, this.tenantId, handler, resetBy);
  }

  /** The tenant's resets, newest first. */
  listBreakerResets(limit: number) {
    return listResets(this.db, this.tenantId, limit);
  }

  /** The tenant admins' per-handler settings; engines pick them up within their sync interval. */
  listBreakerSettings() {
    return listBreakerSettings(this.db, this.tenantId);
  }

  setBreakerSettings(handler: string, settings: { failureThreshold: number; cooldownSecs: number }, bounds: BreakerBounds) {
    return setBreakerSettings(this.db, { tenantId: this.tenantId, handler, ...settings }, bounds);
  }
  // ---------------------------------------------------------------- end of circuit breakers

  // ---------------------------------------------------------------- triggers and webhooks (wire-format L)
  listTriggers(limit: number) {
    return listTriggers(this.db, this.tenantId, limit);
  }

  getTrigger(slug: string) {
    return getTrigger(this.db, this.tenantId, slug);
  }

  triggerForFiring(slug: string) {
    return triggerForFiring(this.db, this.tenantId, slug);
  }

  /** Null when the tenant has a trigger by that slug already (the slug's claim is Storage's). */
  insertTrigger(trigger: NewTrigger) {
    return insertTrigger(this.db, this.tenantId, trigger);
  }

  async deleteTrigger(slug: string) {
    const removed = await deleteTrigger(this.db, this.tenantId, slug);
    if (removed) await forgetDeliveries(this.db, this.tenantId, slug);
    return removed;
  }

  fireTrigger(trigger: TriggerRecord, data: unknown, event: TriggerEvent) {
    return fireTrigger(this.db, this.tenantId, trigger, data, event);
  }

  claimWebhookNonce(slug: string, nonce: string, ttlSecs: number) {
    return claimWebhookNonce(this.db, this.tenantId, slug, nonce, ttlSecs);
  }

  recordDelivery(slug: string, delivery: Omit<TriggerDelivery, "id" | "receivedAt">) {
    return recordDelivery(this.db, this.tenantId, slug, delivery);
  }

  listDeliveries(slug: string, limit: number) {
    return listDeliveries(this.db, this.tenantId, slug, limit);
  }

  // ---------------------------------------------------------------- sessions (wire-format O)
  createSession(session: { sessionKey: string; data: unknown; expiresAt: Date | null }) {
    return createSession(this.db, this.tenantId, session);
  }

  getSession(id: string) {
    return getSession(this.db, this.tenantId, id);
  }

  getSessionByKey(key: string) {
    return getSessionByKey(this.db, this.tenantId, key);
  }

  existingSessions(ids: readonly string[]) {
    return existingSessions(this.db, this.tenantId, ids);
  }

  replaceSessionData(id: string, data: unknown) {
    return replaceSessionData(this.db, this.tenantId, id, data);
  }

  setSessionState(id: string, state: SessionState) {
    return setSessionState(this.db, this.tenantId, id, state);
  }

  listSessionInstances(sessionId: string) {
    return listSessionInstances(this.db, this.tenantId, sessionId);
  }

  // ---------------------------------------------------------------- worker registrations (wire-format T)
  registerWorker(registration: WorkerRegistration) {
    return registerWorker(this.db, this.tenantId, registration);
  }

  listWorkers(seenSince: Date | null, page: { offset: number; limit: number } | null = null) {
    return listWorkers(this.db, this.tenantId, seenSince, page);
  }

  /** Claimed tasks per worker, and how many have had no heartbeat since `staleBefore`. */
  claimedTaskCounts(staleBefore: Date) {
    return claimedTaskCounts(this.db, this.tenantId, staleBefore);
  }

  listPolledHandlers() {
    return listPolledHandlers(this.db, this.tenantId);
  }

  // ---------------------------------------------------------------- credentials (wire-format N)
  listCredentials(limit: number) {
    return listCredentials(this.db, this.tenantId, limit);
  }

  getCredential(id: string) {
    return getCredential(this.db, this.tenantId, id);
  }

  createCredential(credential: NewCredential) {
    return createCredential(this.db, this.tenantId, credential);
  }

  updateCredential(id: string, change: CredentialChange) {
    return updateCredential(this.db, this.tenantId, id, change);
  }

  deleteCredential(id: string) {
    return deleteCredential(this.db, this.tenantId, id);
  }

  /** Opened values, for the worker that holds a task's claim (its poll answer) and nobody else. */
  resolveCredentials(ids: readonly string[]) {
    return resolveCredentials(this.db, this.tenantId, ids);
  }

  // ---------------------------------------------------------------- resource pools (wire-format U)
  createPool(pool: { name: string; strategy: PoolStrategy }) {
    return createPool(this.db, this.tenantId, pool);
  }

  listPools() {
    return listPools(this.db, this.tenantId);
  }

  getPool(id: string) {
    return getPool(this.db, this.tenantId, id);
  }

  /** The pool's resources go with it; false when the tenant has no such pool. */
  deletePool(id: string) {
    return deletePool(this.db, this.tenantId, id);
  }

  /** null when the tenant has no such pool. */
  listPoolResources(poolId: string) {
    return listPoolResources(this.db, this.tenantId, poolId);
  }

  /** null when the tenant has no such pool. */
  addPoolResource(poolId: string, resource: NewPoolResource) {
    return addPoolResource(this.db, this.tenantId, poolId, resource);
  }

  updatePoolResource(poolId: string, id: string, change: PoolResourceChange) {
    return updatePoolResource(this.db, this.tenantId, poolId, id, change);
  }

  deletePoolResource(poolId: string, id: string) {
    return deletePoolResource(this.db, this.tenantId, poolId, id);
  }

  // ---------------------------------------------------------------- cron schedules (wire-format M)
  countCronSchedules() {
    return countCronSchedules(this.db, this.tenantId);
  }

  /** 404 `sequence <id>` unless the sequence is the tenant's; 409 at `limit` schedules. */
  insertCronSchedule(schedule: NewCronSchedule, limit: number) {
    return insertCronSchedule(this.db, this.tenantId, schedule, limit);
  }

  /** Oldest first; with `sequenceId`, that sequence's only. */
  listCronSchedules(query: { limit: number; sequenceId?: string | null }) {
    return listCronSchedules(this.db, this.tenantId, query);
  }

  getCronSchedule(id: string) {
    return getCronSchedule(this.db, this.tenantId, id);
  }

  /** The latest `perSchedule` runs of each of these schedules, newest first. */
  latestCronRuns(ids: readonly string[], perSchedule: number) {
    return latestCronRuns(this.db, this.tenantId, ids, perSchedule);
  }

  /** next_fire_at recomputed from `now`; null when the tenant has no such schedule. */
  updateCronSchedule(id: string, patch: CronSchedulePatch, nextFire: NextFire, now: Date) {
    return updateCronSchedule(this.db, this.tenantId, id, patch, nextFire, now);
  }

  deleteCronSchedule(id: string) {
    return deleteCronSchedule(this.db, this.tenantId, id);
  }
}

/** What a write to a tenant being moved is told; REST adds Retry-After. */
export const tenantMoving = () => new AppError("unavailable", "the tenant is being moved to another backend; retry shortly");

const OWNER_LOOKUPS = { instance: instanceOwner, sequence: sequenceOwner, worker_task: workerTaskOwner } as const;

export class Storage {
  readonly router: TenantPartitionRouter;
  /** Tenant moves (engine/moves): their records, the placement, the lock, the rows on both backends. */
  readonly moves: MoveStore;
  /** Tenant deletions (engine/lifecycle): their records and the tenant's rows on every backend. */
  readonly deletions: DeletionStore;
  /** The operator console's tenants table: tenants a keyset page at a time, and their figures. */
  readonly directory: TenantDirectory;
  /** The fairness page's reads of the tenant_metrics rollups. */
  readonly fairness: FairnessStore;
  /** listPlacements' copy, with the control plane's version it was read at. */
  private placements: { version: string; rows: Promise<Placement[]> } | null = null;

  constructor(readonly backends: StorageBackends) {
    this.router = new TenantPartitionRouter(backends);
    this.moves = new MoveStore(backends);
    this.deletions = new DeletionStore(backends);
    this.directory = new TenantDirectory(backends);
    this.fairness = new FairnessStore(backends, () => this.listPlacements());
  }

  /** A fleet poll's registration (an operator key acting for no tenant), kept on the primary. */
  registerFleetWorker(registration: WorkerRegistration) {
    return registerWorker(this.backends.primary.pool, "", registration);
  }

  /** Takes a trigger slug for the tenant across all tenants (primary): false when another tenant has it. */
  claimTriggerSlug(tenantId: string, slug: string) {
    return claimTriggerSlug(this.backends.primary.pool, tenantId, slug);
  }

  releaseTriggerSlug(tenantId: string, slug: string) {
    return releaseTriggerSlug(this.backends.primary.pool, tenantId, slug);
  }

  /** The store of the tenant owning a trigger slug (the public webhook route knows nothing else), or null. */
  async triggerOwner(slug: string): Promise<TenantStore | null> {
    const tenantId = await triggerSlugOwner(this.backends.primary.pool, slug);
    if (tenantId === null) return null;
    return this.tenantForWrite(tenantId).catch((error: unknown) => {
      if (isAppError(error, "not_found")) return null; // unplaced
      throw error;
    });
  }

  /** The tenant's store: the router's placement is the door a raw id becomes a TenantId through. */
  async tenant(tenantId: string): Promise<TenantStore> {
    const { backend, epoch, quiesced } = await this.router.route(tenantId);
    return new TenantStore(asTenantId(tenantId), backend, epoch, quiesced);
  }

  /**
   * The store for a request that writes: refused with Unavailable while the tenant is quiesced
   * for a move, so nothing lands on the old backend after its rows were copied.
   */
  async tenantForWrite(tenantId: string): Promise<TenantStore> {
    const store = await this.tenant(tenantId);
    if (store.quiesced) throw tenantMoving();
    return store;
  }

  advanceTenantPlacement(tenantId: string, backendId: string, epoch: number): Promise<Placement> {
    // Only to a backend this process can serve: an unknown id is a typo, not a plan.
    if (!this.backends.has(backendId)) {
      return Promise.reject(new AppError("invalid_argument", `backend "${backendId.slice(0, 128)}" is not registered`, ["backend_id"]));
    }
    return advanceTenantPlacement(this.backends.primary.pool, tenantId, backendId, epoch);
  }

  /**
   * For operator reads by id that name no tenant: the store of the tenant owning `id`, or null.
   * A row counts only on the backend its tenant is currently placed on (asked of the router), so
   * a stale copy left on a backend the tenant moved away from is never served.
   */
  async locate(kind: keyof typeof OWNER_LOOKUPS, id: string): Promise<TenantStore | null> {
    for (const backendId of this.backends.ids()) {
      const backend = this.backends.get(backendId);
      const tenantId = await OWNER_LOOKUPS[kind](backend.pool, id);
      if (tenantId === null) continue;
      const route = await this.router.route(tenantId).catch((error: unknown) => {
        if (error instanceof AppError) return null; // unplaced, or placed on a backend we do not serve
        throw error;
      });
      if (route?.backend.id === backendId) return new TenantStore(asTenantId(tenantId), route.backend, route.epoch, route.quiesced);
    }
    return null;
  }

  /**
   * Rows `read` from each backend (all registered, or `backendIds`), kept only on the backend
   * their tenant is placed on now: copies a move left behind, or rows of an unplaced tenant, never
   * count. For the operator's views across every tenant.
   */
  private async rowsWherePlaced<T extends { tenantId: string }>(read: (pool: Backend["pool"]) => Promise<T[]>, backendIds = this.backends.ids()): Promise<T[]> {
    const placedOn = new Map((await this.listPlacements()).map((p) => [p.tenantId, p.backendId]));
    const perBackend = await Promise.all(
      backendIds.map(async (backendId) => (await read(this.backends.get(backendId).pool)).filter((row) => placedOn.get(row.tenantId) === backendId)),
    );
    return perBackend.flat();
  }

  /**
   * Every tenant's Open breakers and (with `resets` > 0) its latest resets, newest first, for the
   * operator's all-tenants view; read from `backends` only when given (every registered one by default).
   */
  async breakersOfEveryTenant(options: { resets?: number; backends?: string[] } = {}): Promise<{ open: OpenBreakerRow[]; resets: BreakerReset[] }> {
    const resetLimit = options.resets ?? 0;
    const [open, resets] = await Promise.all([
      this.rowsWherePlaced(listOpenBreakers, options.backends),
      resetLimit > 0 ? this.rowsWherePlaced((pool) => listResets(pool, null, resetLimit), options.backends) : Promise.resolve([]),
    ]);
    open.sort((a, b) => (a.tenantId === b.tenantId ? (a.handler < b.handler ? -1 : 1) : a.tenantId < b.tenantId ? -1 : 1));
    resets.sort((a, b) => b.resetAt.getTime() - a.resetAt.getTime() || b.id - a.id);
    return { open, resets: resets.slice(0, resetLimit) };
  }

  /**
   * The fleet view (operator console): the `limit` most recently seen workers, the fleet's (tenant
   * '', on the primary) and each tenant's (only from the backend the tenant is placed on now), with
   * their claimed tasks and how many of those have had no heartbeat since `staleBefore`. A fleet
   * worker's claims are its tasks of every tenant: a task does not record which poll claimed it,
   * so a worker that also polls under a tenant's key shows that tenant's claims in both rows.
   */
  async workersOfEveryTenant(options: { limit: number; staleBefore: Date }): Promise<(RegisteredWorker & { claimed: number; stale: number })[]> {
    const { limit, staleBefore } = options;
    const [tenants, fleet] = await Promise.all([
      this.rowsWherePlaced((pool) => listRegisteredWorkers(pool, { fleet: false, limit })),
      listRegisteredWorkers(this.backends.primary.pool, { fleet: true, limit }),
    ]);
    const workers = [...tenants, ...fleet]
      .sort((a, b) => b.lastSeenAt.getTime() - a.lastSeenAt.getTime() || (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : a.workerId < b.workerId ? -1 : 1))
      .slice(0, limit);
    const claims = await this.rowsWherePlaced((pool) => claimedTaskCountsOfBackend(pool, [...new Set(workers.map((w) => w.workerId))], staleBefore));
    const byWorker = new Map<string, ClaimedTaskCount[]>();
    for (const claim of claims) byWorker.set(claim.workerId, [...(byWorker.get(claim.workerId) ?? []), claim]);
    return workers.map((worker) => {
      const mine = (byWorker.get(worker.workerId) ?? []).filter((c) => worker.tenantId === "" || c.tenantId === worker.tenantId);
      return { ...worker, claimed: mine.reduce((n, c) => n + c.claimed, 0), stale: mine.reduce((n, c) => n + c.stale, 0) };
    });
  }

  /**
   * What the retention pruner last found per tenant (rows pending, pruned so far), the most
   * pending first, at most `limit`; each tenant's from the backend it is placed on now.
   */
  async retentionOfEveryTenant(limit: number): Promise<RetentionStatus[]> {
    const rows = await this.rowsWherePlaced((pool) => listRetentionStatus(pool, limit));
    const lastPruned = (r: RetentionStatus) => r.lastPrunedAt?.getTime() ?? 0;
    return rows.sort((a, b) => b.pending - a.pending || lastPruned(b) - lastPruned(a) || (a.tenantId < b.tenantId ? -1 : 1)).slice(0, limit);
  }

  /**
   * Every tenant's metric minutes in [from, to), oldest first (after a move, the new backend's copy
   * is its history); read from `backendIds` only when given (every registered one by default).
   */
  async metricsOfEveryTenant(from: Date, to: Date, backendIds?: string[]): Promise<MetricRow[]> {
    const rows = await this.rowsWherePlaced((pool) => readTenantMetrics(pool, from, to), backendIds);
    return rows.sort((a, b) => a.minute.getTime() - b.minute.getTime() || (a.tenantId < b.tenantId ? -1 : 1));
  }

  /**
   * The operator's fleet poll (wire-format T): claims up to `poll.limit` pending tasks of the
   * handler (and queue) across every tenant, round robin (each tenant's oldest, then each one's
   * next, …; tenants by their oldest candidate), a tenant holding `claimedCap` claimed tasks of
   * the handler getting none. A tenant's tasks count only on the backend it is placed on now,
   * and not at all while it is quiesced for a move. With tenants on several backends, each
   * backend's candidates are ranked first (nothing locked) and merged in the same order, so
   * each backend then claims exactly its share of the round robin. A backend that fails is left
   * out and named in `failed` (its tenants get nothing this time), so one backend down does not
   * stop the fleet serving the others; the poll throws only when every backend failed.
   */
  async pollWorkerTasksOfEveryTenant(
    poll: PollRequest,
    options: { claimedCap?: number } = {},
  ): Promise<{ tasks: FleetTask[]; failed: { backendId: string; error: unknown }[] }> {
    if (poll.limit <= 0) return { tasks: [], failed: [] };
    const tenantsOn = new Map<string, string[]>();
    for (const placement of await this.listPlacements()) {
      if (placement.quiescedAt !== null || !this.backends.has(placement.backendId)) continue;
      let tenants = tenantsOn.get(placement.backendId);
      if (!tenants) tenantsOn.set(placement.backendId, (tenants = []));
      tenants.push(placement.tenantId);
    }
    const request = (backendId: string, limit: number) => ({ ...poll, limit, tenants: tenantsOn.get(backendId)!, claimedCap: options.claimedCap });
    const failed: { backendId: string; error: unknown }[] = [];
    /** Runs `work` on every backend in `ids`; the answers of those that did not fail, the failures kept. */
    const onEach = async <T>(ids: string[], work: (id: string) => Promise<T[]>): Promise<T[]> => {
      const settled = await Promise.allSettled(ids.map(work));
      return settled.flatMap((result, index) => {
        if (result.status === "fulfilled") return result.value;
        failed.push({ backendId: ids[index]!, error: result.reason });
        return [];
      });
    };

    let shares = new Map([...tenantsOn.keys()].map((id) => [id, poll.limit]));
    if (shares.size > 1) {
      const ranks = await onEach([...shares.keys()], async (id) =>
        (await rankFleetWorkerTasks(this.backends.get(id).pool, request(id, poll.limit))).map((rank) => ({ ...rank, backendId: id })),
      );
      shares = new Map();
      for (const rank of ranks.sort(compareFleetRank).slice(0, poll.limit)) shares.set(rank.backendId, (shares.get(rank.backendId) ?? 0) + 1);
    }
    const tasks = await onEach([...shares.keys()], (id) => pollFleetWorkerTasks(this.backends.get(id).pool, request(id, shares.get(id)!)));
    if (failed.length > 0 && new Set(failed.map((f) => f.backendId)).size === tenantsOn.size) throw failed[0]!.error;
    return { tasks: tasks.sort(compareFleetRank), failed };
  }

  /** Each registered backend: whether it answers within `timeoutMs`, and how fast (null: it did not). */
  async backendHealth(timeoutMs: number): Promise<{ id: string; latencyMs: number | null }[]> {
    return Promise.all(
      this.backends.ids().map(async (id) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
        });
        const started = performance.now();
        try {
          await Promise.race([this.backends.get(id).pool.query("SELECT 1"), timeout]);
          return { id, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
        } catch {
          return { id, latencyMs: null };
        } finally {
          clearTimeout(timer);
        }
      }),
    );
  }

  /** The ids of registered backends that do not answer within `timeoutMs` (readiness). */
  async unreachableBackends(timeoutMs: number): Promise<string[]> {
    return (await this.backendHealth(timeoutMs)).filter((b) => b.latencyMs === null).map((b) => b.id);
  }

  /** See readControlPlaneVersion: a copy of the placements or limits read after it is at least this new. */
  controlPlaneVersion(): Promise<string> {
    return readControlPlaneVersion(this.backends.primary.pool);
  }

  /**
   * Every tenant's placement: a copy kept with the control plane's version it was read at, read
   * again only when the version moved (one row read, not 10,000).
   */
  async listPlacements(): Promise<Placement[]> {
    const version = await this.controlPlaneVersion();
    if (this.placements?.version !== version) {
      const copy = { version, rows: listPlacements(this.backends.primary.pool) };
      this.placements = copy;
      copy.rows.catch(() => this.placements === copy && (this.placements = null));
    }
    return [...(await this.placements.rows)];
  }

  /** Instances stored on the backend, by state: the rows physically there, whatever their tenant's placement. */
  countInstancesByStateOn(backendId: string): Promise<Record<InstanceState, number>> {
    return countBackendInstancesByState(this.backends.get(backendId).pool);
  }

  /**
   * The tenant's own claim cap and in-flight limit (control plane, on the primary; engines read
   * them with the placements). Both null removes the override. NotFound for a tenant that does not exist.
   */
  setTenantLimits(tenantId: string, limits: Partial<TenantLimits>): Promise<TenantLimits> {
    return setTenantLimits(this.backends.primary.pool, tenantId, limits);
  }

  /** Every tenant's own limits, by tenant id (engines copy them with the placements). */
  listTenantLimits(): Promise<Map<string, TenantLimits>> {
    return listTenantLimits(this.backends.primary.pool);
  }

  close(): Promise<void> {
    return this.backends.close();
  }
}
