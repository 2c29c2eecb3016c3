// `query_instance` (D): reads another instance of the caller's tenant. Params: { instance_id }.
// Output: { found: false }, or its state, context and times. A foreign id is not found.
import { isTerminal } from "../model.ts";
import { QueryInstanceParams } from "./coordination-params.ts";
import { paramsObject, success, type Handler } from "./types.ts";

export const queryInstance: Handler = async (input) => {
  const parsed = QueryInstanceParams.safeParse(paramsObject(input.params) ?? {});
  // Any unusable id reads as a missing instance: never an error that could tell ids apart.
  const target = parsed.success ? parsed.data.instance_id.toLowerCase() : null;
  const found = target ? await input.instances.getInstance(target) : null;
  if (!found) return success({ found: false });
  return success({
    found: true, state: found.state, context: found.context, started_at: found.createdAt.toISOString(),
    completed_at: isTerminal(found.state) ? found.updatedAt.toISOString() : null, current_node: null,
  });
};
