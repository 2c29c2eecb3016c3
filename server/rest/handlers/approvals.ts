// GET /approvals (wire-format R): the steps of the tenant's waiting instances parked on an input
// gate, read off each instance's tree. Pages run over instances (most recently updated first),
// not items, and `total` counts the items of this page, as R says. Answering is a custom signal
// (`human_input:<block id>`) on POST /instances/{id}/signals.
import { describeInstance } from "../../../engine/read-model/describe-instance.ts";
import { countParam } from "../body.ts";
import { json } from "../http.ts";
import { requireTenantHeader, type RestContext } from "../route.ts";

const PAGE = { default: 100, max: 1000 };

export async function listApprovals(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, "approvals belong to one tenant: name it (X-Tenant-Id)");
  const query = context.url.searchParams;
  const offset = countParam(query, "offset", 0, 0);
  const limit = Math.min(countParam(query, "limit", PAGE.default, 1), PAGE.max);
  const waiting = await store.listWaitingTreeSources({ namespace: query.get("namespace") || null, offset, limit });
  const items = waiting.flatMap((source) =>
    describeInstance(source.definition, source.cursor, source.instance).pendingInputs.map((gate) => {
      const waitingSince = gate.waitingSince ?? source.instance.updatedAt.toISOString();
      return {
        instance_id: source.instance.id,
        tenant_id: store.tenantId,
        namespace: source.namespace,
        sequence_id: source.sequenceId,
        sequence_name: source.sequenceName,
        block_id: gate.blockId,
        prompt: gate.prompt,
        choices: gate.choices.map(({ label, value }) => ({ label, value })),
        store_as: gate.storeAs,
        timeout_seconds: gate.timeoutMs === null ? null : Math.floor(gate.timeoutMs / 1000),
        escalation_handler: gate.escalationHandler,
        waiting_since: waitingSince,
        deadline: gate.timeoutMs === null ? null : new Date(Date.parse(waitingSince) + gate.timeoutMs).toISOString(),
        metadata: source.metadata,
        allow_comment: gate.allowComment,
      };
    }));
  return json(200, { items, total: items.length });
}
