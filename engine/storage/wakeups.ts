// Wake-ups that cannot be lost. An instance waits (state `waiting`) for results it handed away:
// worker tasks and child instances. A result can land while the instance is still running, on
// its way to parking, and each side's statement reads the other in a snapshot taken before the
// other committed: the report sees `running` and wakes nothing, the parking sees the task open.
//
// So both sides look again, in a statement of their own after their write has committed:
//   the waker   (a worker's report, a task's timeout, a child's end) wakes the instance if it
//               is waiting by now (wakeIfWaiting);
//   the sleeper (the engine parking an instance) schedules it if what it waits for is over by
//               now (wakeIfWaitIsOver).
// Whichever of the two looks last sees the other's commit: a waker's second look comes after
// its result committed, a sleeper's after its parking did, so both looks missing each other
// would need each to come before the other. A woken instance whose result is not there after
// all runs, finds nothing to take and parks again. Signals are a waker too (wakeForQueuedSignals).
import type { Queryable } from "./transaction.ts";

export interface InstanceKey {
  tenantId: string;
  id: string;
}

export interface ParkedInstance extends InstanceKey {
  /** The worker tasks and child instances it waits for. */
  waitingOn: readonly string[];
}

// The waiting ones among `over` (columns tenant_id, id) are locked in id order, as every
// statement that locks many instances takes them, and made due now.
const WAKE = `waking AS (
  SELECT i.id FROM task_instances i
   WHERE (i.tenant_id, i.id) IN (SELECT tenant_id, id FROM over) AND i.state = 'waiting'
   ORDER BY i.id
   FOR UPDATE
)
UPDATE task_instances i
   SET state = 'scheduled', next_fire_at = now(), defer_reason = NULL, updated_at = now()
  FROM waking w
 WHERE i.id = w.id AND i.state = 'waiting'`;

/**
 * The same second look for signals, after an instance left `running` for waiting, paused or
 * scheduled: a signal queued while it ran, too late for the run to read, makes it due now as the
 * sender would have (signals.ts `wakes`: any signal for waiting and scheduled, resume and cancel
 * for paused). A signal the run applied was marked delivered by the commit itself.
 */
export async function wakeForQueuedSignals(db: Queryable, instances: readonly InstanceKey[]): Promise<number> {
  if (instances.length === 0) return 0;
  const { rowCount } = await db.query({
    name: "wake_for_queued_signals",
    text: `WITH waking AS (
             SELECT i.id FROM task_instances i
              WHERE (i.tenant_id, i.id) IN (SELECT * FROM unnest($1::text[], $2::uuid[]))
                AND EXISTS (SELECT 1 FROM signals s
                             WHERE s.tenant_id = i.tenant_id AND s.instance_id = i.id AND NOT s.delivered
                               AND (i.state IN ('waiting', 'scheduled') OR (i.state = 'paused' AND s.signal_type IN ('resume', 'cancel'))))
              ORDER BY i.id
              FOR UPDATE OF i
           )
           UPDATE task_instances i
              SET state = 'scheduled', next_fire_at = LEAST(i.next_fire_at, now()), defer_reason = NULL, updated_at = now()
             FROM waking w
            WHERE i.id = w.id AND i.state IN ('waiting', 'scheduled', 'paused')`,
    values: [instances.map((i) => i.tenantId), instances.map((i) => i.id)],
  });
  return rowCount ?? 0;
}

/** The waker's second look: each instance that is waiting now is due now. Returns how many. */
export async function wakeIfWaiting(db: Queryable, instances: readonly InstanceKey[]): Promise<number> {
  if (instances.length === 0) return 0;
  const { rowCount } = await db.query({
    name: "wake_if_waiting",
    text: `WITH over AS (SELECT * FROM unnest($1::text[], $2::uuid[]) AS x(tenant_id, id)), ${WAKE}`,
    values: [instances.map((i) => i.tenantId), instances.map((i) => i.id)],
  });
  return rowCount ?? 0;
}

/** The sleeper's second look: each parked instance one of whose results is in is due now. */
export async function wakeIfWaitIsOver(db: Queryable, parked: readonly ParkedInstance[]): Promise<number> {
  const waits = parked.flatMap((p) => p.waitingOn.map((waitedId) => ({ ...p, waitedId })));
  if (waits.length === 0) return 0;
  const { rowCount } = await db.query({
    name: "wake_if_wait_is_over",
    text: `WITH waits AS (
             SELECT * FROM unnest($1::text[], $2::uuid[], $3::uuid[]) AS w(tenant_id, id, waited_id)
           ), over AS (
             SELECT DISTINCT w.tenant_id, w.id FROM waits w
              WHERE EXISTS (SELECT 1 FROM worker_tasks t
                             WHERE t.tenant_id = w.tenant_id AND t.instance_id = w.id AND t.id = w.waited_id
                               AND t.state IN ('completed', 'failed'))
                 OR EXISTS (SELECT 1 FROM task_instances c
                             WHERE c.tenant_id = w.tenant_id AND c.parent_instance_id = w.id AND c.id = w.waited_id
                               AND c.state IN ('completed', 'failed', 'cancelled'))
           ), ${WAKE}`,
    values: [waits.map((w) => w.tenantId), waits.map((w) => w.id), waits.map((w) => w.waitedId)],
  });
  return rowCount ?? 0;
}
