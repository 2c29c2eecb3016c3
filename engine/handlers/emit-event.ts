// `emit_event` (D): a child instance in the caller's tenant, of the sequence a `trigger_slug` (one
// of the tenant's triggers) or a `sequence_name` names, looked up in the caller's namespace.
// `data` is its context.data, `meta` goes into its metadata with the parent's id. With
// `dedupe_key`, one child per key in the scope (`tenant`, or `parent`: this instance).
// The fan-out bounds of the resource ledger apply in the storage transaction: past a tenant's
// emits of this minute the step waits for the next minute (a snooze, no attempt used); past the
// children one instance may emit, the step fails for good (a runaway loop, not a busy minute).
import type { EventLimits } from "../storage/index.ts";
import { EmitEventParams } from "./coordination-params.ts";
import { failure, paramsObject, success, type Handler } from "./types.ts";

export const DEFAULT_EVENT_LIMITS: EventLimits = { perParent: 1_000, perTenantPerMinute: 6_000 };

export const createEmitEvent = (limits: EventLimits = DEFAULT_EVENT_LIMITS, onMinuteFull?: (tenantId: string) => void): Handler => async (input) => {
  const parsed = EmitEventParams.safeParse(paramsObject(input.params) ?? {});
  if (!parsed.success) return failure(false, parsed.error.issues[0]!.message);
  const { trigger_slug: slug, sequence_name: sequenceName, data, meta = {}, dedupe_key: key, dedupe_scope } = parsed.data;
  const scope = dedupe_scope === "parent" ? `parent:${input.instanceId}` : "tenant";
  const result = await input.instances.emitEvent({
    target: slug ? { triggerSlug: slug } : { sequenceName: sequenceName! }, data: data ?? {},
    metadata: {
      _trigger: slug ?? sequenceName, _trigger_type: "emit_event",
      _trigger_event: { ...meta, source: "emit_event", parent_instance_id: input.instanceId },
    },
    ...(key ? { dedupe: { scope, key } } : {}),
    limits,
  });
  if (!result) return failure(false, slug ? `trigger not found: ${slug} (or its sequence is not in this namespace)` : `sequence not found: ${sequenceName}`);
  if ("inputProblem" in result) return failure(false, result.inputProblem);
  if ("overLimit" in result) {
    if (result.overLimit === "per_tenant_per_minute") {
      onMinuteFull?.(input.tenantId);
      return { kind: "snooze", until: result.retryAt! };
    }
    return failure(false, `emit_event: this instance has emitted ${limits.perParent} events, the most one instance may emit`);
  }
  return success({ instance_id: result.instanceId, sequence_name: result.sequenceName, deduped: result.deduped });
};
