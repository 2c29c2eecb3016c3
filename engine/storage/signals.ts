// The signal queue (wire-format G): signals are queued per instance, FIFO, and consumed once by
// the engine, which applies their effects. Every statement takes and filters by tenant_id, so a
// foreign instance is simply not found.
import { AppError } from "../errors.ts";
import { isTerminal, type InstanceState } from "../model.ts";
import { lockInstance } from "./instances.ts";
import { uuidv7, type TenantId } from "./ids.ts";
import { rejectUnstorableText } from "./instance-records.ts";
import { inTransaction, type Connectable, type Queryable } from "./transaction.ts";

export const BUILT_IN_SIGNALS = ["pause", "resume", "cancel", "update_context"] as const;
export type BuiltInSignal = (typeof BUILT_IN_SIGNALS)[number];

/** Signals only Bulkhead itself queues (no wire form decodes to them): blocks injected over REST (V). */
export const INTERNAL_SIGNALS = ["inject_blocks"] as const;
export type InternalSignal = (typeof INTERNAL_SIGNALS)[number];

/** G.1 as on the wire: a built-in name, or `{"custom": "<name>"}`. */
export type SignalType = BuiltInSignal | InternalSignal | { custom: string };

export interface NewSignal {
  type: SignalType;
  /** Any JSON; null when absent. */
  payload: unknown;
}

export interface PendingSignal {
  id: string;
  type: SignalType;
  payload: unknown;
  createdAt: Date;
}

const isBuiltIn = (value: unknown): value is BuiltInSignal => (BUILT_IN_SIGNALS as readonly unknown[]).includes(value);

const EXPECTED = "expected one of `pause`, `resume`, `cancel`, `update_context`, `custom`";

/**
 * Decodes the G.1 wire form (an externally tagged enum). The CLI's `"custom:<name>"` string is
 * not a wire form and is refused like any other unknown string. `reason` reads like serde's.
 */
export function decodeSignalType(json: unknown): { ok: true; type: SignalType } | { ok: false; reason: string } {
  if (typeof json === "string") {
    if (isBuiltIn(json)) return { ok: true, type: json };
    if (json === "custom") return { ok: false, reason: "invalid type: unit variant, expected newtype variant `custom`" };
    return { ok: false, reason: `unknown variant \`${json.slice(0, 64)}\`, ${EXPECTED}` };
  }
  if (typeof json === "object" && json !== null && !Array.isArray(json)) {
    const keys = Object.keys(json);
    if (keys.length !== 1) return { ok: false, reason: "invalid type: map, expected a map with a single key" };
    const [tag] = keys as [string];
    if (tag !== "custom") return { ok: false, reason: `unknown variant \`${tag.slice(0, 64)}\`, ${EXPECTED}` };
    const name = (json as Record<string, unknown>).custom;
    if (typeof name !== "string") return { ok: false, reason: "invalid type: expected a string for `custom`" };
    return { ok: true, type: { custom: name } };
  }
  return { ok: false, reason: json === undefined ? "missing field `signal_type`" : `invalid type, ${EXPECTED}` };
}

/** The stored text: the built-in name, or `custom:<name>`. */
export function signalTypeToText(type: SignalType): string {
  return typeof type === "string" ? type : `custom:${type.custom}`;
}

export function signalTypeFromText(text: string): SignalType {
  if (isBuiltIn(text) || (INTERNAL_SIGNALS as readonly string[]).includes(text)) return text as SignalType;
  if (text.startsWith("custom:")) return { custom: text.slice("custom:".length) };
  throw new AppError("internal", `stored signal type ${JSON.stringify(text.slice(0, 64))} is not a signal type`);
}

/**
 * Whether a new signal should make its instance due now so the engine sees it soon. A running
 * instance is not touched: its engine polls the queue. A paused one only wakes for the signals
 * that can end the pause; the others wait in the queue until it resumes.
 */
export function wakes(state: InstanceState, type: SignalType): boolean {
  if (state === "scheduled" || state === "waiting") return true;
  if (state === "paused") return type === "resume" || type === "cancel";
  return false;
}

// FIFO is by (created_at, id), and created_at has millisecond precision. Inserts for one
// instance are serialised by its row lock, so each gets at least 1 ms after the previous one:
// arrival order never depends on random id bits.
const INSERT_SIGNAL = `
INSERT INTO signals (id, tenant_id, instance_id, signal_type, payload, created_at, delivered, delivered_at)
SELECT $1::uuid, $2, $3::uuid, $4, $5::jsonb, GREATEST(clock_timestamp(), max(created_at) + interval '1 millisecond'),
       $6, CASE WHEN $6 THEN clock_timestamp() END
  FROM signals
 WHERE tenant_id = $2 AND instance_id = $3`;

// Due now, or earlier if it already was (its place in the claim order is kept).
const WAKE_INSTANCE = `
UPDATE task_instances
   SET state = 'scheduled', next_fire_at = LEAST(next_fire_at, now()), defer_reason = NULL, updated_at = now()
 WHERE tenant_id = $1 AND id = $2`;

/**
 * Queues a signal for an instance that is not terminal, and wakes it (see `wakes`). The state is
 * read under the instance's row lock, in the transaction that inserts: an engine finishing the
 * instance at the same moment either commits first (and this refuses with 400) or waits for this
 * insert (and sees the signal), so no signal is ever accepted for a terminal instance.
 */
