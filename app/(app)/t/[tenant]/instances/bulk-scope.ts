// What a bulk action on the instance list acts on: the list's state and sequence filters, narrowed
// to the states the action can change, so a dry run counts only instances it would really touch.
import { TERMINAL_STATES, type InstanceState } from "../../../../../engine/model.ts";
import { INSTANCE_STATES } from "./instance-ui";

export type BulkKind = "cancel" | "retry" | "reschedule";

/** The instances.batchAction / bulkReschedule Filter, in the parts the list can express. */
export interface BulkFilter {
  states: InstanceState[];
  sequenceId?: string;
}

/** One call acts on at most this many (batchAction's limit); a larger selection takes several. */
export const BULK_CALL_LIMIT = 10_000;

const ACTS_ON: Record<BulkKind, readonly InstanceState[]> = {
  // Terminal instances are skipped by a cancel; leaving them out keeps the count honest and
  // keeps thousands of them from filling a call's selection with nothing to do.
  cancel: INSTANCE_STATES.filter((s) => !(TERMINAL_STATES as readonly string[]).includes(s)),
  retry: ["failed"],
  reschedule: ["scheduled"],
};

export const VERB: Record<BulkKind, { now: string; doing: string; done: string }> = {
  cancel: { now: "cancel", doing: "Cancelling", done: "cancelled" },
  retry: { now: "retry", doing: "Retrying", done: "retried" },
  reschedule: { now: "reschedule", doing: "Rescheduling", done: "rescheduled" },
};

/**
 * Why the list's filters cannot be a bulk filter, or null. The bulk Filter has no text search or
 * creation dates: acting anyway would touch more than the list shows.
 */
export function bulkBlockedReason(filters: { q: string; after: string; before: string }): string | null {
  const extra = [filters.q.trim() && "the search", (filters.after || filters.before) && "the created dates"].filter(Boolean);
  if (extra.length === 0) return null;
  return `Bulk actions follow the state and sequence filters only. Clear ${extra.join(" and ")} to use them.`;
}

/** The filter for `kind` within the list's filters, or null when none of its states can be acted on. */
export function actionFilter(kind: BulkKind, list: { states: readonly InstanceState[]; sequence: string }): BulkFilter | null {
  const states = list.states.length > 0 ? ACTS_ON[kind].filter((s) => list.states.includes(s)) : [...ACTS_ON[kind]];
  if (states.length === 0) return null;
  return { states, ...(list.sequence ? { sequenceId: list.sequence } : {}) };
}

export const sameFilter = (a: BulkFilter | null, b: BulkFilter | null) => JSON.stringify(a) === JSON.stringify(b);
