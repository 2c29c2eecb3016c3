// GET /approvals (wire-format R): the steps of the tenant's waiting instances parked on an input
// gate, read off each instance's tree (server/approvals.ts, shared with the web app's Approvals
// page). Pages run over instances (most recently updated first), not items, and `total` counts
// the items of this page, as R says. Answering is a custom signal (`human_input:<block id>`) on
// POST /instances/{id}/signals.
import { approvalItems } from "../../approvals.ts";
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
  const items = waiting.flatMap(approvalItems).map((item) => ({
    instance_id: item.instanceId,
    tenant_id: store.tenantId,
    namespace: item.namespace,
    sequence_id: item.sequenceId,
    sequence_name: item.sequenceName,
    block_id: item.blockId,
    prompt: item.prompt,
    choices: item.choices,
    store_as: item.storeAs,
    timeout_seconds: item.timeoutMs === null ? null : Math.floor(item.timeoutMs / 1000),
    escalation_handler: item.escalationHandler,
    waiting_since: item.waitingSince,
    deadline: item.deadline,
    metadata: item.metadata,
    allow_comment: item.allowComment,
  }));
  return json(200, { items, total: items.length });
}
