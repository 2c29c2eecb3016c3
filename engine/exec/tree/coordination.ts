// Handlers that reach other instances (D: send_signal, query_instance, emit_event). The tenant check sits
// where the target is loaded: every lookup is by (caller's tenant, id), so another tenant's
// instance is simply not there, and a missing and a foreign target give the same answer, word for
// word. No answer about a foreign target mentions its state.
import type pg from "pg";
import { AppError, isAppError } from "../../errors.ts";
import type { HandlerOutcome } from "../../handlers/types.ts";
import { getInstance } from "../../storage/instance-records.ts";
import { decodeSignalType, enqueueSignalIfActive } from "../../storage/signals.ts";
import { emitEvent } from "../../storage/events.ts";
import { isObject } from "./state.ts";

type Db = Pick<pg.Pool, "query" | "connect">;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TARGET_NOT_FOUND = "target instance not found";

export const COORDINATION_HANDLERS = new Set(["send_signal", "query_instance", "emit_event"]);

export async function runCoordination(handler: string, db: Db, tenantId: string, params: unknown, callerId: string): Promise<HandlerOutcome> {
  const input = isObject(params) ? params : {};
  if (handler === "emit_event") return emit(db, tenantId, callerId, input);
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

/**
 * emit_event: a child instance in the caller's tenant, of the sequence a `trigger_slug` (one of the
 * tenant's triggers) or a `sequence_name` names, looked up in the caller's namespace. `data` is its
 * context.data, `meta` goes into its metadata with the parent's id. With `dedupe_key`, one child
 * per key in the scope (`tenant`, or `parent`: this instance).
 */
async function emit(db: Db, tenantId: string, callerId: string, input: Record<string, unknown>): Promise<HandlerOutcome> {
  const slug = typeof input.trigger_slug === "string" && input.trigger_slug !== "" ? input.trigger_slug : null;
  const sequenceName = typeof input.sequence_name === "string" && input.sequence_name !== "" ? input.sequence_name : null;
  if (!slug && !sequenceName) return { kind: "failure", retryable: false, message: "emit_event needs trigger_slug (or sequence_name)" };
  if (input.dedupe_scope !== undefined && input.dedupe_scope !== "parent" && input.dedupe_scope !== "tenant") {
    return { kind: "failure", retryable: false, message: "dedupe_scope must be \"parent\" or \"tenant\"" };
  }
  const key = typeof input.dedupe_key === "string" && input.dedupe_key !== "" ? input.dedupe_key : null;
  const scope = input.dedupe_scope === "parent" ? `parent:${callerId}` : "tenant";
  const meta = isObject(input.meta) ? input.meta : {};
  const result = await emitEvent(db, {
    tenantId, parentId: callerId, target: slug ? { triggerSlug: slug } : { sequenceName: sequenceName! }, data: input.data ?? {},
    metadata: {
      _trigger: slug ?? sequenceName, _trigger_type: "emit_event",
      _trigger_event: { ...meta, source: "emit_event", parent_instance_id: callerId },
    },
    ...(key ? { dedupe: { scope, key } } : {}),
  });
  if (!result) {
    const message = slug ? `trigger not found: ${slug} (or its sequence is not in this namespace)` : `sequence not found: ${sequenceName}`;
    return { kind: "failure", retryable: false, message };
  }
  if ("inputProblem" in result) return { kind: "failure", retryable: false, message: result.inputProblem };
  return { kind: "success", output: { instance_id: result.instanceId, sequence_name: result.sequenceName, deduped: result.deduped } };
}
