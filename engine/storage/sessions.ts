// SQL for `sessions` (wire-format O): a tenant's named bag of shared JSON with a coarse state.
// Every statement names the tenant, so another tenant's session is simply not there. A state
// change cascades to the instances attached to the session (Bulkhead's additive rule), as signals
// queued the way POST /instances/{id}/signals queues them, a batch at a time.
import { TERMINAL_STATES } from "../model.ts";
import { signalLive } from "./batch-actions.ts";
import { BATCH_SIZE, withDeadlockRetry } from "./batches.ts";
import type { TenantConnections } from "./connection-shares.ts";
import { uuidv7, type TenantId } from "./ids.ts";
import { rejectUnstorableText } from "./instance-records.ts";
import type { SignalType } from "./signals.ts";
import { inTransaction, type Queryable } from "./transaction.ts";

export const SESSION_STATES = ["active", "paused", "completed", "expired"] as const;
export type SessionState = (typeof SESSION_STATES)[number];

export interface SessionRecord {
  id: string;
  sessionKey: string;
  data: unknown;
  state: SessionState;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
}

interface SessionRow {
  id: string;
  session_key: string;
  data: unknown;
  state: SessionState;
  created_at: Date;
  updated_at: Date;
  expires_at: Date | null;
}

const COLUMNS = "id, session_key, data, state, created_at, updated_at, expires_at";

const toRecord = (row: SessionRow): SessionRecord => ({
  id: row.id, sessionKey: row.session_key, data: row.data, state: row.state, createdAt: row.created_at, updatedAt: row.updated_at, expiresAt: row.expires_at,
});

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** The new session (active); null when the tenant has one with that key already. */
export async function createSession(
  db: Queryable, tenantId: TenantId, session: { sessionKey: string; data: unknown; expiresAt: Date | null },
): Promise<SessionRecord | null> {
  try {
    const { rows } = await db.query<SessionRow>({
      name: "create_session",
      text: `INSERT INTO sessions (tenant_id, id, session_key, data, expires_at) VALUES ($1, $2, $3, $4::jsonb, $5)
             ON CONFLICT (tenant_id, session_key) DO NOTHING RETURNING ${COLUMNS}`,
      values: [tenantId, uuidv7(), session.sessionKey, json(session.data), session.expiresAt],
    });
    return rows[0] ? toRecord(rows[0]) : null;
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

export async function getSession(db: Queryable, tenantId: TenantId, id: string): Promise<SessionRecord | null> {
  const { rows } = await db.query<SessionRow>({ name: "get_session", text: `SELECT ${COLUMNS} FROM sessions WHERE tenant_id = $1 AND id = $2`, values: [tenantId, id] });
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function getSessionByKey(db: Queryable, tenantId: TenantId, key: string): Promise<SessionRecord | null> {
  const { rows } = await db.query<SessionRow>({
    name: "get_session_by_key", text: `SELECT ${COLUMNS} FROM sessions WHERE tenant_id = $1 AND session_key = $2`, values: [tenantId, key],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Those of `ids` that are sessions of the tenant. */
export async function existingSessions(db: Queryable, tenantId: TenantId, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>({
    name: "existing_sessions", text: "SELECT id FROM sessions WHERE tenant_id = $1 AND id = ANY($2::uuid[])", values: [tenantId, ids],
  });
  return new Set(rows.map((r) => r.id));
}

/** Replaces `data` whole (O: no merge); false when the tenant has no such session. */
export async function replaceSessionData(db: Queryable, tenantId: TenantId, id: string, data: unknown): Promise<boolean> {
  try {
    const { rowCount } = await db.query({
      name: "replace_session_data",
      text: "UPDATE sessions SET data = $3::jsonb, updated_at = now() WHERE tenant_id = $1 AND id = $2",
      values: [tenantId, id, json(data)],
    });
    return (rowCount ?? 0) > 0;
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

/** What a session's new state asks of its instances: paused pauses, back to active resumes, the two ends cancel. */
export function cascadeOf(from: SessionState, to: SessionState): SignalType | null {
  if (from === to) return null;
  if (to === "paused") return "pause";
  if (to === "active") return from === "paused" ? "resume" : null;
  return from === "completed" || from === "expired" ? null : "cancel";
}

/**
 * Sets the state (O: any state from any state) and, per cascadeOf, signals every live instance
 * attached to the session, in batches by id, each its own transaction; null when the tenant has
 * no such session. `signalled` is how many instances got the signal.
 */
export async function setSessionState(
  db: TenantConnections, tenantId: TenantId, id: string, state: SessionState,
): Promise<{ from: SessionState; signalled: number } | null> {
  const { rows } = await db.query<{ previous: SessionState }>({
    name: "set_session_state",
    text: `UPDATE sessions s SET state = $3, updated_at = now() FROM (SELECT state AS previous FROM sessions WHERE tenant_id = $1 AND id = $2 FOR UPDATE) p
            WHERE s.tenant_id = $1 AND s.id = $2 RETURNING p.previous`,
    values: [tenantId, id, state],
  });
  if (!rows[0]) return null;
  const from = rows[0].previous;
  const signal = cascadeOf(from, state);
  return { from, signalled: signal ? await signalSessionInstances(db, tenantId, id, signal) : 0 };
}

async function signalSessionInstances(db: TenantConnections, tenantId: TenantId, sessionId: string, type: SignalType): Promise<number> {
  let after = "00000000-0000-0000-0000-000000000000";
  let signalled = 0;
  for (;;) {
    const { rows } = await db.query<{ id: string }>({
      name: "session_live_instances",
      text: `SELECT id FROM task_instances WHERE tenant_id = $1 AND session_id = $2 AND id > $3 AND NOT (state = ANY($4::text[]))
              ORDER BY id LIMIT $5`,
      values: [tenantId, sessionId, after, TERMINAL_STATES, BATCH_SIZE],
    });
    if (rows.length === 0) return signalled;
    const ids = rows.map((r) => r.id);
    const applied = await withDeadlockRetry(() => inTransaction(db, (client) => signalLive(client, tenantId, ids, { type, payload: null })));
    signalled += applied.length;
    after = ids.at(-1)!;
    if (rows.length < BATCH_SIZE) return signalled;
  }
}
