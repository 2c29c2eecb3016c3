// SQL for circuit breakers. Breaker state lives in each engine's memory; PostgreSQL keeps only
// what must outlive a process or reach the others: the Open breakers (with when they opened, so a
// restart keeps the cooldown clock) and the resets (so every process drops its state for a reset
// breaker). Statements name the tenant; the engine's sweeps read every tenant on its backend.
import { AppError } from "../errors.ts";
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

export interface OpenBreakerRow {
  tenantId: string;
  handler: string;
  failureCount: number;
  openedAt: Date;
}

export async function upsertOpenBreaker(db: Queryable, row: OpenBreakerRow): Promise<void> {
  await db.query({
    name: "upsert_open_breaker",
    text: `INSERT INTO circuit_breakers (tenant_id, handler, failure_count, opened_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant_id, handler) DO UPDATE SET failure_count = EXCLUDED.failure_count, opened_at = EXCLUDED.opened_at`,
    values: [row.tenantId, row.handler, row.failureCount, row.openedAt],
  });
}

/** Leaving Open deletes the row. */
export async function deleteOpenBreaker(db: Queryable, tenantId: TenantId, handler: string): Promise<void> {
  await db.query({
    name: "delete_open_breaker",
    text: "DELETE FROM circuit_breakers WHERE tenant_id = $1 AND handler = $2",
    values: [tenantId, handler],
  });
}

/** The Open breakers of one tenant, or of every tenant on this backend (boot and sweeps). */
export async function listOpenBreakers(db: Queryable, tenantId?: string): Promise<OpenBreakerRow[]> {
  const { rows } = await db.query<{ tenant_id: string; handler: string; failure_count: number; opened_at: Date }>({
    name: tenantId === undefined ? "list_open_breakers_all" : "list_open_breakers",
    text: tenantId === undefined
      ? "SELECT tenant_id, handler, failure_count, opened_at FROM circuit_breakers ORDER BY tenant_id, handler"
      : "SELECT tenant_id, handler, failure_count, opened_at FROM circuit_breakers WHERE tenant_id = $1 ORDER BY handler",
    values: tenantId === undefined ? [] : [tenantId],
  });
  return rows.map((r) => ({ tenantId: r.tenant_id, handler: r.handler, failureCount: r.failure_count, openedAt: r.opened_at }));
}

/** How many Open breakers each of these tenants has here (a tenant with none is absent). */
export async function countOpenBreakersOf(db: Queryable, tenantIds: readonly string[]): Promise<Map<string, number>> {
  if (tenantIds.length === 0) return new Map();
  const { rows } = await db.query<{ tenant_id: string; n: number }>({
    name: "count_open_breakers_of",
    text: "SELECT tenant_id, count(*)::int AS n FROM circuit_breakers WHERE tenant_id = ANY($1::text[]) GROUP BY tenant_id",
    values: [tenantIds],
  });
  return new Map(rows.map((r) => [r.tenant_id, r.n]));
}

/**
 * Resets a breaker for everyone: its Open row goes and the reset is recorded (by whom, when),
 * in one statement. Returns whether it was Open. Resetting an unknown breaker is allowed and
 * still recorded (wire-format I: 200 even for unknown handlers).
 */
export async function resetBreaker(db: Queryable, tenantId: TenantId, handler: string, resetBy: string): Promise<{ wasOpen: boolean }> {
  const { rows } = await db.query<{ was_open: boolean }>({
    name: "reset_breaker",
    text: `WITH gone AS (DELETE FROM circuit_breakers WHERE tenant_id = $1 AND handler = $2 RETURNING 1),
                logged AS (INSERT INTO circuit_breaker_resets (tenant_id, handler, reset_by) VALUES ($1, $2, $3) RETURNING 1)
           SELECT EXISTS (SELECT 1 FROM gone) AS was_open`,
    values: [tenantId, handler, resetBy],
  });
  return { wasOpen: rows[0]!.was_open };
}

export interface BreakerReset {
  id: number;
  tenantId: string;
  handler: string;
  resetBy: string;
  resetAt: Date;
}

