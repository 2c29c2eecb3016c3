// The dead-letter queue (wire-format J): GET /instances/dlq, POST /instances/{id}/retry (E.14)
// and POST /instances/{id}/resume-from/{block_id}. What a re-run keeps and wipes is engine
// storage's (rerun.ts); here: wire shapes, the audit line, and who may act.
import { z } from "zod";
import { AppError } from "../../../engine/errors.ts";
import { isObject } from "../../../engine/model.ts";
import { checkSize } from "../../../engine/size-limits.ts";
import type { DeadLetterQuery, NewSignal } from "../../../engine/storage/index.ts";
import { resumeFrom as resumeFromAudited, retryInstance } from "../../instance-actions.ts";
import { keyActor } from "../auth.ts";
import { countParam, shapedBody } from "../body.ts";
import { json, Rejection } from "../http.ts";
import { requireTenantHeader, storeOwning, type RestContext } from "../route.ts";
import { wireInstance } from "../wire.ts";
import { SignalTypeWire } from "./signals.ts";

const DLQ_LIMIT = { default: 100, max: 1000 };
const UUID = z.guid();
const NO_TENANT = "the dead-letter queue is read for one tenant: name it (X-Tenant-Id)";

/** Query parsing: malformed values are extractor rejections (400 plain text); `state` and `metadata.*` are ignored. */
function deadLetterQuery(query: URLSearchParams): DeadLetterQuery {
  const parsed: DeadLetterQuery = {
    offset: countParam(query, "offset", 0, 0),
    limit: Math.min(countParam(query, "limit", DLQ_LIMIT.default, 1), DLQ_LIMIT.max),
  };
  const namespace = query.get("namespace");
  if (namespace) parsed.namespace = namespace;
  const sequenceId = query.get("sequence_id");
  if (sequenceId) {
    if (!UUID.safeParse(sequenceId).success) throw new Rejection(400, "Failed to deserialize query string: sequence_id: invalid UUID");
    parsed.sequenceId = sequenceId.toLowerCase();
  }
  return parsed;
}

/** GET /instances/dlq: a plain array (no envelope), every element failed, most recently updated first. */
export async function listDeadLetters(context: RestContext<unknown>): Promise<Response> {
  const query = deadLetterQuery(context.url.searchParams);
  const store = requireTenantHeader(context, NO_TENANT);
  return json(200, (await store.listDeadLetters(query)).map(wireInstance));
}

/** Takes no body (Orch8 reads none): `{}`, nothing, or anything else is all the same. */
export async function retry(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const store = await storeOwning(context, "instance", id);
  const actor = await keyActor(context.services.prisma, context.principal!);
  return json(200, await retryInstance(context.services.prisma, store, { actor }, id));
}

const ResumeRequest = z.object({
  context: z.unknown().optional(),
  signals: z.array(z.object({ signal_type: SignalTypeWire, payload: z.unknown().default(null) })).nullish(),
});
type ResumeRequest = z.output<typeof ResumeRequest>;

/** Optional: no body at all reads as `{}`. */
export const resumeBody = shapedBody(ResumeRequest, () => [], { optional: true });

/** The context patch: an object, or nothing; null reads as nothing. */
function contextPatch(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw new AppError("invalid_argument", "context patch must be a JSON object", ["context"]);
  checkSize("context", value, { path: ["context"] });
  return value;
}

/** POST /instances/{id}/resume-from/{block_id}. */
export async function resumeFrom(context: RestContext<ResumeRequest>): Promise<Response> {
  const id = context.params.id!;
  const store = requireTenantHeader(context, NO_TENANT);
  const patch = contextPatch(context.body.context);
  const signals: NewSignal[] = (context.body.signals ?? []).map((signal, index) => {
    checkSize("signalPayload", signal.payload, { path: ["signals", index, "payload"] });
    return { type: signal.signal_type, payload: signal.payload };
  });
  const actor = await keyActor(context.services.prisma, context.principal!);
  const request = { blockId: context.params.block_id!, context: patch, signals };
  const resumed = await resumeFromAudited(context.services.prisma, store, { actor }, id, request);
  return json(200, {
    id: resumed.id,
    state: resumed.state,
    resumed_from: resumed.resumedFrom,
    outputs_deleted: resumed.outputsDeleted,
    signals_enqueued: resumed.signalsEnqueued,
  });
}
