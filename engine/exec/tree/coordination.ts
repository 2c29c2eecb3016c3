// Handlers that reach other instances (D: send_signal, query_instance). The tenant check sits
// where the target is loaded: every lookup is by (caller's tenant, id), so another tenant's
// instance is simply not there, and a missing and a foreign target give the same answer, word for
// word. No answer about a foreign target mentions its state.
import type pg from "pg";
import { AppError, isAppError } from "../../errors.ts";
import type { HandlerOutcome } from "../../handlers/types.ts";
import { getInstance } from "../../storage/instance-records.ts";
import { decodeSignalType, enqueueSignalIfActive } from "../../storage/signals.ts";
import { isObject } from "./state.ts";

type Db = Pick<pg.Pool, "query" | "connect">;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TARGET_NOT_FOUND = "target instance not found";

export const COORDINATION_HANDLERS = new Set(["send_signal", "query_instance"]);

export async function runCoordination(handler: string, db: Db, tenantId: string, params: unknown): Promise<HandlerOutcome> {
  const input = isObject(params) ? params : {};
  const target = typeof input.instance_id === "string" && UUID.test(input.instance_id) ? input.instance_id.toLowerCase() : null;
  if (handler === "query_instance") {
    const found = target ? await getInstance(db, tenantId, target) : null;
    if (!found) return { kind: "success", output: { found: false } };
    const terminal = ["completed", "failed", "cancelled"].includes(found.state);
    return {
      kind: "success",
      output: {
        found: true, state: found.state, context: found.context, started_at: found.createdAt.toISOString(),
        completed_at: terminal ? found.updatedAt.toISOString() : null, current_node: null,
      },
    };
  }
  // send_signal
  const signal = decodeSignalType(input.signal_type);
  if (!signal.ok) return { kind: "failure", retryable: false, message: `invalid signal_type: ${signal.reason}` };
  if (!target) return { kind: "failure", retryable: false, message: TARGET_NOT_FOUND };
  try {
    // Re-reads the target's state under its row lock and refuses a terminal one in the same
    // transaction as the insert: no signal is ever left on a finished instance.
    const { id } = await enqueueSignalIfActive(db, tenantId, target, { type: signal.type, payload: input.payload ?? null });
    return { kind: "success", output: { signal_id: id } };
  } catch (error) {
    // Missing, foreign and (for this handler) terminal targets all read the same: the message
    // about a terminal instance would confirm that the id exists.
    if (isAppError(error, "not_found") || isAppError(error, "invalid_argument")) {
      return { kind: "failure", retryable: false, message: TARGET_NOT_FOUND };
    }
    if (error instanceof AppError) return { kind: "failure", retryable: false, message: error.message };
    throw error;
  }
}
