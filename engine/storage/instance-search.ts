// The instance list's search as SQL: the branches each kind adds to the list's page (see
// instance-pages.ts), each one served by an index that leads with the tenant, so a search reads
// only the searching tenant's entries and never another tenant's:
// - a whole id: the primary key, and `tenant_id = $1`, so another tenant's id finds nothing, as
//   a random one does.
// - a short id's start: a range of task_instances_tenant_id_short_id_idx, on
//   (tenant_id, right(id::text, 12)), the id's random last group (engine/short-id.ts).
// - a context field: task_instances_search_data_idx, a GIN index (jsonb_path_ops) on the
//   instance's context.data wrapped in an object keyed by its tenant id. jsonb_path_ops keys each
//   value by a hash of its whole path, so the tenant is part of every key: a value that thousands
//   of another tenant's rows hold adds nothing to this tenant's lookup.
// Both search indexes leave out running rows (cheap commits); those are read through the state index.
// Migration 20261202140000_instance_search_indexes says why these indexes and what they cost.
import { AppError } from "../errors.ts";
import { contextPathKeys, type InstanceSearch } from "../instance-search.ts";
import { SHORT_ID_LENGTH } from "../short-id.ts";
import type { TenantId } from "./ids.ts";
import type { InstanceState } from "./instances.ts";

/** The index expressions, exactly as the migration wrote them (the planner matches them by text). */
const SHORT_ID = `(right(id::text, ${SHORT_ID_LENGTH}) COLLATE "C")`;
const SEARCH_DOCUMENT = `jsonb_set('{}'::jsonb, ARRAY[tenant_id], context -> 'data')`;

/**
 * The WHERE clauses of each branch a search reads (the page merges them): one for a whole id;
 * for the other kinds one over the rows not running, through its partial index, and one over the
 * running rows, which the indexes leave out (see the migration) and which are few: the
 * in-flight limits bound them. `states` is the list's state filter (empty: every state).
 */
export function searchArms(
  tenantId: TenantId, search: InstanceSearch, states: readonly InstanceState[], param: (value: unknown) => string,
): string[][] {
  const stateIn = (some: readonly InstanceState[]) => (some.length === 0 ? [] : [`state = ANY(${param(some)}::text[])`]);
  if (search.kind === "id") return [[`id = ${param(search.id)}::uuid`, ...stateIn(states)]];
  const settled = states.filter((state) => state !== "running");
  const arms: string[][] = [];
  if (states.length === 0 || settled.length > 0) arms.push([NOT_RUNNING, ...stateIn(settled), indexedPredicate(tenantId, search, param)]);
  if (states.length === 0 || states.includes("running")) arms.push(["state = 'running'", runningPredicate(search, param)]);
  return arms;
}

/** The indexes' WHERE, written as they have it, so the planner sees the branch implies it. */
const NOT_RUNNING = "state <> 'running'";

function indexedPredicate(tenantId: TenantId, search: Exclude<InstanceSearch, { kind: "id" }>, param: (value: unknown) => string): string {
  if (search.kind === "shortId") return shortIdRange(search.prefix, param);
  return `${SEARCH_DOCUMENT} @> ${param(JSON.stringify({ [tenantId]: contextField(search) }))}::jsonb`;
}

/** The same test on a running row, read through the state index (no search index holds it). */
function runningPredicate(search: Exclude<InstanceSearch, { kind: "id" }>, param: (value: unknown) => string): string {
  if (search.kind === "shortId") return shortIdRange(search.prefix, param);
  return `context -> 'data' @> ${param(JSON.stringify(contextField(search)))}::jsonb`;
}

function shortIdRange(prefix: string, param: (value: unknown) => string): string {
  const lower = prefix.toLowerCase();
  if (!/^[0-9a-f]{1,12}$/.test(lower)) throw new AppError("invalid_argument", "a short id is hex digits", ["search", "prefix"]);
  // Every hex text that starts with the prefix sorts (in "C") from the prefix to just before
  // prefix || 'g': one range of the index.
  return `${SHORT_ID} >= ${param(lower)} AND ${SHORT_ID} < ${param(`${lower}g`)}`;
}

/** `{ a: { b: value } }` for data.a.b = value: the one field, as containment in context.data. */
function contextField(search: Extract<InstanceSearch, { kind: "context" }>): unknown {
  const keys = contextPathKeys(search.path);
  if (keys.length === 0) throw new AppError("invalid_argument", "a context path names at least one key under data", ["search", "path"]);
  return keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), search.value);
}
