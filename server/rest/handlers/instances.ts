// Instances (E.5-E.9): create one or a batch, read one, list, read outputs.
import { z } from "zod";
import { AppError, notFound } from "../../../engine/errors.ts";
import { checkSize } from "../../../engine/size-limits.ts";
import { inputProblem } from "../../../engine/sequence/input-schema.ts";
import { nameString } from "../../../engine/sequence/schema.ts";
import {
  INSTANCE_STATES, type InstanceFilter, type InstanceState, type NewInstance, type TenantStore,
} from "../../../engine/storage/index.ts";
import { countParam, shapedBody } from "../body.ts";
import { InstanceContext } from "../context.ts";
import { json, Rejection } from "../http.ts";
import { requireStore, storeOwning, type RestContext } from "../route.ts";
import { PRIORITIES, wireBlockOutput, wireInstance } from "../wire.ts";

export const BATCH_LIMIT = 10_000;
const LIST_LIMIT = { default: 100, max: 1000 };

/** Optional on the wire; `null` reads as absent. */
const nullable = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? null);
/** Any JSON; absent reads as null. */
const anyJson = z.unknown().default(null);

/** The create request (E.5). Unknown fields are ignored; blank `tenant_id` is a shape error (422). */
const CreateInstanceRequest = z.object({
  sequence_id: z.guid().transform((id) => id.toLowerCase()),
  tenant_id: z.string().refine((value) => value.trim() !== "", "tenant_id must not be blank"),
  namespace: nameString(),
  context: InstanceContext.nullish().transform((value) => value ?? InstanceContext.parse({})),
  priority: z.enum(PRIORITIES).nullish().transform((value) => value ?? "Normal"),
  timezone: nameString().nullish().transform((value) => value ?? "UTC"),
  metadata: anyJson,
  next_fire_at: nullable(z.iso.datetime({ offset: true })),
  concurrency_key: nullable(nameString()),
  max_concurrency: nullable(z.int32().min(1)),
  idempotency_key: nullable(nameString()),
  // Absent: as the context's runtime says (false by default).
  dry_run: z.boolean().nullish(),
  dry_run_auto_approve: z.boolean().nullish(),
  budget: anyJson,
  // Bulkhead (wire-format O): a session of the request tenant; Orch8 ignores the field.
  session_id: nullable(z.guid().transform((id) => id.toLowerCase())),
});
type CreateInstanceRequest = z.output<typeof CreateInstanceRequest>;

export const createInstanceBody = shapedBody(CreateInstanceRequest, (body) => [body.tenant_id]);

export const batchBody = shapedBody(z.object({ instances: z.array(CreateInstanceRequest) }), (body) => body.instances.map((instance) => instance.tenant_id));

// Only valid names are remembered, so the set stays as small as the IANA database.
const knownZones = new Set(["UTC"]);
function isTimeZone(zone: string): boolean {
  if (knownZones.has(zone)) return true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
  } catch {
    return false;
  }
  knownZones.add(zone);
  return true;
}

/** The rules a well-shaped request must still meet (400, 413); `at` prefixes messages in a batch. */
function newInstance(request: CreateInstanceRequest, at = ""): NewInstance {
  if (request.namespace.trim() === "") throw new AppError("invalid_argument", `${at}namespace must not be blank`, ["namespace"]);
  if (!isTimeZone(request.timezone)) {
    throw new AppError("invalid_argument", `${at}unknown timezone ${JSON.stringify(request.timezone.slice(0, 64))}`, ["timezone"]);
  }
  const runtime = request.context.runtime;
  const dryRun = request.dry_run ?? runtime.dry_run;
  const context = {
    ...request.context,
    runtime: { ...runtime, dry_run: dryRun, dry_run_auto_approve: request.dry_run_auto_approve ?? runtime.dry_run_auto_approve },
  };
  checkSize("context", context, { prefix: at });
  return {
    namespace: request.namespace,
    sequenceId: request.sequence_id,
    priority: PRIORITIES.indexOf(request.priority),
    context,
    nextFireAt: request.next_fire_at === null ? null : new Date(request.next_fire_at),
    timezone: request.timezone,
    metadata: request.metadata,
    idempotencyKey: request.idempotency_key,
    concurrencyKey: request.concurrency_key,
    maxConcurrency: request.max_concurrency,
    budget: request.budget,
    dryRun,
    sessionId: request.session_id,
  };
}

/**
 * Each instance's sequence (and session, when it names one) must be the acting tenant's (a foreign
 * one is looked up in the tenant's own rows only, so it is simply not found, 404) and its
 * context.data must match the sequence's input_schema (422). Nothing is created unless every
 * instance passes.
 */
