// `query_instance` (D): reads another instance of the caller's tenant. Params: { instance_id }.
// Output: { found: false }, or its state, context, times and the step it is at. A foreign id is
// not found; an id that is not a UUID at all is the step's own mistake, and fails it for good
// (that tells nothing about which ids exist).
import { isTerminal } from "../model.ts";
import { QueryInstanceParams } from "./coordination-params.ts";
import { failure, paramsObject, success, type Handler } from "./types.ts";

export const queryInstance: Handler = async (input) => {
  const parsed = QueryInstanceParams.safeParse(paramsObject(input.params) ?? {});
  if (!parsed.success) return failure(false, "query_instance needs instance_id, a UUID");
  const found = await input.instances.getInstance(parsed.data.instance_id.toLowerCase());
  if (!found) return success({ found: false });
  const runtime = (found.context as { runtime?: { current_step?: unknown } } | null)?.runtime;
  return success({
    found: true, state: found.state, context: found.context, started_at: found.createdAt.toISOString(),
    completed_at: isTerminal(found.state) ? found.updatedAt.toISOString() : null,
    current_node: !isTerminal(found.state) && typeof runtime?.current_step === "string" ? runtime.current_step : null,
  });
};
