// Circuit breakers (wire-format I). Breaker state lives in each engine process's memory, which
// this (web) process cannot see. What it can see are the rows engines share through PostgreSQL:
// an Open breaker has a `circuit_breakers` row, and every reset is a `circuit_breaker_resets`
// row. So the answers here are read from those rows: a row is `open`, or `half_open` once its
// cooldown has passed (the next dispatch probes); no row means closed as far as anyone outside an
// engine can tell. A closed breaker's failure count (failures short of the threshold) is held by
// the engine alone: it is not visible here, and such a breaker is not listed (and GET is a 404).
import type { BreakerState } from "../../../engine/breakers/registry.ts";
import type { EngineConfig } from "../../../engine/config.ts";
import { notFound } from "../../../engine/errors.ts";
import type { OpenBreakerRow } from "../../../engine/storage/index.ts";
import { recordAudit } from "../../control/audit.ts";
import { keyActor } from "../auth.ts";
import { empty, json } from "../http.ts";
import type { RestContext } from "../route.ts";


export interface BreakerStatus {
  tenantId: string;
  handler: string;
  state: BreakerState;
  failureCount: number;
  failureThreshold: number;
  cooldownSecs: number;
  openedAt: Date | null;
  /** Whole seconds until the cooldown ends (0 once half open): when the next probe may run. */
  secondsLeft: number;
}

/**
 * An Open row as the breaker's status at `now`. Threshold and cooldown come from configuration,
 * which the engine processes read from the same environment.
 */
export function breakerStatus(row: OpenBreakerRow, config: EngineConfig, now = Date.now()): BreakerStatus {
  const cooldownSecs = config.BULKHEAD_BREAKER_COOLDOWN_SECS;
  const leftMs = row.openedAt.getTime() + cooldownSecs * 1000 - now;
  return {
    tenantId: row.tenantId,
    handler: row.handler,
    state: leftMs > 0 ? "open" : "half_open",
    failureCount: row.failureCount,
    failureThreshold: config.BULKHEAD_BREAKER_THRESHOLD,
    cooldownSecs,
    openedAt: row.openedAt,
    secondsLeft: Math.max(0, Math.ceil(leftMs / 1000)),
  };
}

/** The wire shape of section I; `opened_at` is omitted when null. */
function wireBreaker(status: BreakerStatus) {
  return {
    tenant_id: status.tenantId,
    handler: status.handler,
    state: status.state,
    failure_count: status.failureCount,
    failure_threshold: status.failureThreshold,
    cooldown_secs: status.cooldownSecs,
    ...(status.openedAt ? { opened_at: status.openedAt.toISOString() } : {}),
  };
}

const wireRows = (context: RestContext<unknown>, rows: readonly OpenBreakerRow[]) => {
  const now = Date.now();
  return rows.map((row) => wireBreaker(breakerStatus(row, context.services.config, now)));
};

/**
 * GET /circuit-breakers: an operator key that names no tenant sees every tenant's breakers; a
 * tenant key (or an operator key naming a tenant) sees that tenant's.
 */
export async function listAllBreakers(context: RestContext<unknown>): Promise<Response> {
  const rows = context.store
    ? await context.store.listOpenBreakers()
    : (await context.services.storage.breakersOfEveryTenant()).open;
  return json(200, wireRows(context, rows));
}

/** GET /tenants/{tenant_id}/circuit-breakers: the dispatcher has already checked the caller may act for it. */
export async function listTenantBreakers(context: RestContext<unknown>): Promise<Response> {
  return json(200, wireRows(context, await context.store!.listOpenBreakers()));
}

/** GET /tenants/{tenant_id}/circuit-breakers/{handler}: 404 without an Open row (see the header). */
export async function getBreaker(context: RestContext<unknown>): Promise<Response> {
  const rows = await context.store!.listOpenBreakers();
  const row = rows.find((r) => r.handler === context.params.handler);
  if (!row) throw notFound("circuit breaker");
  return json(200, wireRows(context, [row])[0]);
}

/**
 * POST /tenants/{tenant_id}/circuit-breakers/{handler}/reset: 200 with an empty body, even for a
 * handler with no breaker (nothing is created, but the reset is still recorded). Engines on the
 * tenant's backend follow the reset feed and drop their in-memory state within seconds.
 */
export async function resetBreaker(context: RestContext<unknown>): Promise<Response> {
  const { prisma } = context.services;
  const store = context.store!;
  const handler = context.params.handler!;
  const prefix = await keyActor(prisma, context.principal!);
  const { wasOpen } = await store.resetBreaker(handler, `api-key:${prefix}`);
  await recordAudit(prisma, { actor: prefix, tenantId: store.tenantId, action: "breaker.reset", details: { handler, was_open: wasOpen } });
  return empty(200);
}
