// Sequence versioning (wire-format Q): the live versions of a name, one by name, deprecate and
// delete. Another tenant's id or name answers as one nobody has.
import { AppError, notFound } from "../../../engine/errors.ts";
import { describeTextProblem, unstorableText } from "../../../engine/text-hygiene.ts";
import { deleteVersion } from "../../sequences.ts";
import { z } from "zod";
import { SEQUENCE_STATUSES } from "../../../engine/sequence/schema.ts";
import { STATUS_TRANSITIONS } from "../../../engine/storage/index.ts";
import { countParam, shapedBody } from "../body.ts";
import { empty, json, Rejection } from "../http.ts";
import { requireTenantHeader, type RestContext } from "../route.ts";
import { wireSequence } from "../wire.ts";

const NO_TENANT = "sequence versions are read for one tenant: name it (X-Tenant-Id)";

/**
 * A required query field; missing or empty is serde's extractor rejection (400, plain text), and
 * text PostgreSQL cannot store is a 400 naming the field, before any query.
 */
function required(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null || value === "") throw new Rejection(400, `Failed to deserialize query string: missing field \`${name}\``);
  const problem = unstorableText(value, name);
  if (problem) throw new AppError("invalid_argument", describeTextProblem(problem));
  return value;
}

const PAGE = { default: 200, max: 1000 };

/** GET /sequences: every version of the tenant's, deprecated ones too, a page at a time. */
export async function listSequences(context: RestContext<unknown>): Promise<Response> {
  const query = context.url.searchParams;
  const page = { offset: countParam(query, "offset", 0, 0), limit: Math.min(countParam(query, "limit", PAGE.default, 1), PAGE.max) };
  const namespace = query.get("namespace") ? required(query, "namespace") : null;
  const store = requireTenantHeader(context, NO_TENANT);
  const { items, hasMore } = await store.listSequencePage({ namespace, ...page });
  return json(200, { items: items.map((sequence) => wireSequence(store.tenantId, sequence)), has_more: hasMore });
}

/** GET /sequences/versions: the name's versions that are not deprecated, highest first. */
export async function listVersions(context: RestContext<unknown>): Promise<Response> {
  const query = context.url.searchParams;
  const [namespace, name] = [required(query, "namespace"), required(query, "name")];
  const store = requireTenantHeader(context, NO_TENANT);
  const versions = await store.listLiveVersions(namespace, name);
  return json(200, versions.map((sequence) => wireSequence(store.tenantId, sequence)));
}

/** GET /sequences/by-name: that version (even deprecated), or the latest not deprecated. */
export async function getByName(context: RestContext<unknown>): Promise<Response> {
  const query = context.url.searchParams;
  const [namespace, name] = [required(query, "namespace"), required(query, "name")];
  const version = query.get("version") ? countParam(query, "version", 0, 0) : null;
  const store = requireTenantHeader(context, NO_TENANT);
  const sequence = await store.sequenceByName(namespace, name, version);
  if (!sequence) throw new AppError("not_found", `sequence ${name}`);
  return json(200, wireSequence(store.tenantId, sequence));
}

/** POST /sequences/{id}/deprecate: idempotent; the body is ignored. */
export async function deprecate(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  if (!(await store.deprecateSequence(context.params.id!))) throw notFound("sequence");
  return empty(204);
}

const StatusBody = z.object({ status: z.enum(SEQUENCE_STATUSES) });
type StatusBody = z.output<typeof StatusBody>;

export const statusBody = shapedBody(StatusBody, () => []);

/** POST /sequences/{id}/status: along STATUS_TRANSITIONS only; unpublishing also deprecates. */
export async function setStatus(context: RestContext<StatusBody>): Promise<Response> {
  const to = context.body.status;
  const outcome = await requireTenantHeader(context, NO_TENANT).setSequenceStatus(context.params.id!, to);
  if (outcome.changed) return empty(204);
  if (outcome.missing) throw notFound("sequence");
  const allowed = STATUS_TRANSITIONS[outcome.from] ?? [];
  throw new AppError("invalid_argument", `invalid transition: ${outcome.from} → ${to} (allowed: ${allowed.length > 0 ? allowed.join(", ") : "none"})`);
}

const MigrateBody = z.object({ instance_id: z.guid(), target_sequence_id: z.guid() });
type MigrateBody = z.output<typeof MigrateBody>;

export const migrateBody = shapedBody(MigrateBody, () => []);

/** POST /sequences/migrate-instance: a non-terminal instance runs on from another version. */
export async function migrate(context: RestContext<MigrateBody>): Promise<Response> {
  const [instanceId, targetId] = [context.body.instance_id.toLowerCase(), context.body.target_sequence_id.toLowerCase()];
  const outcome = await requireTenantHeader(context, NO_TENANT).migrateInstance(instanceId, targetId);
  if (outcome.migrated) return json(200, { migrated: true, instance_id: instanceId, from_sequence_id: outcome.fromSequenceId, to_sequence_id: targetId });
  if ("missing" in outcome) throw notFound(outcome.missing);
  throw new AppError("invalid_argument", `instance ${instanceId} is in terminal state ${outcome.terminal}`);
}

/** DELETE /sequences/{id}: 409 while active instances use the version. */
export async function deleteSequenceVersion(context: RestContext<unknown>): Promise<Response> {
  await deleteVersion(requireTenantHeader(context, NO_TENANT), context.params.id!);
  return empty(204);
}
