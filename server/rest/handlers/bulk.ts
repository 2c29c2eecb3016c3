// Bulk operations (wire-format K): PATCH /instances/bulk/state, PATCH /instances/bulk/reschedule
// and POST /instances/batch-action. Each acts on the acting tenant's instances only (a filter
// naming another tenant answers 404 before anything is read); engine storage does the work a
// batch at a time, and every action leaves one line in the audit log.
import { z } from "zod";
import { AppError } from "../../../engine/errors.ts";
import { isObject } from "../../../engine/model.ts";
import { nameString } from "../../../engine/sequence/schema.ts";
import { checkSize } from "../../../engine/size-limits.ts";
import { BATCH_ACTIONS, clampBatchLimit, INSTANCE_STATES, type BulkFilter } from "../../../engine/storage/index.ts";
import { batchAction as batchActionAudited, bulkReschedule, bulkSetState, RESCHEDULE_MAX_SECS } from "../../instance-actions.ts";
import { keyActor } from "../auth.ts";
import { shape } from "../body.ts";
import { json } from "../http.ts";
import { requireTenantHeader, type BodySpec, type RestContext } from "../route.ts";

const FILTER_FIELDS = new Set(["tenant_id", "namespace", "sequence_id", "states", "metadata"]);

/** `BulkFilter` (a blank tenant_id reads as absent). */
const WireFilter = z.object({
  tenant_id: z.string().nullish(),
  namespace: z.string().nullish(),
  sequence_id: z.guid().nullish(),
  states: z.array(z.enum(INSTANCE_STATES)).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
});
type WireFilter = z.output<typeof WireFilter>;

function bulkFilter(wire: WireFilter): BulkFilter {
  return {
    ...(wire.namespace != null ? { namespace: wire.namespace } : {}),
    ...(wire.sequence_id != null ? { sequenceId: wire.sequence_id.toLowerCase() } : {}),
    ...(wire.states?.length ? { states: wire.states } : {}),
    ...(wire.metadata && Object.keys(wire.metadata).length > 0 ? { metadata: wire.metadata } : {}),
  };
}

/** An unknown key would silently widen the match (Orch8 ignores it): a 400 naming it, before the shape is checked. */
function refuseUnknownFilterFields(body: unknown): void {
  const filter = isObject(body) ? body.filter : undefined;
  if (!isObject(filter)) return;
  const unknown = Object.keys(filter).find((key) => !FILTER_FIELDS.has(key));
  if (unknown !== undefined) throw new AppError("invalid_argument", `unsupported filter field: ${unknown.slice(0, 64)}`, ["filter"]);
}

/** The body spec of a request `{filter, ...}`: the filter's tenant_id must be the acting tenant. */
function filterBody<S extends z.ZodObject<{ filter: typeof WireFilter }>>(schema: S): BodySpec<z.output<S>> {
  return {
    schema,
    parse: (body) => {
      refuseUnknownFilterFields(body);
      return shape(schema, body);
    },
    tenants: (body) => [(body as { filter: WireFilter }).filter.tenant_id],
  };
}

const BulkStateRequest = z.object({ filter: WireFilter, state: z.enum(INSTANCE_STATES) });
const RescheduleRequest = z.object({ filter: WireFilter, offset_secs: z.int() });
const BatchActionRequest = z.object({
  filter: WireFilter,
  action: z.enum(BATCH_ACTIONS),
  signal_type: nameString().nullish(),
  payload: z.unknown().default(null),
  dry_run: z.boolean().nullish(),
  limit: z.int().nullish(),
});

export const bulkStateBody = filterBody(BulkStateRequest);
export const rescheduleBody = filterBody(RescheduleRequest);
export const batchActionBody = filterBody(BatchActionRequest);

const actor = async (context: RestContext<unknown>) => ({ actor: await keyActor(context.services.prisma, context.principal!) });

export async function patchBulkState(context: RestContext<z.output<typeof BulkStateRequest>>): Promise<Response> {
  const store = requireTenantHeader(context, "bulk operations require a tenant_id");
  const { filter, state } = context.body;
  return json(200, { count: await bulkSetState(context.services.prisma, store, await actor(context), bulkFilter(filter), state) });
}

export async function patchBulkReschedule(context: RestContext<z.output<typeof RescheduleRequest>>): Promise<Response> {
  const store = requireTenantHeader(context, "bulk operations require a tenant_id");
  const { filter, offset_secs: offsetSecs } = context.body;
  if (Math.abs(offsetSecs) > RESCHEDULE_MAX_SECS) {
    throw new AppError("invalid_argument", `offset_secs must be within ±${RESCHEDULE_MAX_SECS}`, ["offset_secs"]);
  }
  return json(200, { count: await bulkReschedule(context.services.prisma, store, await actor(context), bulkFilter(filter), offsetSecs) });
}

export async function postBatchAction(context: RestContext<z.output<typeof BatchActionRequest>>): Promise<Response> {
  const store = requireTenantHeader(context, "batch actions require a tenant_id");
  const body = context.body;
  const signalName = body.signal_type?.trim() ? body.signal_type : undefined;
  if (body.action === "signal" && signalName === undefined) throw new AppError("invalid_argument", "the `signal` action requires `signal_type`", ["signal_type"]);
  if (body.action === "signal") checkSize("signalPayload", body.payload, { path: ["payload"] });
  const result = await batchActionAudited(context.services.prisma, store, await actor(context), {
    filter: bulkFilter(body.filter),
    action: body.action,
    ...(body.action === "signal" ? { signalName, payload: body.payload } : {}),
    dryRun: body.dry_run ?? false,
    limit: clampBatchLimit(body.limit ?? undefined),
  });
  return json(200, { matched: result.matched, applied: result.applied, skipped: result.skipped, failed: result.failed, dry_run: result.dryRun });
}
