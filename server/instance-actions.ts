// The instance actions an operator of a tenant's work takes in bulk or on a dead letter, shared
// by REST (wire-format J, K) and the web app (tRPC): the write on the tenant's backend, then its
// line in the audit log naming what it acted on and how many instances it changed.
import type {
  BatchAction, BatchActionResult, BulkFilter, InstanceState, ResumeFrom, ResumedFrom, TenantStore,
} from "../engine/storage/index.ts";
import { recordAudit, type AuditEntry } from "./control/audit.ts";
import type { Prisma } from "./db/prisma.ts";

/** Who acted, as the audit log names them. */
export type Actor = Pick<AuditEntry, "actor" | "actorUserId">;

/** The filter as the audit log shows it: the wire names, only the fields given. */
export function filterForAudit(filter: BulkFilter) {
  return {
    ...(filter.namespace !== undefined ? { namespace: filter.namespace } : {}),
    ...(filter.sequenceId !== undefined ? { sequence_id: filter.sequenceId } : {}),
    ...(filter.states?.length ? { states: [...filter.states] } : {}),
    ...(filter.metadata && Object.keys(filter.metadata).length > 0 ? { metadata: { ...filter.metadata } } : {}),
  };
}

export async function retryInstance(prisma: Prisma, store: TenantStore, by: Actor, instanceId: string) {
  const retried = await store.retryInstance(instanceId);
  await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "instance.retry", details: { instance_id: instanceId, count: 1 } });
  return retried;
}

export async function resumeFrom(prisma: Prisma, store: TenantStore, by: Actor, instanceId: string, request: ResumeFrom): Promise<ResumedFrom> {
  const resumed = await store.resumeFrom(instanceId, request);
  await recordAudit(prisma, {
    ...by,
    tenantId: store.tenantId,
    action: "instance.resume_from",
    details: {
      instance_id: instanceId, block_id: request.blockId, count: 1,
      outputs_deleted: resumed.outputsDeleted, signals_enqueued: resumed.signalsEnqueued,
    },
  });
  return resumed;
}

export async function bulkSetState(prisma: Prisma, store: TenantStore, by: Actor, filter: BulkFilter, state: InstanceState): Promise<number> {
  const count = await store.bulkSetState(filter, state);
  await recordAudit(prisma, { ...by, tenantId: store.tenantId, action: "instances.bulk_state", details: { filter: filterForAudit(filter), state, count } });
  return count;
}

export async function bulkReschedule(prisma: Prisma, store: TenantStore, by: Actor, filter: BulkFilter, offsetSecs: number): Promise<number> {
  const count = await store.bulkReschedule(filter, offsetSecs);
  await recordAudit(prisma, {
    ...by, tenantId: store.tenantId, action: "instances.bulk_reschedule", details: { filter: filterForAudit(filter), offset_secs: offsetSecs, count },
  });
  return count;
}

/** A dry run changes nothing and records nothing. */
export async function batchAction(prisma: Prisma, store: TenantStore, by: Actor, action: BatchAction): Promise<BatchActionResult> {
  const result = await store.runBatchAction(action);
  if (!action.dryRun) {
    await recordAudit(prisma, {
      ...by,
      tenantId: store.tenantId,
      action: "instances.batch_action",
      details: {
        filter: filterForAudit(action.filter), action: action.action, ...(action.signalName !== undefined ? { signal_type: action.signalName } : {}),
        limit: action.limit, count: result.applied, matched: result.matched, skipped: result.skipped, failed: result.failed,
      },
    });
  }
  return result;
}

/** The largest shift bulk/reschedule takes, either way (a year, in seconds). */
export const RESCHEDULE_MAX_SECS = 31_536_000;
