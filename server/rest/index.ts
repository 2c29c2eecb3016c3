// The REST v1 dispatcher: one request in, one response out, in the order a request meets it:
// route → API key (401) → request rate (429) → path parameters and query text (400) → body (415/413/400/422)
// → acting tenant (404) → handler. Every error, whatever its origin, is answered once, by
// errorResponse. The request rate is the key's token bucket for the tenant it acts for
// (server/request-rate.ts): a tenant key's is known once the key is, so an over-limit tenant key
// is refused before its body is read; an operator key's is taken once the tenant it names is
// known (no tenant: the key's own bucket), before the tenant's store is routed.
import { AppError, isAppError, notFound } from "../../engine/errors.ts";
import { createLogger, type Logger } from "../../engine/logger.ts";
import { UUID_PATTERN } from "../../engine/model.ts";
import { tenantMoving, type TenantStore } from "../../engine/storage/index.ts";
import type { Services } from "../services.ts";
import { admitRequest, retryAfterOf } from "../request-rate.ts";
import { actingTenant, authenticate, keyActor, namedTenants, type Principal } from "./auth.ts";
import { readJson } from "./body.ts";
import { describeTextProblem, unstorableText } from "../../engine/text-hygiene.ts";
import { errorResponse, Rejection } from "./http.ts";
import { isWrite, routeNotFound, type Route } from "./route.ts";
import { ROUTES } from "./routes.ts";

export const API_PREFIX = "/api/v1";

const loggers = new WeakMap<Services, Logger>();
function loggerFor(services: Services): Logger {
  let log = loggers.get(services);
  if (!log) loggers.set(services, (log = createLogger("rest", services.config.BULKHEAD_LOG_LEVEL)));
  return log;
}

/**
 * The route serving `method` and `pathname`, with its raw (still encoded) path parameters. Where
 * several match, the one with the fewest parameters wins: a literal segment beats a parameter.
 */
export function matchRoute(method: string, pathname: string): { route: Route; params: Record<string, string> } | null {
  if (!pathname.startsWith(`${API_PREFIX}/`)) return null;
  const segments = pathname.slice(API_PREFIX.length).split("/");
  let best: { route: Route; params: Record<string, string> } | null = null;
  for (const route of ROUTES) {
    const pattern = route.path.split("/");
    if (route.method !== method || pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = pattern.every((part, index) => {
      const segment = segments[index]!;
      if (!(part.startsWith("{") && part.endsWith("}"))) return part === segment;
      params[part.slice(1, -1)] = segment;
      return segment !== "";
    });
    if (matches && (!best || Object.keys(params).length < Object.keys(best.params).length)) best = { route, params };
  }
  return best;
}

/**
 * Path parameters that are UUIDs: malformed is the framework's plain-text 400 (wire-format:
 * "malformed path"), as Orch8's `Path<Uuid>` extractors answer, before any tenant or row is looked
 * at. U's `{pool_id}` and `{resource_id}` are UUIDs there, so they answer like `/pools/{id}`.
 */
export const UUID_PARAMETERS: ReadonlySet<string> = new Set(["id", "pool_id", "resource_id"]);

/** Decodes the path parameters; UUID_PARAMETERS must be UUIDs, lower-cased as PostgreSQL prints them. */
function decodeParams(raw: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      throw new Rejection(400, `Invalid URL: cannot decode \`${name}\``);
    }
    if (UUID_PARAMETERS.has(name)) {
      if (!UUID_PATTERN.test(decoded)) throw new Rejection(400, `Invalid URL: \`${name}\` is not a UUID`);
      decoded = decoded.toLowerCase();
    }
    params[name] = decoded;
  }
  return params;
}

/**
 * Path parameters and query values PostgreSQL could not store (NUL, a lone surrogate) are a 400
 * naming the parameter, before any handler sends one to the database (where it would be a 500).
 */
function checkText(params: Record<string, string>, url: URL): void {
  for (const [name, value] of [...Object.entries(params), ...url.searchParams]) {
    const problem = unstorableText(value, name);
    if (problem) throw new AppError("invalid_argument", describeTextProblem(problem));
  }
}

/** Whether the request carries a body at all: a content type, or bytes announced. */
function hasBody(request: Request): boolean {
  const length = request.headers.get("content-length");
  return request.headers.has("content-type") || (length !== null && length !== "0") || request.headers.has("transfer-encoding");
}

/** One request of the key for `tenantId` (null: for no tenant) from its bucket, or the 429. */
function admitKey(services: Services, principal: Principal, tenantId: string | null): Promise<void> {
  const actor = () => keyActor(services.prisma, principal);
  return admitRequest(services, { kind: "api_key", id: principal.keyId, actor }, tenantId);
}

/**
 * The store of the tenant the request acts for (null: an operator key that named none). A named
 * tenant the key may not act for, one that does not exist, and one without storage all get the
 * route's own 404, the answer a missing object gets. An operator key's request is taken from the
 * key's bucket for the tenant it acts for here (a tenant key's was taken at authentication).
 */
async function tenantStore(services: Services, principal: Principal, names: string[], missing: () => AppError): Promise<TenantStore | null> {
  const tenantId = actingTenant(principal, names);
  if (principal.tenantId === null) await admitKey(services, principal, tenantId ?? null);
  if (tenantId === undefined) throw missing();
  if (tenantId === null) return null;
  try {
    return await services.storage.tenant(tenantId);
  } catch (error) {
    throw isAppError(error, "not_found") ? missing() : error;
  }
}

export async function handleRest(request: Request, services: Services): Promise<Response> {
  const url = new URL(request.url);
  const log = loggerFor(services).child({ method: request.method, path: url.pathname });
  try {
    // HEAD is a GET whose body the server drops.
    const matched = matchRoute(request.method === "HEAD" ? "GET" : request.method, url.pathname);
    if (!matched) throw routeNotFound();
    const { route } = matched;
    const base = { request, url, services, log };
    if (route.access === "public") {
      const params = decodeParams(matched.params);
      checkText(params, url);
      return await route.handle({ ...base, params, body: undefined, principal: null, store: null });
    }

    const principal = await authenticate(services.prisma, request);
    // Tenant keys are told an operator route does not exist, like tRPC's operatorProcedure.
    if (route.access === "operator" && principal.tenantId !== null) throw routeNotFound();
    // A tenant key acts for its own tenant only, and an operator key on an operator route for none.
    if (principal.tenantId !== null || route.access !== "tenant") await admitKey(services, principal, principal.tenantId);
    const params = decodeParams(matched.params);
    checkText(params, url);
    const body = route.body ? route.body.parse(route.body.optional && !hasBody(request) ? {} : await readJson(request)) : undefined;
    const store =
      route.access === "tenant"
        ? await tenantStore(
          services, principal, namedTenants(request, url, params.tenant_id, route.body?.tenants(body) ?? []),
          () => route.missing?.(params) ?? notFound(route.notFound),
        )
        : null;
    if (store?.quiesced && isWrite(request)) throw tenantMoving();
    return await route.handle({ ...base, params, body, principal, store });
  } catch (error) {
    const response = errorResponse(error, log);
    const retryAfter = retryAfterOf(error);
    if (retryAfter !== null) response.headers.set("retry-after", String(retryAfter));
    return response;
  }
}
