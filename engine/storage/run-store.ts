// What one claimed instance may read and write while an engine runs it: every statement is bound
// to the instance's tenant, and the writes to its lease epoch. The coordination handlers reach
// other instances only through this store, so another tenant's instance is simply not there.
import { appendLogLines, type LogLine } from "./instance-logs.ts";
import type { Backend } from "./backends.ts";
import type { TenantConnections } from "./connection-shares.ts";
import { resolveCredentials } from "./credentials.ts";
import { refundBudget, tryConsumeBudget } from "./budgets.ts";
import { childOutcome, createChildInstance, findSubSequence, type ChildCreation, type ChildOutcome } from "./children.ts";
import type { ClaimedInstance } from "./claim.ts";
import { emitEvent, type EmitEvent, type EmitResult } from "./events.ts";
import { insertWorkerTask, loadLatestOutputs, type NewWorkerTask } from "./execution.ts";
import type { TenantId } from "./ids.ts";
import { getInstance, type InstanceRecord } from "./instance-records.ts";
import { tryConsumeRateLimit } from "./rate-limits.ts";
import { enqueueSignalIfActive, pendingSignals, type NewSignal, type PendingSignal } from "./signals.ts";
import { cancelWorkerTasks, findTaskResult } from "./worker-tasks.ts";

export type WorkerResult =
  | { state: "pending" | "claimed" }
  | { state: "completed"; output: unknown; workerId: string | null }
  | { state: "failed"; message: string; retryable: boolean; workerId: string | null };

/** A step's worker task; the run adds its instance, tenant and lease. */
export type NewStepTask = Omit<NewWorkerTask, "instanceId" | "tenantId" | "leaseEpoch">;

export class RunStore {
  readonly tenantId: TenantId;
  readonly instanceId: string;
  private readonly leaseEpoch: number;

  /** Statements of this tenant, within its share of the backend's connections. */
  private readonly db: TenantConnections;

  constructor(backend: Backend, claim: ClaimedInstance) {
    this.db = backend.forTenant(claim.tenantId);
    this.tenantId = claim.tenantId;
    this.instanceId = claim.id;
    this.leaseEpoch = claim.leaseEpoch;
  }

  private get fence() {
    return { instanceId: this.instanceId, tenantId: this.tenantId, leaseEpoch: this.leaseEpoch };
  }

  /** The tenant's credentials of these ids, opened for a step's params (wire-format N). */
  resolveCredentials(ids: readonly string[]) {
    return resolveCredentials(this.db, this.tenantId, ids);
  }

  /** The latest output of each block (the scope of templates and conditions). */
  latestOutputs(): Promise<Record<string, unknown>> {
    return loadLatestOutputs(this.db, this.tenantId, this.instanceId);
  }

  /** The queued signals in arrival order, but those in `applied`; empty once the lease is lost. */
  pendingSignals(applied: readonly string[]): Promise<PendingSignal[]> {
    return pendingSignals(this.db, this.tenantId, this.instanceId, this.leaseEpoch, applied);
  }

  // ---------------------------------------------------------------- pre-flight reservations

  tryConsumeBudget(now: Date) {
    return tryConsumeBudget(this.db, this.tenantId, now);
  }

  refundBudget(periodStart: Date) {
    return refundBudget(this.db, this.tenantId, periodStart);
  }

  tryConsumeRateLimit(key: string, now: Date) {
    return tryConsumeRateLimit(this.db, this.tenantId, key, now);
  }

  // ---------------------------------------------------------------- worker tasks

  /** The task's id, or null when the lease was lost. */
  insertWorkerTask(task: NewStepTask): Promise<string | null> {
    return insertWorkerTask(this.db, { ...this.fence, ...task });
  }

  /** How the worker task stands, or null when it is gone. */
  async workerResult(taskId: string): Promise<WorkerResult | null> {
    const task = await findTaskResult(this.db, this.tenantId, taskId);
    if (!task) return null;
    if (task.state === "completed") return { state: "completed", output: task.output, workerId: task.workerId };
    if (task.state === "failed") {
      return { state: "failed", message: task.errorMessage ?? "worker task failed", retryable: task.errorRetryable ?? false, workerId: task.workerId };
    }
    return { state: task.state };
  }

  /** Deletes the open worker tasks of abandoned blocks (race losers, loop resets, cancellation). */
  async cancelWorkerTasks(blockIds: readonly string[]): Promise<void> {
    await cancelWorkerTasks(this.db, this.tenantId, this.instanceId, blockIds);
  }

  // ---------------------------------------------------------------- sub_sequence children

  findSubSequence(name: string, version: number | undefined) {
    return findSubSequence(this.db, this.tenantId, this.instanceId, name, version);
  }

  createChild(child: { sequenceId: string; blockId: string; input: unknown }): Promise<ChildCreation> {
    return createChildInstance(this.db, this.fence, child);
  }

  /** How the child ended, or null while it runs. */
  childOutcome(childId: string): Promise<ChildOutcome | null> {
    return childOutcome(this.db, this.tenantId, this.instanceId, childId);
  }

  // ---------------------------------------------------------------- other instances of the tenant

  /** An instance of this tenant, or null (a missing and a foreign id alike). */
  getInstance(id: string): Promise<InstanceRecord | null> {
    return getInstance(this.db, this.tenantId, id);
  }

  /** Queues a signal for an instance of this tenant that is not terminal (not_found / invalid_argument otherwise). */
  signalInstance(id: string, signal: NewSignal): Promise<{ id: string }> {
    return enqueueSignalIfActive(this.db, this.tenantId, id, signal);
  }

  /** A line of this instance's log (GET /instances/{id}/logs), while it has room for one. */
  async appendLog(line: LogLine): Promise<void> {
    await appendLogLines(this.db, this.tenantId, this.instanceId, [line]);
  }

  /** A child instance of this one, in this tenant and namespace (emit_event). */
  emitEvent(event: Omit<EmitEvent, "tenantId" | "parentId">): Promise<EmitResult> {
    return emitEvent(this.db, { ...event, tenantId: this.tenantId, parentId: this.instanceId });
  }
}
