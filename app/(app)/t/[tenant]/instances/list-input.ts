// The instance list's filters as the address holds them, and the list's input: shared by the page
// (which reads the first page on the server) and the list (which asks for the rest).
import { parseInstanceSearch, type InstanceSearch } from "../../../../../engine/instance-search.ts";
import { INSTANCE_STATES, UUID_PATTERN, type InstanceState } from "../../../../../engine/model.ts";

const PAGE_SIZE = 50;

/** The filters as the address holds them, so a reload, a shared link or Back keeps them. */
export interface Filters {
  states: InstanceState[];
  sequence: string;
  /** `<input type="datetime-local">` values: the reader's local time. */
  after: string;
  before: string;
  /** The search box's text (engine/instance-search.ts reads it). */
  q: string;
}

export function readFilters(params: URLSearchParams): Filters {
  const states = (params.get("state") ?? "").split(",").filter((s): s is InstanceState => (INSTANCE_STATES as readonly string[]).includes(s));
  const sequence = params.get("sequence") ?? "";
  return {
    states, sequence: UUID_PATTERN.test(sequence) ? sequence : "", after: params.get("after") ?? "", before: params.get("before") ?? "",
    q: params.get("q") ?? "",
  };
}

export function writeFilters(filters: Filters): string {
  const params = new URLSearchParams();
  if (filters.states.length > 0) params.set("state", filters.states.join(","));
  if (filters.sequence) params.set("sequence", filters.sequence);
  if (filters.after) params.set("after", filters.after);
  if (filters.before) params.set("before", filters.before);
  if (filters.q.trim()) params.set("q", filters.q.trim());
  return params.toString();
}

/** A local date-time as an instant, or undefined when empty or not a date. */
function instant(local: string): string | undefined {
  const ms = local ? new Date(local).getTime() : NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** The list's input for the filters (`search` parsed from `filters.q`). */
export function listInput(tenantId: string, filters: Filters, search: InstanceSearch | undefined) {
  return {
    tenantId,
    limit: PAGE_SIZE,
    states: filters.states.length > 0 ? filters.states : undefined,
    sequenceId: filters.sequence || undefined,
    createdAfter: instant(filters.after),
    createdBefore: instant(filters.before),
    search,
  };
}

/**
 * The first page's input as the server can tell it from the address, or null: times are the
 * reader's local time, which only the browser knows, and a search that does not parse asks nothing.
 */
export function serverListInput(tenantId: string, params: URLSearchParams) {
  const filters = readFilters(params);
  if (filters.after || filters.before) return null;
  const parsed = parseInstanceSearch(filters.q);
  if (parsed !== null && "error" in parsed) return null;
  return listInput(tenantId, filters, parsed?.search);
}
