// Storage records as the wire shapes of wire-format E: snake_case, RFC 3339 UTC timestamps,
// PascalCase priority, optional fields omitted when unset.
import type { BlockOutputRecord, InstanceRecord, SequenceRecord } from "../../engine/storage/index.ts";
import type { WorkerTaskAttempt, WorkerTaskRecord } from "../../engine/storage/index.ts";
import { contextForWire } from "./context.ts";

/** Indexed by the stored smallint (the claim index orders by it). */
export const PRIORITIES = ["Low", "Normal", "High", "Critical"] as const;
export type Priority = (typeof PRIORITIES)[number];

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** `{key: value}` when value is set, else nothing: for spreading optional fields. */
const ifSet = <K extends string, V>(key: K, value: V | null | undefined) =>
  (value === null || value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;

export function wireInstance(instance: InstanceRecord) {
  return {
    id: instance.id,
    sequence_id: instance.sequenceId,
    tenant_id: instance.tenantId,
    namespace: instance.namespace,
    state: instance.state,
    next_fire_at: iso(instance.nextFireAt),
    priority: PRIORITIES[instance.priority] ?? "Normal",
    timezone: instance.timezone,
    metadata: instance.metadata ?? null,
    context: contextForWire(instance.context),
    created_at: iso(instance.createdAt),
    updated_at: iso(instance.updatedAt),
    ...ifSet("concurrency_key", instance.concurrencyKey),
    ...ifSet("max_concurrency", instance.maxConcurrency),
    ...ifSet("idempotency_key", instance.idempotencyKey),
    ...ifSet("session_id", instance.sessionId),
    ...ifSet("parent_instance_id", instance.parentInstanceId),
    ...ifSet("budget", instance.budget),
  };
}

export function wireBlockOutput(output: BlockOutputRecord) {
  return {
    id: output.id,
    instance_id: output.instanceId,
    block_id: output.blockId,
    output: output.output,
    output_ref: output.outputRef,
    output_size: output.outputSize,
    attempt: output.attempt,
    created_at: iso(output.createdAt),
  };
}

/**
 * The stored definition (A.1, canonical form) with the row's own columns laid over it, so the
 * answer is right even for a definition stored before it was normalised (e.g. seeded demo data).
 */
export function wireSequence(tenantId: string, sequence: SequenceRecord) {
  const definition = typeof sequence.definition === "object" && sequence.definition !== null ? sequence.definition : {};
  return {
    ...definition,
    id: sequence.id,
    tenant_id: tenantId,
    namespace: sequence.namespace,
    name: sequence.name,
    version: sequence.version,
    deprecated: sequence.deprecated,
    status: sequence.status,
    created_at: iso(sequence.createdAt),
  };
}

/** `<WorkerTask>` (wire-format E): queue_name and resume_checkpoint are omitted when unset. */
export function wireWorkerTask(task: WorkerTaskRecord) {
  return {
    id: task.id,
    instance_id: task.instanceId,
    block_id: task.blockId,
    handler_name: task.handlerName,
    ...ifSet("queue_name", task.queueName),
    params: task.params ?? null,
    context: task.context ?? null,
    attempt: task.attempt,
    timeout_ms: task.timeoutMs,
    state: task.state,
    worker_id: task.workerId,
    claimed_at: iso(task.claimedAt),
    heartbeat_at: iso(task.heartbeatAt),
    claim_epoch: task.claimEpoch,
    ...ifSet("resume_checkpoint", task.resumeCheckpoint),
    checkpoint_seq: task.checkpointSeq,
    completed_at: iso(task.completedAt),
    output: task.output ?? null,
    error_message: task.errorMessage,
    error_retryable: task.errorRetryable,
    created_at: iso(task.createdAt),
  };
}

/** A task of the operator's fleet poll (wire-format T): `<WorkerTask>` plus the additive `tenant_id`. */
export function wireFleetTask(task: WorkerTaskRecord & { tenantId: string }) {
  return { ...wireWorkerTask(task), tenant_id: task.tenantId };
}

/** An entry of `GET /workers/tasks/{id}/attempts`; worker_id and reason are omitted when unset. */
export function wireWorkerTaskAttempt(attempt: WorkerTaskAttempt) {
  return {
    id: attempt.id,
    task_id: attempt.taskId,
    claim_epoch: attempt.claimEpoch,
    ...ifSet("worker_id", attempt.workerId),
    event: attempt.event,
    ...ifSet("reason", attempt.reason),
    created_at: iso(attempt.createdAt),
  };
}
