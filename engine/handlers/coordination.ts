// What the handlers that reach other instances (send_signal, query_instance) share. A missing, a
// foreign and (for send_signal) a terminal target give the same answer, word for word: no answer
// about a target that is not the caller's may confirm that it exists.
import { UUID_PATTERN } from "../model.ts";

export const TARGET_NOT_FOUND = "target instance not found";

/** params.instance_id as a lower-case UUID, or null when it is not one. */
export function targetId(params: Record<string, unknown>): string | null {
  const id = params.instance_id;
  return typeof id === "string" && UUID_PATTERN.test(id) ? id.toLowerCase() : null;
}
