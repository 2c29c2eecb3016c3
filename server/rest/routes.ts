// The REST v1 route table (wire-format E), relative to /api/v1. Plain data: one row per route,
// read by the dispatcher (index.ts) and by tests that check every route taking an id.
import { getBreaker, listAllBreakers, listTenantBreakers, resetBreaker } from "./handlers/breakers.ts";
import { createInstance, createInstanceBatch, createInstanceBody, batchBody, getInstance, listBlockOutputs, listChildren, listInstances } from "./handlers/instances.ts";
import { live, ready } from "./handlers/health.ts";
import { batchActionBody, bulkStateBody, patchBulkReschedule, patchBulkState, postBatchAction, rescheduleBody } from "./handlers/bulk.ts";
import { listDeadLetters, resumeBody, resumeFrom, retry } from "./handlers/dead-letters.ts";
import { contextBody, patchContext, patchState, stateBody } from "./handlers/instance-state.ts";
import { createSequence, getSequence, sequenceBody } from "./handlers/sequences.ts";
import {
  deleteSequenceVersion, deprecate, getByName, listSequences, listVersions, migrate, migrateBody, setStatus, statusBody,
} from "./handlers/sequence-versions.ts";
import { sendSignal, signalBody } from "./handlers/signals.ts";
import { createTenant, tenantBody } from "./handlers/tenants.ts";
import { getExecutionTree } from "./handlers/tree.ts";
import { handleRestMetrics } from "../ops/prometheus.ts";
import { debugTemplate, debugTemplateBody } from "./handlers/debug-template.ts";
import { injectBlocks, injectBlocksBody } from "./handlers/inject-blocks.ts";
import { listInstanceLogs } from "./handlers/instance-logs.ts";
import {
  createSession, createSessionBody, getSession, getSessionByKey, listSessionInstances, replaceSessionData, sessionDataBody, sessionStateBody,
  setSessionState,
} from "./handlers/sessions.ts";
import { deleteTrigger, fireTrigger, getTrigger, listTriggers, methodNotAllowed, postTrigger, receiveWebhook, triggerBody } from "./handlers/triggers.ts";
import {
  completeBody, completeTask, failBody, failTask, heartbeatBody, heartbeatTask, listTaskAttempts, listTasks, pollBody, pollQueueTasks,
  listHandlers, listWorkers, pollTasks, queuePollBody, taskStats,
} from "./handlers/workers.ts";
import { streamInstance } from "./handlers/streams.ts";
import { instanceAudit, listChanges, streamChanges } from "./handlers/changes.ts";
import { cronCreateBody, cronMethodNotAllowed, cronNextFires, cronUpdateBody, createCron, deleteCron, getCron, listCron, updateCron } from "./handlers/cron.ts";
import { cronScheduleNotFound } from "../../engine/storage/index.ts";
import { credentialNotFound } from "../credentials.ts";
import { triggerNotFound } from "../triggers.ts";
import { listApprovals } from "./handlers/approvals.ts";
import { checkpointBody, latestCheckpoint, listCheckpoints, pruneBody, pruneCheckpoints, saveCheckpoint } from "./handlers/checkpoints.ts";
import { createCredential, credentialCreateBody, credentialPatchBody, deleteCredential, getCredential, listCredentials, patchCredential } from "./handlers/credentials.ts";
import {
  addPoolResource, createPool, deletePool, deletePoolResource, getPool, listPoolResources, listPools, poolCreateBody, poolResourceBody,
  poolResourcePatchBody, updatePoolResource,
} from "./handlers/pools.ts";
import { defineRoute, type Route } from "./route.ts";

const cronMissing = (params: Readonly<Record<string, string>>) => cronScheduleNotFound(params.id!);
const triggerMissing = (params: Readonly<Record<string, string>>) => triggerNotFound(params.slug!);
const credentialMissing = (params: Readonly<Record<string, string>>) => credentialNotFound(params.credential_id!);

