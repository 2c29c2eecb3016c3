// Bulk state changes and reschedules (wire-format K), a batch at a time (batches.ts). Each
// matched instance changes as PATCH /instances/{id}/state would change it (F.2 check as a
// compare-and-set under the row lock, lease fencing, late signals taken, waiting parents woken once the batch has committed);
// instances whose transition is illegal are left alone and not counted.
import { isTerminal, type InstanceState } from "../model.ts";
import { forEachBatch } from "./batches.ts";
import { filterConditions, type BulkFilter } from "./bulk-filter.ts";
import type { TenantConnections } from "./connection-shares.ts";
import type { TenantId } from "./ids.ts";
import { TRANSITIONS } from "./instance-state.ts";
import { QUIET_TRANSITIONS } from "./instance-audit.ts";
import { consumeLateSignals } from "./signals.ts";
import { inTransaction } from "./transaction.ts";
import { wakeIfWaiting } from "./wakeups.ts";

/** The states F.2 lets an instance leave for `to`. */
export function statesLeadingTo(to: InstanceState): InstanceState[] {
  return (Object.keys(TRANSITIONS) as InstanceState[]).filter((from) => TRANSITIONS[from].includes(to));
}

// locked:  the batch's rows still in a state that may go to $3, locked in id order (a row changed
//          meanwhile is rechecked under its lock, so this is the compare-and-set).
// updated: APPLY_TRANSITION of instance-state.ts, but next_fire_at is kept (K), except that a
//          `scheduled` target without a due time is due now (the scheduled_due check demands
//          one, and nothing would ever claim it otherwise).
const SET_STATE = `
WITH locked AS (
  SELECT id FROM task_instances
   WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND state = ANY($4::text[])
   ORDER BY id FOR UPDATE
), updated AS (
  UPDATE task_instances t
     SET state = $3::text,
         next_fire_at = CASE WHEN $3 = 'scheduled' THEN COALESCE(t.next_fire_at, now()) ELSE t.next_fire_at END,
         defer_reason = NULL,
         lease_owner = NULL,
         lease_expires_at = CASE WHEN $3 = 'running' THEN now() END,
         lease_epoch = t.lease_epoch + CASE WHEN t.state = 'running' OR $3 = 'running' THEN 1 ELSE 0 END,
         completed_at = CASE WHEN $3 IN ('completed', 'failed', 'cancelled') THEN now() END,
         updated_at = now()
    FROM locked l
   WHERE t.tenant_id = $1 AND t.id = l.id
  RETURNING t.id, t.parent_instance_id
)
SELECT id, parent_instance_id FROM updated`;

/** PATCH /instances/bulk/state: how many instances moved to `to`. */
export async function bulkSetState(db: TenantConnections, tenantId: TenantId, filter: BulkFilter, to: InstanceState): Promise<number> {
  const from = statesLeadingTo(to).filter((state) => !filter.states?.length || filter.states.includes(state));
  if (from.length === 0) return 0;
  const apply = async (ids: string[]) => {
    const values = [tenantId, ids, to, from];
    const changed = await inTransaction(db, async (client) => {
      await client.query(QUIET_TRANSITIONS);
      const { rows } = await client.query<{ id: string; parent_instance_id: string | null }>({ name: "bulk_set_state", text: SET_STATE, values });
      // A later statement than the one that ended them (see consumeLateSignals), under the same locks.
      if (isTerminal(to)) await consumeLateSignals(client, rows.map((row) => ({ tenantId, id: row.id })));
      return rows;
    });
    if (!isTerminal(to)) return changed.length;
    const parents = new Set(changed.flatMap((row) => (row.parent_instance_id ? [row.parent_instance_id] : [])));
    await wakeIfWaiting(db, [...parents].map((id) => ({ tenantId, id })));
    return changed.length;
  };
  return forEachBatch(db, tenantId, (params) => [...filterConditions({ ...filter, states: from }, params)], apply);
}

// Only `scheduled` instances move, rechecked under the row lock. Every one has a due time (the
// scheduled_due check); a null next_fire_at elsewhere is not touched, so it stays null.
const RESCHEDULE = `
WITH locked AS (
  SELECT id FROM task_instances
   WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND state = 'scheduled'
   ORDER BY id FOR UPDATE
)
UPDATE task_instances t
   SET next_fire_at = t.next_fire_at + $3::bigint * interval '1 second', updated_at = now()
  FROM locked l
 WHERE t.tenant_id = $1 AND t.id = l.id`;

/**
 * PATCH /instances/bulk/reschedule: moves the due time of matching `scheduled` instances by
 * `offsetSecs` (negative: earlier; a time in the past is simply due). A `states` filter without
 * `scheduled` matches nothing.
 */
export async function bulkReschedule(db: TenantConnections, tenantId: TenantId, filter: BulkFilter, offsetSecs: number): Promise<number> {
  if (filter.states?.length && !filter.states.includes("scheduled")) return 0;
  const apply = async (ids: string[]) =>
    (await db.query({ name: "bulk_reschedule", text: RESCHEDULE, values: [tenantId, ids, offsetSecs] })).rowCount ?? 0;
  return forEachBatch(db, tenantId, (params) => [...filterConditions({ ...filter, states: ["scheduled"] }, params)], apply);
}