/** Resets after `afterId` (engines follow this feed), oldest first. */
export async function resetsSince(db: Queryable, afterId: number, limit = 1000): Promise<BreakerReset[]> {
  const { rows } = await db.query<{ id: number; tenant_id: string; handler: string; reset_by: string; reset_at: Date }>({
    name: "breaker_resets_since",
    text: "SELECT id, tenant_id, handler, reset_by, reset_at FROM circuit_breaker_resets WHERE id > $1 ORDER BY id LIMIT $2",
    values: [afterId, limit],
  });
  return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, handler: r.handler, resetBy: r.reset_by, resetAt: r.reset_at }));
}

/** The newest reset id: a booting engine starts following the feed from here. */
export async function latestResetId(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ id: number | null }>({ name: "latest_breaker_reset", text: "SELECT max(id) AS id FROM circuit_breaker_resets" });
  return rows[0]!.id ?? 0;
}

/** A tenant's resets, newest first (who reset what, for the breakers pages). */
export async function listResets(db: Queryable, tenantId: TenantId | null, limit = 100): Promise<BreakerReset[]> {
  const { rows } = await db.query<{ id: number; tenant_id: string; handler: string; reset_by: string; reset_at: Date }>({
    name: tenantId === null ? "list_breaker_resets_all" : "list_breaker_resets",
    text: tenantId === null
      ? "SELECT id, tenant_id, handler, reset_by, reset_at FROM circuit_breaker_resets ORDER BY id DESC LIMIT $1"
      : "SELECT id, tenant_id, handler, reset_by, reset_at FROM circuit_breaker_resets WHERE tenant_id = $2 ORDER BY id DESC LIMIT $1",
    values: tenantId === null ? [limit] : [limit, tenantId],
  });
  return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, handler: r.handler, resetBy: r.reset_by, resetAt: r.reset_at }));
}

export interface BreakerSettingsRow {
  tenantId: string;
  handler: string;
  failureThreshold: number;
  cooldownSecs: number;
}

export interface BreakerBounds {
  threshold: [min: number, max: number];
  cooldownSecs: [min: number, max: number];
}

/** A tenant admin's settings for a handler, refused outside the operator's bounds. */
export async function setBreakerSettings(db: Queryable, row: BreakerSettingsRow, bounds: BreakerBounds): Promise<void> {
  const within = (value: number, [min, max]: [number, number]) => Number.isInteger(value) && value >= min && value <= max;
  if (!within(row.failureThreshold, bounds.threshold)) {
    throw new AppError("invalid_argument", `failure_threshold must be an integer from ${bounds.threshold[0]} to ${bounds.threshold[1]}`, ["failure_threshold"]);
  }
  if (!within(row.cooldownSecs, bounds.cooldownSecs)) {
    throw new AppError("invalid_argument", `cooldown_secs must be an integer from ${bounds.cooldownSecs[0]} to ${bounds.cooldownSecs[1]}`, ["cooldown_secs"]);
  }
  await db.query({
    name: "set_breaker_settings",
    text: `INSERT INTO breaker_settings (tenant_id, handler, failure_threshold, cooldown_secs) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant_id, handler) DO UPDATE
             SET failure_threshold = EXCLUDED.failure_threshold, cooldown_secs = EXCLUDED.cooldown_secs, updated_at = now()`,
    values: [row.tenantId, row.handler, row.failureThreshold, row.cooldownSecs],
  });
}

/** The settings of one tenant, or of every tenant on this backend (the engine's sync). */
export async function listBreakerSettings(db: Queryable, tenantId?: string): Promise<BreakerSettingsRow[]> {
  const { rows } = await db.query<{ tenant_id: string; handler: string; failure_threshold: number; cooldown_secs: number }>({
    name: tenantId === undefined ? "list_breaker_settings_all" : "list_breaker_settings",
    text: tenantId === undefined
      ? "SELECT tenant_id, handler, failure_threshold, cooldown_secs FROM breaker_settings"
      : "SELECT tenant_id, handler, failure_threshold, cooldown_secs FROM breaker_settings WHERE tenant_id = $1 ORDER BY handler",
    values: tenantId === undefined ? [] : [tenantId],
  });
  return rows.map((r) => ({ tenantId: r.tenant_id, handler: r.handler, failureThreshold: r.failure_threshold, cooldownSecs: r.cooldown_secs }));
}
