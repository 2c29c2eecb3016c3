// What a REST route is, and what its handler is given. Routes are plain data (see routes.ts) so
// tests can enumerate them, e.g. every route that takes an id.
import type { z } from "zod";
import { AppError, notFound } from "../../engine/errors.ts";
import type { Logger } from "../../engine/logger.ts";
import { tenantMoving, type TenantStore } from "../../engine/storage/index.ts";
import type { Services } from "../services.ts";
import type { Principal } from "./auth.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * public: no key (health). tenant: a tenant key, or an operator key acting for a tenant it names.
 * operator: operator keys only; a tenant key is told the route does not exist.
 */
export type Access = "public" | "tenant" | "operator";

export interface BodySpec<B> {
  /** The shape the body must have; tests walk it to probe every field. */
  schema: z.ZodType;
  /** The extractor: JSON in, typed body out; a misfit is a plain-text 422 (a Rejection). */
  parse(json: unknown): B;
  /** The `tenant_id`s the body names; each must be the acting tenant. */
  tenants(body: B): readonly unknown[];
  /** A request without a body (no content type, no bytes) is parsed as `{}`. */
  optional?: boolean;
}

export interface RestContext<B = unknown> {
  request: Request;
  url: URL;
  /** Decoded path parameters; `id`, `pool_id` and `resource_id` are lower-case UUIDs (index.ts UUID_PARAMETERS). */
  params: Readonly<Record<string, string>>;
  body: B;
  services: Services;
  /** null on public routes. */
  principal: Principal | null;
  /** The acting tenant's store; null on public and operator routes and for an operator key that named no tenant. */
  store: TenantStore | null;
  log: Logger;
}

export interface Route<B = unknown> {
  method: Method;
  /** Relative to /api/v1. `{id}`, `{pool_id}` and `{resource_id}` segments must be UUIDs (400 otherwise); other `{name}` segments are free text. */
  path: string;
  access: Access;
  /**
   * What this route's 404 is about ("instance" → `not found: instance not found`). A request that
   * names a tenant it may not act for gets this same 404, so "not yours" reads exactly like "missing".
   */
  notFound: string;
  body?: BodySpec<B>;
  /**
   * The 404 for a request naming a tenant it may not act for, where the route's own 404 names the
   * object it was asked for (wire-format M: `cron_schedule <id>`), so both read alike.
   */
  missing?(params: Readonly<Record<string, string>>): AppError;
  handle(context: RestContext<B>): Promise<Response>;
}

/** Infers a route's body type from its extractor and lets routes of any body share one table. */
export function defineRoute<B = undefined>(route: Route<B>): Route<unknown> {
  return route as Route<unknown>;
}

/** Anything but a read: refused while the tenant is quiesced for a move. */
export const isWrite = (request: Request) => request.method !== "GET" && request.method !== "HEAD";

/** The answer for a path no route serves, and for an operator route asked with a tenant key. */
export const routeNotFound = () => notFound("route");

/** The acting tenant's store, for routes that cannot work without one. */
export function requireStore(context: RestContext<unknown>): TenantStore {
  if (context.store) return context.store;
  throw new AppError("invalid_argument", "an operator key must name the tenant (X-Tenant-Id header or tenant_id)");
}

/**
 * The acting tenant's store on the routes of wire-format J-V: an operator key must name the
 * tenant in X-Tenant-Id there (a tenant_id in the body or query is not enough), and a request
 * acting for no tenant is refused with `missingTenant`.
 */
export function requireTenantHeader(context: RestContext<unknown>, missingTenant: string): TenantStore {
  if (context.principal?.tenantId === null && !context.request.headers.has("x-tenant-id")) {
    throw new AppError("invalid_argument", "X-Tenant-Id header is required");
  }
  if (!context.store) throw new AppError("invalid_argument", missingTenant);
  return context.store;
}

/** What each kind of object storeOwning looks up is called in its 404 (the routes' `notFound`). */
const OWNED = { instance: "instance", sequence: "sequence", worker_task: "worker task" } as const;

/**
 * The store to read object `id` from: the acting tenant's, or, for an operator key that named
 * no tenant, the owner's as found on the backends and confirmed by the partition router.
 */
export async function storeOwning(context: RestContext<unknown>, kind: keyof typeof OWNED, id: string): Promise<TenantStore> {
  const store = context.store ?? (await context.services.storage.locate(kind, id));
  if (!store) throw notFound(OWNED[kind]);
  if (store.quiesced && isWrite(context.request)) throw tenantMoving();
  return store;
}