async function requireSequencesAndInput(store: TenantStore, instances: readonly NewInstance[], at: (index: number) => string): Promise<void> {
  const schemas = await store.sequenceInputSchemas([...new Set(instances.map((instance) => instance.sequenceId))]);
  if (instances.some((instance) => !schemas.has(instance.sequenceId))) throw notFound("sequence");
  const sessionIds = [...new Set(instances.flatMap((instance) => (instance.sessionId ? [instance.sessionId] : [])))];
  if (sessionIds.length > 0 && (await store.existingSessions(sessionIds)).size < sessionIds.length) throw notFound("session");
  instances.forEach((instance, index) => {
    const problem = inputProblem(schemas.get(instance.sequenceId), (instance.context as { data?: unknown }).data);
    if (problem) throw new AppError("unprocessable", `${at(index)}${problem}`, ["context", "data"]);
  });
}

export async function createInstance(context: RestContext<CreateInstanceRequest>): Promise<Response> {
  const store = requireStore(context);
  const instance = newInstance(context.body);
  await requireSequencesAndInput(store, [instance], () => "");
  const { id, deduplicated } = await store.createInstance(instance);
  return deduplicated ? json(200, { id, deduplicated: true }) : json(201, { id });
}

export async function createInstanceBatch(context: RestContext<{ instances: CreateInstanceRequest[] }>): Promise<Response> {
  const { instances } = context.body;
  if (instances.length === 0) return json(200, { count: 0 });
  if (instances.length > BATCH_LIMIT) {
    throw new AppError("invalid_argument", `batch has ${instances.length} instances, exceeding the maximum of ${BATCH_LIMIT}`, ["instances"]);
  }
  const store = requireStore(context);
  const rows = instances.map((request, index) => newInstance(request, `instances[${index}]: `));
  await requireSequencesAndInput(store, rows, (index) => `instances[${index}]: `);
  return json(201, { count: await store.createInstances(rows) });
}

export async function getInstance(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const instance = await (await storeOwning(context, "instance", id)).getInstance(id);
  if (!instance) throw notFound("instance");
  return json(200, wireInstance(instance));
}

export async function listBlockOutputs(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const outputs = await (await storeOwning(context, "instance", id)).listBlockOutputs(id);
  if (!outputs) throw notFound("instance");
  return json(200, outputs.map(wireBlockOutput));
}

/** V: GET /instances/{id}/children, the instance's sub-sequence children, oldest first. */
export async function listChildren(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const children = await (await storeOwning(context, "instance", id)).listChildInstances(id);
  if (!children) throw notFound("instance");
  return json(200, children.map(wireInstance));
}

export async function listInstances(context: RestContext<unknown>): Promise<Response> {
  const { items, hasMore } = await requireStore(context).listInstances(listFilter(context.url.searchParams));
  return json(200, { items: items.map(wireInstance), has_more: hasMore });
}

const UUID = z.guid();

/** Query parsing: malformed values are extractor rejections (400 plain text); an unknown state is the handler's 400. */
function listFilter(query: URLSearchParams): InstanceFilter {
  const reject = (message: string) => new Rejection(400, `Failed to deserialize query string: ${message}`);
  const count = (name: string, fallback: number, min: number) => countParam(query, name, fallback, min);

  const filter: InstanceFilter = {
    offset: count("offset", 0, 0),
    limit: Math.min(count("limit", LIST_LIMIT.default, 1), LIST_LIMIT.max),
  };
  const namespace = query.get("namespace");
  if (namespace) filter.namespace = namespace;
  const sequenceId = query.get("sequence_id");
  if (sequenceId) {
    if (!UUID.safeParse(sequenceId).success) throw reject("sequence_id: invalid UUID");
    filter.sequenceId = sequenceId.toLowerCase();
  }
  const states = query.getAll("state").flatMap((value) => value.split(",")).map((state) => state.trim()).filter(Boolean);
  if (states.length > 0) {
    const unknown = states.find((state) => !(INSTANCE_STATES as readonly string[]).includes(state));
    if (unknown !== undefined) throw new AppError("invalid_argument", `unknown state ${JSON.stringify(unknown.slice(0, 64))}`, ["state"]);
    filter.states = states as InstanceState[];
  }
  const metadata = [...query].filter(([key]) => key.startsWith("metadata.")).map(([key, value]) => [key.slice("metadata.".length), value] as const);
  if (metadata.length > 0) filter.metadata = metadata;
  return filter;
}
