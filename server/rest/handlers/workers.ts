// External workers (E.15-E.22, wire-format H and T): poll, report under a fenced lease, and read.
// A tenant key acts for its own tenant only: a task of another tenant is looked up in the acting
// tenant's rows only, so it is simply not found. An operator key acts for the tenant it names;
// one that names none is the fleet (T): its poll spans every tenant, round robin, and it may
// complete, fail and heartbeat any tenant's task, the lease (worker_id + claim_epoch) fencing it
// exactly as for a tenant key. Every other worker route needs a tenant named.
import { z } from "zod";
import { AppError, notFound } from "../../../engine/errors.ts";
import { HANDLER_DESCRIPTORS } from "../../../engine/handlers/descriptors.ts";
import { NAME_MAX, nameString } from "../../../engine/sequence/schema.ts";
import { CredentialError, resolveCredentialRefs } from "../../../engine/secrets/credential-refs.ts";
import { checkSize, jsonSize, SIZE_LIMITS } from "../../../engine/size-limits.ts";
import { isObject } from "../../../engine/model.ts";
import {
  LOG_LIMITS, LOG_LINE_LEVELS, WORKER_TASK_STATES, type LogLevel, type ReportOutcome, type TenantStore, type WorkerTaskFilter, type WorkerTaskState,
} from "../../../engine/storage/index.ts";
import { countParam, requiredJson, shapedBody } from "../body.ts";
import { empty, json } from "../http.ts";
import { requireStore, storeOwning, type RestContext } from "../route.ts";
import { wireFleetTask, wireWorkerTask, wireWorkerTaskAttempt } from "../wire.ts";
import { WorkerSightings } from "../worker-sightings.ts";

/** The most tasks one poll claims (E.15); a larger limit is clamped. */
export const POLL_LIMIT = 1000;
const LIST_LIMIT = { default: 50, max: 1000 };

/** The one 409 of a fenced report (E.17-E.19). */
const leaseChanged = () => new AppError("conflict", "worker task lease changed");

const nonBlank = (name: string) => z.string().refine((value) => value.trim() !== "", `${name} must not be blank`);
/** u64 on the wire; JavaScript numbers are exact up to 2^53, far beyond any epoch or sequence. */
const counter = z.int().min(0);

/** Optional; a non-blank one must be the acting tenant (see bodyOf). */
const namedTenant = z.unknown().optional();

// A poll's names are kept in the worker's registration (GET /workers): bounded like every name.
const PollRequest = z.object({
  tenant_id: namedTenant,
  handler_name: nameString(),
  worker_id: nonBlank("worker_id").pipe(nameString()),
  limit: counter.nullish().transform((value) => Math.min(value ?? 1, POLL_LIMIT)),
  // Shown in GET /workers; tasks carry no worker version to match against.
  version: z.unknown().optional().refine((value) => typeof value !== "string" || value.length <= NAME_MAX, `must be at most ${NAME_MAX} characters`),
});
type PollRequest = z.output<typeof PollRequest>;

const QueuePollRequest = PollRequest.extend({ queue_name: nameString() });
type QueuePollRequest = z.output<typeof QueuePollRequest>;

const Lease = { tenant_id: namedTenant, worker_id: z.string(), claim_epoch: counter };
// `logs`: lines of the task's instance log (GET /instances/{id}/logs), written once the report is
// accepted; a string is an info line, `{level?, message}` one of its level.
const logs = z.array(z.unknown()).max(LOG_LIMITS.linesPerInstance).nullish();

function logLines(items: readonly unknown[] | null | undefined): { level: LogLevel; message: string }[] {
  return (items ?? []).map((item) => {
    const object = isObject(item) ? item : null;
    const level = (LOG_LINE_LEVELS as readonly unknown[]).includes(object?.level) ? (object!.level as LogLevel) : "info";
    const message = object ? (object.message ?? null) : item;
    return { level, message: typeof message === "string" ? message : (JSON.stringify(message) ?? "null") };
  });
}

const CompleteRequest = z.object({ ...Lease, output: requiredJson("output"), logs });
type CompleteRequest = z.output<typeof CompleteRequest>;

const FailRequest = z.object({
  ...Lease,
  message: z.string(),
  retryable: z.boolean().nullish().transform((value) => value ?? false),
  logs,
});
type FailRequest = z.output<typeof FailRequest>;

const HeartbeatRequest = z.object({
  ...Lease,
  // null reads as absent, as for an Option on the wire.
  checkpoint: z.unknown().optional(),
  checkpoint_seq: counter.nullish(),
});
type HeartbeatRequest = z.output<typeof HeartbeatRequest>;

