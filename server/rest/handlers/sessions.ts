// Sessions over REST (wire-format O): create (201), read by id or by key, replace the data,
// set the state (cascading to the session's instances, Bulkhead's additive rule), and list the
// session's instances. A session of another tenant is a session this tenant does not have: the
// same 404. The `{tenant_id}` of by-key must be the request tenant: the dispatcher answers any
// other (however long) with this route's 404 before the handler runs, so O's 400 for a tenant
// over 128 characters is that 404 here.
import { z } from "zod";
import { AppError, notFound } from "../../../engine/errors.ts";
import { jsonSize, SIZE_LIMITS } from "../../../engine/size-limits.ts";
import { SESSION_STATES, type SessionRecord } from "../../../engine/storage/index.ts";
import { shapedBody, requiredJson } from "../body.ts";
import { empty, json } from "../http.ts";
import { requireTenantHeader, type RestContext } from "../route.ts";
import { wireInstance } from "../wire.ts";

const NO_TENANT = "sessions belong to one tenant: name it (X-Tenant-Id)";
const KEY_MAX = 512;

const CreateSession = z.object({
  tenant_id: z.string().refine((value) => value.trim() !== "", "tenant_id must not be blank"),
  session_key: z.string(),
  data: z.unknown().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullish(),
});
type CreateSession = z.output<typeof CreateSession>;
export const createSessionBody = shapedBody(CreateSession, (body) => [body.tenant_id]);

const SessionData = z.object({ data: requiredJson("data") });
export const sessionDataBody = shapedBody(SessionData, () => []);

const SessionStateBody = z.object({ state: z.enum(SESSION_STATES) });
export const sessionStateBody = shapedBody(SessionStateBody, () => []);

export function wireSession(tenantId: string, session: SessionRecord) {
  return {
    id: session.id,
    tenant_id: tenantId,
    session_key: session.sessionKey,
    data: session.data ?? null,
    state: session.state,
    created_at: session.createdAt.toISOString(),
    updated_at: session.updatedAt.toISOString(),
    ...(session.expiresAt ? { expires_at: session.expiresAt.toISOString() } : {}),
  };
}

const sessionNotFound = () => notFound("session");

function checkKey(key: string): void {
  if (key.length < 1 || key.length > KEY_MAX) throw new AppError("invalid_argument", `session_key must be between 1 and ${KEY_MAX} characters`, ["session_key"]);
}

export async function createSession(context: RestContext<CreateSession>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const { session_key: sessionKey, data, expires_at: expiresAt } = context.body;
  checkKey(sessionKey);
  checkDataSize(data ?? null);
  const created = await store.createSession({ sessionKey, data: data ?? null, expiresAt: expiresAt ? new Date(expiresAt) : null });
  if (!created) throw new AppError("already_exists", `session with key '${sessionKey}' already exists`);
  return json(201, wireSession(store.tenantId, created));
}

export async function getSession(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const session = await store.getSession(context.params.id!);
  if (!session) throw sessionNotFound();
  return json(200, wireSession(store.tenantId, session));
}

export async function getSessionByKey(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  checkKey(context.params.key!);
  const session = await store.getSessionByKey(context.params.key!);
  if (!session) throw sessionNotFound();
  return json(200, wireSession(store.tenantId, session));
}

/** O: the instance-context limit, with its own words. */
function checkDataSize(data: unknown): void {
  const size = jsonSize(data);
  if (size > SIZE_LIMITS.context) throw new AppError("payload_too_large", `session data is ${size} bytes, max is ${SIZE_LIMITS.context}`, ["data"]);
}

export async function replaceSessionData(context: RestContext<z.output<typeof SessionData>>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  checkDataSize(context.body.data);
  if (!(await store.replaceSessionData(context.params.id!, context.body.data))) throw sessionNotFound();
  return empty(200);
}

export async function setSessionState(context: RestContext<z.output<typeof SessionStateBody>>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  if (!(await store.setSessionState(context.params.id!, context.body.state))) throw sessionNotFound();
  return empty(200);
}

export async function listSessionInstances(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const id = context.params.id!;
  if (!(await store.getSession(id))) throw sessionNotFound();
  return json(200, (await store.listSessionInstances(id)).map(wireInstance));
}
