// Instance state changes made through the API (wire-format F.2, E.10, E.11): the legal
// transitions as data, PATCH state and PATCH context (retry: rerun.ts). Every statement is scoped by
// tenant_id; a foreign instance is simply not found.
import { AppError, notFound } from "../errors.ts";
import { isTerminal, type InstanceState } from "../model.ts";
import { QUIET_TRANSITIONS } from "./instance-audit.ts";
import { rejectUnstorableText } from "./instance-records.ts";
import { lockInstance } from "./instances.ts";
import { consumeLateSignals } from "./signals.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";
import { wakeIfWaiting } from "./wakeups.ts";
import type { TenantId } from "./ids.ts";

/** F.2: from → the states it may go to. Also the validation table of PATCH state. */
export const TRANSITIONS: Readonly<Record<InstanceState, readonly InstanceState[]>> = {
  scheduled: ["running", "paused", "cancelled"],
  running: ["scheduled", "waiting", "completed", "failed", "paused", "cancelled"],
  waiting: ["running", "scheduled", "cancelled", "failed"],
  paused: ["scheduled", "cancelled"],
  failed: ["scheduled"], // DLQ retry
  completed: ["scheduled"], // resume from a block
  cancelled: ["scheduled"], // resume from a block
};

export function canTransition(from: InstanceState, to: InstanceState): boolean {
  return TRANSITIONS[from].includes(to);
}

// Fencing: an engine holding a `running` instance writes only under the lease epoch its claim
// returned (engine/storage/execution.ts). Moving the instance out of `running` here bumps the
// epoch and drops the lease, so whatever that engine still has in flight is refused when it
// commits, instead of overwriting the state the API just set.
//
// Into `running`: no engine holds the instance, so it gets an already expired lease (and a new
// epoch); the reaper hands it back as `scheduled`, due at once, and the next claim runs it.
// Without that lease nothing would ever pick it up again.
const APPLY_TRANSITION = `
UPDATE task_instances
   SET state = $3::text,
       next_fire_at = CASE WHEN $3 = 'scheduled' THEN COALESCE($4::timestamptz, now()) END,
       defer_reason = NULL,
       lease_owner = NULL,
       lease_expires_at = CASE WHEN $3 = 'running' THEN now() END,
       lease_epoch = lease_epoch + CASE WHEN state = 'running' OR $3 = 'running' THEN 1 ELSE 0 END,
       completed_at = CASE WHEN $3 IN ('completed', 'failed', 'cancelled') THEN now() END,
       updated_at = now()
 WHERE tenant_id = $1 AND id = $2`;

/**
 * PATCH state: moves the instance to `to` if F.2 allows it (400 otherwise). A `scheduled` target
 * is due at `nextFireAt`, or now; every other target has no due time.
 */
export async function patchInstanceState(
  db: Queryable & Connectable,
  tenantId: TenantId,
  instanceId: string,
  to: InstanceState,
  nextFireAt: Date | null = null,
): Promise<void> {
  const parentId = await inTransaction(db, async (client) => {
    const { state: from, parent_instance_id: parentId } = await lockInstance(client, tenantId, instanceId);
    if (!canTransition(from, to)) throw new AppError("invalid_argument", `cannot transition from ${from} to ${to}`, ["state"]);
    await client.query(QUIET_TRANSITIONS);
    await client.query({ name: "patch_instance_state", text: APPLY_TRANSITION, values: [tenantId, instanceId, to, nextFireAt] });
    // Under the row lock taken above, so every signal a sender managed to queue is seen here.
    if (isTerminal(to)) await consumeLateSignals(client, [{ tenantId, id: instanceId }]);
    return parentId;
  });
  // A sub-sequence parent waits for its child: one ended here wakes it, once the end has committed.
  if (isTerminal(to) && parentId !== null) await wakeIfWaiting(db, [{ tenantId, id: parentId }]);
}

/**
 * PATCH context: the whole context is replaced by `context` (the caller fills in the defaults
 * of missing sections). Any state: it is data, not a transition.
 */
export async function replaceInstanceContext(db: Queryable, tenantId: TenantId, instanceId: string, context: unknown): Promise<void> {
  let rowCount: number | null;
  try {
    ({ rowCount } = await db.query({
      name: "replace_instance_context",
      text: "UPDATE task_instances SET context = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2",
      values: [tenantId, instanceId, JSON.stringify(context)],
    }));
  } catch (error) {
    throw rejectUnstorableText(error);
  }
  if (rowCount === 0) throw notFound("instance");
}