/**
 * Worker bodies need not name a tenant: the key (or an operator's X-Tenant-Id) does. One that
 * names another tenant anyway gets the route's 404, as everywhere else.
 */
const bodyOf = <S extends z.ZodType>(schema: S) => shapedBody(schema, (body) => [(body as { tenant_id?: unknown }).tenant_id]);

export const pollBody = bodyOf(PollRequest);
export const queuePollBody = bodyOf(QueuePollRequest);
export const completeBody = bodyOf(CompleteRequest);
export const failBody = bodyOf(FailRequest);
export const heartbeatBody = bodyOf(HeartbeatRequest);

const sightings = new WorkerSightings();

async function poll(context: RestContext<PollRequest>, queueName: string | null): Promise<Response> {
  const { handler_name, worker_id, limit, version } = context.body;
  const request = { handlerName: handler_name, queueName, workerId: worker_id, limit };
  // T: polls say who asks for what, for GET /workers and GET /handlers.
  const registration = { workerId: worker_id, handlerName: handler_name, queueName, version: version === undefined || version === null ? null : String(version) };
  const sighted = sightings.due([context.store?.tenantId ?? "", worker_id, handler_name, queueName, registration.version]);
  if (context.store) {
    const store = context.store;
    if (sighted) await store.registerWorker(registration);
    const tasks = await context.store.pollWorkerTasks(request);
    return json(200, await Promise.all(tasks.map(async (task) => wireWorkerTask(await withCredentials(store, task)))));
  }
  // An operator key that named no tenant: the fleet.
  const { storage } = context.services;
  if (sighted) await storage.registerFleetWorker(registration);
  const { tasks, failed } = await storage.pollWorkerTasksOfEveryTenant(request);
  for (const { backendId, error } of failed) context.log.warn({ err: error, backend: backendId }, "fleet poll: backend left out");
  return json(200, await Promise.all(tasks.map(async (task) => wireFleetTask(await withCredentials(await storage.tenant(task.tenantId), task)))));
}

/**
 * The task as its claimant gets it: `credentials://` references in its params resolved (N).
 * Stored, listed and shown elsewhere, the params keep the references. A reference that no
 * longer resolves (the credential deleted or disabled since dispatch) is handed over as it is.
 */
async function withCredentials<T extends { params: unknown }>(store: TenantStore, task: T): Promise<T> {
  try {
    return { ...task, params: (await resolveCredentialRefs(task.params, (ids) => store.resolveCredentials(ids))).params };
  } catch (error) {
    if (error instanceof CredentialError) return task;
    throw error;
  }
}

export function pollTasks(context: RestContext<PollRequest>): Promise<Response> {
  return poll(context, null);
}

export function pollQueueTasks(context: RestContext<QueuePollRequest>): Promise<Response> {
  return poll(context, context.body.queue_name);
}

const lease = (body: { worker_id: string; claim_epoch: number }) => ({ workerId: body.worker_id, claimEpoch: body.claim_epoch });

/**
 * The store of the task a report names: the acting tenant's (a task of another tenant is then
 * not found), or for the fleet the task's owner, located on the backend its tenant is placed on.
 */
const taskStore = (context: RestContext<unknown>): Promise<TenantStore> => storeOwning(context, "worker_task", context.params.id!);

/**
 * The engine merges a completion's output into the instance's context.data, so it gets the
 * context's cap (413, nothing stored), worded as the other size refusals are (size-limits.ts).
 */
function checkOutputSize(output: unknown): void {
  const size = jsonSize(output);
  if (size > SIZE_LIMITS.context) {
    throw new AppError("payload_too_large", `output is ${size} bytes, exceeding the maximum of ${SIZE_LIMITS.context} bytes`, ["output"]);
  }
}

function answer(outcome: ReportOutcome): Response {
  if (outcome === "not_found") throw notFound("worker task");
  if (outcome === "stale") throw leaseChanged();
  return empty(200);
}

export async function completeTask(context: RestContext<CompleteRequest>): Promise<Response> {
  const { body } = context;
  checkOutputSize(body.output);
  const store = await taskStore(context);
  const response = answer(await store.completeWorkerTask(context.params.id!, lease(body), body.output));
  await store.appendTaskLogLines(context.params.id!, logLines(body.logs));
  return response;
}

export async function failTask(context: RestContext<FailRequest>): Promise<Response> {
  const { body } = context;
  const failure = { message: body.message, retryable: body.retryable };
  const store = await taskStore(context);
  const response = answer(await store.failWorkerTask(context.params.id!, lease(body), failure));
  await store.appendTaskLogLines(context.params.id!, logLines(body.logs));
  return response;
}

