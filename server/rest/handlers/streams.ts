// GET /instances/{id}/stream (wire-format S): the instance's live stream. The instance must be the
// acting tenant's (a foreign id is 404 like a missing one), checked before the stream opens; an
// operator key names the tenant in X-Tenant-Id, as on every route of J-V.
import { notFound } from "../../../engine/errors.ts";
import { pollMsOf } from "../../live/instance-stream.ts";
import { openInstanceStream } from "../../live/streams.ts";
import { requireTenantHeader, type RestContext } from "../route.ts";

export async function streamInstance(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const store = requireTenantHeader(context, "an operator key must name the tenant (X-Tenant-Id header)");
  if (!(await store.pollLive(id, null, 0))) throw notFound("instance");
  return openInstanceStream(context.services, store.tenantId, store, id, {
    pollMs: pollMsOf(context.url.searchParams.get("poll_ms")), signal: context.request.signal, log: context.log,
    lastEventId: context.request.headers.get("last-event-id"),
  });
}
