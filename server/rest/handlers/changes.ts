// The tenant's change feed (wire-format S: GET /changes, GET /changes/stream) and an instance's
// audit entries (P: GET /instances/{id}/audit). The feed is always the acting tenant's: a
// `tenant_id` naming another tenant answers as a missing tenant, and an operator key must name
// the tenant in X-Tenant-Id (there is no cross-tenant feed).
import { AppError, notFound } from "../../../engine/errors.ts";
import { CHANGES_LIMIT, decodeChangeCursor, encodeChangeCursor, type ChangeCursor, type TenantStore } from "../../../engine/storage/index.ts";
import { openChangeStream } from "../../live/streams.ts";
import { countParam } from "../body.ts";
import { json } from "../http.ts";
import { requireTenantHeader, storeOwning, type RestContext } from "../route.ts";

const NO_SCOPE = "tenant scope is required";

function feedStore(context: RestContext<unknown>): TenantStore {
  const named = context.url.searchParams.get("tenant_id");
  if (named === "") throw new AppError("invalid_argument", NO_SCOPE, ["tenant_id"]);
  const store = requireTenantHeader(context, NO_SCOPE);
  if (named !== null && named !== store.tenantId) throw notFound("tenant");
  return store;
}

/** limit: 100 when absent, clamped to 1..500 (0 reads as 1). */
const limitOf = (query: URLSearchParams) => Math.min(CHANGES_LIMIT.max, Math.max(CHANGES_LIMIT.min, countParam(query, "limit", CHANGES_LIMIT.default, 0)));

function cursorOf(text: string | null): ChangeCursor | null {
  return text === null || text === "" ? null : decodeChangeCursor(text);
}

export async function listChanges(context: RestContext<unknown>): Promise<Response> {
  const store = feedStore(context);
  const query = context.url.searchParams;
  const page = await store.readChanges(cursorOf(query.get("cursor")), limitOf(query));
  return json(200, {
    changes: page.changes,
    ...(page.nextCursor ? { next_cursor: encodeChangeCursor(page.nextCursor) } : {}),
    has_more: page.hasMore,
  });
}

/** Resumes after the `cursor` query, else Last-Event-ID, else from the start. */
export async function streamChanges(context: RestContext<unknown>): Promise<Response> {
  const store = feedStore(context);
  const query = context.url.searchParams;
  const after = cursorOf(query.get("cursor") || context.request.headers.get("last-event-id"));
  return openChangeStream(context.services, store.tenantId, store, {
    after, limit: limitOf(query), signal: context.request.signal, log: context.log,
  });
}

export async function instanceAudit(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const entries = await (await storeOwning(context, "instance", id)).instanceAudit(id);
  if (!entries) throw notFound("instance");
  return json(200, entries);
}