export async function heartbeatTask(context: RestContext<HeartbeatRequest>): Promise<Response> {
  const { body } = context;
  const checkpoint = body.checkpoint ?? null;
  let cas: { value: unknown; seq: number } | null = null;
  if (checkpoint !== null) {
    // The sequence is what makes a checkpoint write safe against a late duplicate: required.
    if (body.checkpoint_seq === null || body.checkpoint_seq === undefined) {
      throw new AppError("invalid_argument", "checkpoint requires checkpoint_seq", ["checkpoint_seq"]);
    }
    checkSize("checkpoint", checkpoint); // 413 over SIZE_LIMITS.checkpoint (E.19)
    cas = { value: checkpoint, seq: body.checkpoint_seq };
  }
  const outcome = await (await taskStore(context)).heartbeatWorkerTask(context.params.id!, lease(body), cas);
  switch (outcome.kind) {
    case "not_found":
      throw notFound("worker task");
    case "stale":
      throw leaseChanged();
    case "seq_mismatch":
      throw new AppError("conflict", `worker task checkpoint changed: checkpoint_seq is ${outcome.checkpointSeq}, not ${cas!.seq}`);
    case "ok":
      return json(200, { checkpoint_seq: outcome.checkpointSeq });
  }
}

export async function listTasks(context: RestContext<unknown>): Promise<Response> {
  const tasks = await requireStore(context).listWorkerTasks(listFilter(context.url.searchParams));
  return json(200, tasks.map(wireWorkerTask));
}

export async function taskStats(context: RestContext<unknown>): Promise<Response> {
  const { byState, byHandler, activeWorkers } = await requireStore(context).workerTaskStats();
  return json(200, { by_state: byState, by_handler: byHandler, active_workers: activeWorkers });
}

export async function listTaskAttempts(context: RestContext<unknown>): Promise<Response> {
  const attempts = await requireStore(context).listWorkerTaskAttempts(context.params.id!);
  if (!attempts) throw notFound("worker task");
  return json(200, attempts.map(wireWorkerTaskAttempt));
}

/** Query parsing: malformed numbers are extractor rejections (400 plain text); an unknown state is the handler's 400. */
function listFilter(query: URLSearchParams): WorkerTaskFilter {
  const count = (name: string, fallback: number, min: number) => countParam(query, name, fallback, min);

  const filter: WorkerTaskFilter = {
    offset: count("offset", 0, 0),
    limit: Math.min(count("limit", LIST_LIMIT.default, 1), LIST_LIMIT.max),
  };
  const states = query.getAll("state").flatMap((value) => value.split(",")).map((state) => state.trim()).filter(Boolean);
  if (states.length > 0) {
    const unknown = states.find((state) => !(WORKER_TASK_STATES as readonly string[]).includes(state));
    if (unknown !== undefined) throw new AppError("invalid_argument", `unknown state ${JSON.stringify(unknown.slice(0, 64))}`, ["state"]);
    filter.states = states as WorkerTaskState[];
  }
  for (const [name, key] of [["handler_name", "handlerName"], ["worker_id", "workerId"], ["queue_name", "queueName"]] as const) {
    const value = query.get(name);
    if (value) filter[key] = value;
  }
  return filter;
}

/** T: GET /workers, the tenant's workers by their polls, most recently seen first. */
export async function listWorkers(context: RestContext<unknown>): Promise<Response> {
  const store = requireStore(context);
  const query = context.url.searchParams;
  const aliveWithinSecs = countParam(query, "alive_within_secs", 60, 0);
  const includeStale = query.get("include_stale") === "true";
  const now = Date.now();
  const workers = await store.listWorkers(includeStale ? null : new Date(now - aliveWithinSecs * 1000));
  return json(200, workers.map((worker) => ({
    worker_id: worker.workerId,
    handlers: worker.handlers,
    queues: worker.queues,
    version: worker.version,
    last_seen_at: worker.lastSeenAt.toISOString(),
    alive: now - worker.lastSeenAt.getTime() <= aliveWithinSecs * 1000,
    in_flight: worker.inFlight,
  })));
}

/** T: GET /handlers, the built-in handlers and those the tenant's workers have polled for. */
export async function listHandlers(context: RestContext<unknown>): Promise<Response> {
  const store = requireStore(context);
  return json(200, { builtin: HANDLER_DESCRIPTORS.map((handler) => handler.name).sort(), external: await store.listPolledHandlers() });
}