export const ROUTES: readonly Route[] = [
  defineRoute({ method: "GET", path: "/health/live", access: "public", notFound: "route", handle: live }),
  defineRoute({ method: "GET", path: "/health/ready", access: "public", notFound: "route", handle: ready }),
  defineRoute({ method: "POST", path: "/sequences", access: "tenant", notFound: "tenant", body: sequenceBody, handle: createSequence }),
  defineRoute({ method: "GET", path: "/sequences/{id}", access: "tenant", notFound: "sequence", handle: getSequence }),
  // Versioning (wire-format Q); the literal paths win over `{id}` (matchRoute).
  defineRoute({ method: "GET", path: "/sequences", access: "tenant", notFound: "tenant", handle: listSequences }),
  defineRoute({ method: "GET", path: "/sequences/versions", access: "tenant", notFound: "tenant", handle: listVersions }),
  defineRoute({ method: "GET", path: "/sequences/by-name", access: "tenant", notFound: "tenant", handle: getByName }),
  defineRoute({ method: "POST", path: "/sequences/{id}/deprecate", access: "tenant", notFound: "sequence", handle: deprecate }),
  defineRoute({ method: "POST", path: "/sequences/migrate-instance", access: "tenant", notFound: "instance", body: migrateBody, handle: migrate }),
  defineRoute({ method: "POST", path: "/sequences/{id}/status", access: "tenant", notFound: "sequence", body: statusBody, handle: setStatus }),
  defineRoute({ method: "DELETE", path: "/sequences/{id}", access: "tenant", notFound: "sequence", handle: deleteSequenceVersion }),
  defineRoute({ method: "POST", path: "/instances", access: "tenant", notFound: "sequence", body: createInstanceBody, handle: createInstance }),
  defineRoute({ method: "POST", path: "/instances/batch", access: "tenant", notFound: "sequence", body: batchBody, handle: createInstanceBatch }),
  defineRoute({ method: "GET", path: "/instances", access: "tenant", notFound: "tenant", handle: listInstances }),
  defineRoute({ method: "GET", path: "/instances/{id}", access: "tenant", notFound: "instance", handle: getInstance }),
  defineRoute({ method: "GET", path: "/instances/{id}/outputs", access: "tenant", notFound: "instance", handle: listBlockOutputs }),
  defineRoute({ method: "GET", path: "/instances/{id}/children", access: "tenant", notFound: "instance", handle: listChildren }),
  defineRoute({ method: "GET", path: "/instances/{id}/logs", access: "tenant", notFound: "instance", handle: listInstanceLogs }),
  // V: blocks added to this instance only, applied by the engine as a queued signal.
  defineRoute({ method: "POST", path: "/instances/{id}/inject-blocks", access: "tenant", notFound: "instance", body: injectBlocksBody, handle: injectBlocks }),
  // Checkpoints (wire-format P).
  defineRoute({ method: "POST", path: "/instances/{id}/checkpoints", access: "tenant", notFound: "instance", body: checkpointBody, handle: saveCheckpoint }),
  defineRoute({ method: "GET", path: "/instances/{id}/checkpoints", access: "tenant", notFound: "instance", handle: listCheckpoints }),
  defineRoute({ method: "GET", path: "/instances/{id}/checkpoints/latest", access: "tenant", notFound: "instance", handle: latestCheckpoint }),
  defineRoute({ method: "POST", path: "/instances/{id}/checkpoints/prune", access: "tenant", notFound: "instance", body: pruneBody, handle: pruneCheckpoints }),
  defineRoute({ method: "POST", path: "/tenants", access: "operator", notFound: "route", body: tenantBody, handle: createTenant }),
  defineRoute({ method: "PATCH", path: "/instances/{id}/state", access: "tenant", notFound: "instance", body: stateBody, handle: patchState }),
  defineRoute({ method: "PATCH", path: "/instances/{id}/context", access: "tenant", notFound: "instance", body: contextBody, handle: patchContext }),
  defineRoute({ method: "POST", path: "/instances/{id}/signals", access: "tenant", notFound: "instance", body: signalBody, handle: sendSignal }),
  // Dead letters (wire-format J) and bulk operations (K). Literal paths win over `{id}` (matchRoute).
  defineRoute({ method: "GET", path: "/instances/dlq", access: "tenant", notFound: "tenant", handle: listDeadLetters }),
  defineRoute({ method: "POST", path: "/instances/{id}/retry", access: "tenant", notFound: "instance", handle: retry }),
  defineRoute({
    method: "POST", path: "/instances/{id}/resume-from/{block_id}", access: "tenant", notFound: "instance", body: resumeBody, handle: resumeFrom,
  }),
  defineRoute({ method: "PATCH", path: "/instances/bulk/state", access: "tenant", notFound: "tenant", body: bulkStateBody, handle: patchBulkState }),
  defineRoute({ method: "PATCH", path: "/instances/bulk/reschedule", access: "tenant", notFound: "tenant", body: rescheduleBody, handle: patchBulkReschedule }),
  defineRoute({ method: "POST", path: "/instances/batch-action", access: "tenant", notFound: "tenant", body: batchActionBody, handle: postBatchAction }),
  defineRoute({ method: "POST", path: "/workers/tasks/poll", access: "tenant", notFound: "tenant", body: pollBody, handle: pollTasks }),
  defineRoute({ method: "POST", path: "/workers/tasks/poll/queue", access: "tenant", notFound: "tenant", body: queuePollBody, handle: pollQueueTasks }),
  defineRoute({ method: "POST", path: "/workers/tasks/{id}/complete", access: "tenant", notFound: "worker task", body: completeBody, handle: completeTask }),
  defineRoute({ method: "POST", path: "/workers/tasks/{id}/fail", access: "tenant", notFound: "worker task", body: failBody, handle: failTask }),
  defineRoute({ method: "POST", path: "/workers/tasks/{id}/heartbeat", access: "tenant", notFound: "worker task", body: heartbeatBody, handle: heartbeatTask }),
  defineRoute({ method: "GET", path: "/workers", access: "tenant", notFound: "tenant", handle: listWorkers }),
  defineRoute({ method: "GET", path: "/handlers", access: "tenant", notFound: "tenant", handle: listHandlers }),
  defineRoute({ method: "GET", path: "/workers/tasks", access: "tenant", notFound: "tenant", handle: listTasks }),
  defineRoute({ method: "GET", path: "/workers/tasks/stats", access: "tenant", notFound: "tenant", handle: taskStats }),
  defineRoute({ method: "GET", path: "/workers/tasks/{id}/attempts", access: "tenant", notFound: "worker task", handle: listTaskAttempts }),
  defineRoute({ method: "GET", path: "/instances/{id}/tree", access: "tenant", notFound: "instance", handle: getExecutionTree }),
  defineRoute({ method: "GET", path: "/instances/{id}/stream", access: "tenant", notFound: "instance", handle: streamInstance }),
  // The instance audit log (P) and the tenant's change feed over it (S).
  defineRoute({ method: "GET", path: "/instances/{id}/audit", access: "tenant", notFound: "instance", handle: instanceAudit }),
  defineRoute({ method: "GET", path: "/changes", access: "tenant", notFound: "tenant", handle: listChanges }),
  defineRoute({ method: "GET", path: "/changes/stream", access: "tenant", notFound: "tenant", handle: streamChanges }),
  // Circuit breakers (wire-format I). A path naming another tenant answers as a missing tenant does.
  defineRoute({ method: "GET", path: "/circuit-breakers", access: "tenant", notFound: "tenant", handle: listAllBreakers }),
  defineRoute({ method: "GET", path: "/tenants/{tenant_id}/circuit-breakers", access: "tenant", notFound: "tenant", handle: listTenantBreakers }),
  defineRoute({ method: "GET", path: "/tenants/{tenant_id}/circuit-breakers/{handler}", access: "tenant", notFound: "circuit breaker", handle: getBreaker }),
  defineRoute({ method: "POST", path: "/tenants/{tenant_id}/circuit-breakers/{handler}/reset", access: "tenant", notFound: "tenant", handle: resetBreaker }),
  // Triggers and webhooks (wire-format L). Another tenant's slug answers as a slug nobody has.
  defineRoute({ method: "POST", path: "/triggers", access: "tenant", notFound: "tenant", body: triggerBody, handle: postTrigger }),
  defineRoute({ method: "GET", path: "/triggers", access: "tenant", notFound: "tenant", handle: listTriggers }),
  defineRoute({ method: "GET", path: "/triggers/{slug}", access: "tenant", notFound: "trigger", missing: triggerMissing, handle: getTrigger }),
  defineRoute({ method: "PUT", path: "/triggers/{slug}", access: "public", notFound: "route", handle: methodNotAllowed }),
  defineRoute({ method: "PATCH", path: "/triggers/{slug}", access: "public", notFound: "route", handle: methodNotAllowed }),
  defineRoute({ method: "POST", path: "/triggers/{slug}/fire", access: "tenant", notFound: "trigger", missing: triggerMissing, handle: fireTrigger }),
  defineRoute({ method: "DELETE", path: "/triggers/{slug}", access: "tenant", notFound: "trigger", missing: triggerMissing, handle: deleteTrigger }),
  defineRoute({ method: "POST", path: "/webhooks/{slug}", access: "public", notFound: "route", handle: receiveWebhook }),
  // Sessions (wire-format O). A state change cascades to the session's instances (Bulkhead).
  defineRoute({ method: "POST", path: "/sessions", access: "tenant", notFound: "tenant", body: createSessionBody, handle: createSession }),
  defineRoute({ method: "GET", path: "/sessions/{id}", access: "tenant", notFound: "session", handle: getSession }),
  defineRoute({ method: "GET", path: "/sessions/by-key/{tenant_id}/{key}", access: "tenant", notFound: "session", handle: getSessionByKey }),
  defineRoute({ method: "PATCH", path: "/sessions/{id}/data", access: "tenant", notFound: "session", body: sessionDataBody, handle: replaceSessionData }),
  defineRoute({ method: "PATCH", path: "/sessions/{id}/state", access: "tenant", notFound: "session", body: sessionStateBody, handle: setSessionState }),
  defineRoute({ method: "GET", path: "/sessions/{id}/instances", access: "tenant", notFound: "session", handle: listSessionInstances }),
  // V: a template resolved against a context given in the body (no stored data read).
  defineRoute({ method: "POST", path: "/debug/template", access: "tenant", notFound: "tenant", body: debugTemplateBody, handle: debugTemplate }),
  // V: Prometheus text for operator keys; a tenant key gets 403 (the series span every tenant).
  defineRoute({ method: "GET", path: "/metrics", access: "public", notFound: "route", handle: (context) => handleRestMetrics(context.request, context.services) }),
  // The approvals inbox (wire-format R): read-only; answers are custom signals.
  defineRoute({ method: "GET", path: "/approvals", access: "tenant", notFound: "tenant", handle: listApprovals }),
  // Credentials (wire-format N). A credential's 404 names it (`credential '<id>'`), for another tenant's too.
  defineRoute({ method: "POST", path: "/credentials", access: "tenant", notFound: "tenant", body: credentialCreateBody, handle: createCredential }),
  defineRoute({ method: "GET", path: "/credentials", access: "tenant", notFound: "tenant", handle: listCredentials }),
  defineRoute({ method: "GET", path: "/credentials/{credential_id}", access: "tenant", notFound: "credential", missing: credentialMissing, handle: getCredential }),
  defineRoute({
    method: "PATCH", path: "/credentials/{credential_id}", access: "tenant", notFound: "credential", missing: credentialMissing, body: credentialPatchBody,
    handle: patchCredential,
  }),
  defineRoute({ method: "DELETE", path: "/credentials/{credential_id}", access: "tenant", notFound: "credential", missing: credentialMissing, handle: deleteCredential }),
  // Cron schedules (wire-format M). A schedule's 404 names it (`cron_schedule <id>`), for another tenant's too.
  defineRoute({ method: "POST", path: "/cron", access: "tenant", notFound: "sequence", body: cronCreateBody, handle: createCron }),
  defineRoute({ method: "GET", path: "/cron", access: "tenant", notFound: "tenant", handle: listCron }),
  defineRoute({ method: "GET", path: "/cron/{id}", access: "tenant", notFound: "cron schedule", missing: cronMissing, handle: getCron }),
  defineRoute({ method: "GET", path: "/cron/{id}/next-fires", access: "tenant", notFound: "cron schedule", missing: cronMissing, handle: cronNextFires }),
  defineRoute({ method: "PUT", path: "/cron/{id}", access: "tenant", notFound: "cron schedule", missing: cronMissing, body: cronUpdateBody, handle: updateCron }),
  // M: PATCH is not routed, and says so (405), rather than reading as a path that does not exist.
  defineRoute({ method: "PATCH", path: "/cron/{id}", access: "tenant", notFound: "cron schedule", missing: cronMissing, handle: cronMethodNotAllowed }),
  defineRoute({ method: "DELETE", path: "/cron/{id}", access: "tenant", notFound: "cron schedule", missing: cronMissing, handle: deleteCron }),
  // Resource pools (wire-format U), CRUD only. `{pool_id}` and `{resource_id}` are UUIDs like `{id}`
  // (index.ts). Every resource route looks for the pool first, so its 404 for a tenant the
  // request may not act for is the missing pool's. The DELETEs come last (the tenancy matrix
  // serves the caller's own objects in this order).
  defineRoute({ method: "POST", path: "/pools", access: "tenant", notFound: "tenant", body: poolCreateBody, handle: createPool }),
  defineRoute({ method: "GET", path: "/pools", access: "tenant", notFound: "tenant", handle: listPools }),
  defineRoute({ method: "GET", path: "/pools/{id}", access: "tenant", notFound: "pool", handle: getPool }),
  defineRoute({ method: "GET", path: "/pools/{pool_id}/resources", access: "tenant", notFound: "pool", handle: listPoolResources }),
  defineRoute({ method: "POST", path: "/pools/{pool_id}/resources", access: "tenant", notFound: "pool", body: poolResourceBody, handle: addPoolResource }),
  defineRoute({
    method: "PUT", path: "/pools/{pool_id}/resources/{resource_id}", access: "tenant", notFound: "pool", body: poolResourcePatchBody,
    handle: updatePoolResource,
  }),
  defineRoute({ method: "DELETE", path: "/pools/{pool_id}/resources/{resource_id}", access: "tenant", notFound: "pool", handle: deletePoolResource }),
  defineRoute({ method: "DELETE", path: "/pools/{id}", access: "tenant", notFound: "pool", handle: deletePool }),
];