export async function enqueueSignalIfActive(db: Connectable, tenantId: TenantId, instanceId: string, signal: NewSignal): Promise<{ id: string }> {
  return inTransaction(db, async (client) => {
    const { state } = await lockInstance(client, tenantId, instanceId);
    if (isTerminal(state)) {
      throw new AppError("invalid_argument", `cannot send signal to instance ${instanceId}: target is in a terminal state`);
    }
    // G.3 and Appendix 12: `waiting` may not go to `paused`, so a pause sent to a waiting
    // instance is dropped here (recorded as delivered) rather than applied when it next runs.
    const dropped = state === "waiting" && signal.type === "pause";
    const id = await insertSignal(client, tenantId, instanceId, signal, dropped);
    if (!dropped && wakes(state, signal.type)) await client.query({ name: "wake_for_signal", text: WAKE_INSTANCE, values: [tenantId, instanceId] });
    return { id };
  });
}

/**
 * Queues one signal (recorded as already delivered when `dropped`) and returns its id. The caller
 * holds the instance's row lock in its transaction, which is what keeps the queue FIFO.
 */
export async function insertSignal(client: Queryable, tenantId: TenantId, instanceId: string, signal: NewSignal, dropped = false): Promise<string> {
  const id = uuidv7();
  const payload = signal.payload === null || signal.payload === undefined ? null : JSON.stringify(signal.payload);
  try {
    await client.query({
      name: "insert_signal",
      text: INSERT_SIGNAL,
      values: [id, tenantId, instanceId, signalTypeToText(signal.type), payload, dropped],
    });
  } catch (error) {
    throw rejectUnstorableText(error);
  }
  return id;
}

// Reading the queue does not consume it: the run's next commit marks what it applied as
// delivered, in the statement that writes what the signals did (commitProgressBatch). A run that
// dies or loses its lease before that commit leaves them queued for the instance's next holder.
const PENDING = `
SELECT id, signal_type, payload, created_at FROM signals
 WHERE tenant_id = $1 AND instance_id = $2 AND NOT delivered AND NOT (id = ANY($4::uuid[]))
   AND ($3::bigint IS NULL OR EXISTS (
         SELECT 1 FROM task_instances
          WHERE tenant_id = $1 AND id = $2 AND state = 'running' AND lease_epoch = $3))
 ORDER BY created_at, id`;

/**
 * The instance's undelivered signals, oldest first, but those in `applied` (taken by this run,
 * not yet committed). With `leaseEpoch`, only while the instance is running under that lease:
 * an engine that lost its lease gets nothing.
 */
export async function pendingSignals(
  db: Queryable, tenantId: TenantId, instanceId: string, leaseEpoch?: number, applied: readonly string[] = [],
): Promise<PendingSignal[]> {
  const { rows } = await db.query<{ id: string; signal_type: string; payload: unknown; created_at: Date }>({
    name: "pending_signals",
    text: PENDING,
    values: [tenantId, instanceId, leaseEpoch ?? null, applied],
  });
  return rows.map((row) => ({ id: row.id, type: signalTypeFromText(row.signal_type), payload: row.payload ?? null, createdAt: row.created_at }));
}

/**
 * Which of these instances (an engine's running ones, of any tenant on the backend) have a
 * signal queued: one statement for them all, so the engine need not ask per run.
 */
export async function instancesWithQueuedSignals(db: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ instance_id: string }>({
    name: "instances_with_queued_signals",
    text: "SELECT DISTINCT instance_id FROM signals WHERE instance_id = ANY($1::uuid[]) AND NOT delivered",
    values: [ids],
  });
  return new Set(rows.map((row) => row.instance_id));
}

// Signals still queued for instances a transaction has just ended (the engine's completion, a
// cancel through the API): for the engine, they came after the run last took its queue (at its
// start, then every 250 ms). Each was accepted while its instance was still live, so it is taken
// now, as if just before the end: an update_context still merges its top-level payload.data keys
// (G.3, the later signal winning a key); pause, resume, cancel and custom signals have nothing
// left to act on. Without this, a later resume would apply them.
const CONSUME_LATE_SIGNALS = `
WITH late AS (
  UPDATE signals s SET delivered = true, delivered_at = now()
    FROM unnest($1::text[], $2::uuid[]) AS e(tenant_id, id)
   WHERE s.tenant_id = e.tenant_id AND s.instance_id = e.id AND NOT s.delivered
  RETURNING s.id, s.tenant_id, s.instance_id, s.signal_type, s.payload, s.created_at
),
merged AS (
  SELECT l.tenant_id, l.instance_id, jsonb_object_agg(d.key, d.value ORDER BY l.created_at, l.id) AS data
    FROM late l CROSS JOIN LATERAL jsonb_each(l.payload -> 'data') d
   WHERE l.signal_type = 'update_context' AND jsonb_typeof(l.payload -> 'data') = 'object'
   GROUP BY l.tenant_id, l.instance_id
)
UPDATE task_instances t
   SET context = jsonb_set(coalesce(t.context, '{}'::jsonb), '{data}',
                           CASE WHEN jsonb_typeof(t.context -> 'data') = 'object' THEN t.context -> 'data' ELSE '{}'::jsonb END || m.data)
  FROM merged m
 WHERE t.id = m.instance_id AND t.tenant_id = m.tenant_id`;

/**
 * Takes the signals still queued for instances ended in the caller's transaction. It must run as
 * a later statement than the one that ended them: a sender that locked the row first has
 * committed by then, and only a statement started after that sees its signal.
 */
export async function consumeLateSignals(client: Queryable, ended: { tenantId: TenantId; id: string }[]): Promise<void> {
  if (ended.length === 0) return;
  await client.query({ name: "consume_late_signals", text: CONSUME_LATE_SIGNALS, values: [ended.map((e) => e.tenantId), ended.map((e) => e.id)] });
}
