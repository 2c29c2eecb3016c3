// `emit_event` (D): a child instance in the caller's tenant, of the sequence a `trigger_slug` (one
// of the tenant's triggers) or a `sequence_name` names, looked up in the caller's namespace.
// `data` is its context.data, `meta` goes into its metadata with the parent's id. With
// `dedupe_key`, one child per key in the scope (`tenant`, or `parent`: this instance).
import { isObject } from "../model.ts";
import { failure, paramsObject, success, type Handler } from "./types.ts";

export const emitEvent: Handler = async (input) => {
  const params = paramsObject(input.params) ?? {};
  const slug = typeof params.trigger_slug === "string" && params.trigger_slug !== "" ? params.trigger_slug : null;
  const sequenceName = typeof params.sequence_name === "string" && params.sequence_name !== "" ? params.sequence_name : null;
  if (!slug && !sequenceName) return failure(false, "emit_event needs trigger_slug (or sequence_name)");
  if (params.dedupe_scope !== undefined && params.dedupe_scope !== "parent" && params.dedupe_scope !== "tenant") {
    return failure(false, "dedupe_scope must be \"parent\" or \"tenant\"");
  }
  const key = typeof params.dedupe_key === "string" && params.dedupe_key !== "" ? params.dedupe_key : null;
  const scope = params.dedupe_scope === "parent" ? `parent:${input.instanceId}` : "tenant";
  const meta = isObject(params.meta) ? params.meta : {};
  const result = await input.instances.emitEvent({
    target: slug ? { triggerSlug: slug } : { sequenceName: sequenceName! }, data: params.data ?? {},
    metadata: {
      _trigger: slug ?? sequenceName, _trigger_type: "emit_event",
      _trigger_event: { ...meta, source: "emit_event", parent_instance_id: input.instanceId },
    },
    ...(key ? { dedupe: { scope, key } } : {}),
  });
  if (!result) return failure(false, slug ? `trigger not found: ${slug} (or its sequence is not in this namespace)` : `sequence not found: ${sequenceName}`);
  if ("inputProblem" in result) return failure(false, result.inputProblem);
  return success({ instance_id: result.instanceId, sequence_name: result.sequenceName, deduped: result.deduped });
};
