// Configuration shared by the web and engine processes, read once from the environment and
// validated with zod. Every Bulkhead setting is named BULKHEAD_*.
import { z } from "zod";
import { DEFAULT_EVENT_LIMITS } from "./handlers/emit-event.ts";
import { DEFAULT_OUTBOUND_PER_HOST } from "./handlers/host-slots.ts";

export const BACKEND_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
export const PRIMARY_BACKEND = "primary";

/** Backend pools (engine/storage/backends.ts uses these when it is given no configuration). */
export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_TENANT_SHARE_PERCENT = 50;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

/** `id=url` pairs separated by commas or whitespace; ids follow BACKEND_ID_PATTERN. */
const backendList = z
  .string()
  .default("")
  .transform((raw, ctx) => {
    const backends = new Map<string, string>();
    for (const entry of raw.split(/[\s,]+/).filter(Boolean)) {
      const at = entry.indexOf("=");
      const id = entry.slice(0, at);
      if (at < 1 || !BACKEND_ID_PATTERN.test(id)) {
        ctx.addIssue({ code: "custom", message: `invalid backend entry "${entry.slice(0, 40)}": expected id=postgresql://...` });
        return z.NEVER;
      }
      backends.set(id, entry.slice(at + 1));
    }
    return backends;
  });

const schema = z.object({
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (npm start sets it for the embedded database)"),
  BULKHEAD_BACKENDS: backendList,
  BULKHEAD_DEFAULT_BACKEND: z.string().regex(BACKEND_ID_PATTERN).default(PRIMARY_BACKEND),
  /** Where `npm start` keeps its files (scripts/database.ts reads it too); the console's exports go under it. */
  BULKHEAD_DATA_DIR: z.string().min(1).default(".data"),
  /** Where the console's tenant exports are written, one directory per export; empty: <BULKHEAD_DATA_DIR>/exports. */
  BULKHEAD_EXPORT_DIR: z.string().default(""),
  BULKHEAD_TICK_MS: int(100, 1),
  /**
   * An idle scheduler (its last claim found nothing) claims again when woken (a due notice, a run's
   * end, a placement change), when the next known due time comes, or after this long at the latest.
   */
  BULKHEAD_IDLE_CLAIM_MS: int(2000, 1),
  BULKHEAD_CLAIM_BATCH: int(256, 1),
  BULKHEAD_MAX_INSTANCES_PER_TENANT: int(0),
  /** Instances an engine process runs at once (each holds a lease), and of them one tenant's. */
  BULKHEAD_MAX_INSTANCES_IN_FLIGHT: int(128, 1),
  BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: int(32, 1),
  /**
   * Steps an engine process runs at once, handler calls and worker dispatches, the branches of a
   * parallel, race or for_each each counted; and of them one tenant's.
   */
  BULKHEAD_MAX_CONCURRENT_STEPS: int(128, 1),
  BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: int(32, 1),
  /** How long a claim holds an instance without renewal; a dead engine's work returns after it. */
  BULKHEAD_LEASE_MS: int(30_000, 1000),
  BULKHEAD_REAPER_MS: int(5_000, 100),
  /** On SIGTERM, how long in-flight steps may finish before they are released unfinished. */
  BULKHEAD_SHUTDOWN_GRACE_MS: int(10_000, 0),
  BULKHEAD_BREAKER_THRESHOLD: int(5, 1),
  BULKHEAD_BREAKER_COOLDOWN_SECS: int(60, 1),
  /** Bounds within which tenant admins may set their own handlers' breaker settings. */
  BULKHEAD_BREAKER_THRESHOLD_MIN: int(1, 1),
  BULKHEAD_BREAKER_THRESHOLD_MAX: int(100, 1),
  BULKHEAD_BREAKER_COOLDOWN_MIN_SECS: int(5, 1),
  BULKHEAD_BREAKER_COOLDOWN_MAX_SECS: int(3600, 1),
  BULKHEAD_POOL_SIZE: int(DEFAULT_POOL_SIZE, 1),
  /** Percent of a backend pool's connections one tenant's statements may hold at once (at least one). */
  BULKHEAD_POOL_TENANT_SHARE_PERCENT: z.coerce.number().int().min(1).max(100).default(DEFAULT_TENANT_SHARE_PERCENT),
  /** Every statement on a backend pool ends after this long; 0: no limit. */
  BULKHEAD_STATEMENT_TIMEOUT_MS: int(DEFAULT_STATEMENT_TIMEOUT_MS, 0),
  /** emit_event children one instance may emit in its life, and a tenant's instances per clock minute. */
  BULKHEAD_EVENTS_PER_PARENT: int(DEFAULT_EVENT_LIMITS.perParent, 1),
  BULKHEAD_EVENTS_PER_TENANT_PER_MINUTE: int(DEFAULT_EVENT_LIMITS.perTenantPerMinute, 1),
  /** Outbound requests (http_request, llm_call) one tenant may have open to one host at once; tenant_limits may override it. */
  BULKHEAD_OUTBOUND_PER_HOST: int(DEFAULT_OUTBOUND_PER_HOST, 1),
  /** Hosts outbound HTTP may reach although they resolve to private or loopback addresses. */
  BULKHEAD_HTTP_ALLOW: z.string().default(""),
  /** Tenants given their own label on /api/metrics (the busiest by load); the rest are summed as "other". */
  BULKHEAD_METRICS_TOP_TENANTS: int(20, 0),
  BULKHEAD_METRICS_RETENTION_DAYS: int(14, 1),
  /**
   * API requests (REST and tRPC) per second one principal (an API key, a signed-in user) may make
   * for one tenant, on average, and how many it may make at once: a token bucket per web process.
   */
  BULKHEAD_API_RATE_PER_SEC: int(50, 1),
  BULKHEAD_API_BURST: int(200, 1),
  /** Live streams (instance streams) one web process serves at once, and of them one tenant's. */
  BULKHEAD_STREAMS: int(256, 1),
  BULKHEAD_STREAMS_PER_TENANT: int(64, 1),
  /** Cron schedules one tenant may have (wire-format M); creating one more answers 409. */
  BULKHEAD_CRON_SCHEDULES_PER_TENANT: int(1000, 1),
  /** Public webhook requests of one tenant per second, per web process (burst: twice that); tiered. */
  BULKHEAD_WEBHOOK_RATE_PER_SEC: int(100, 1),
  /** A tenant's schedule-lag p99 objective, in ms, unless its own is set (tiered): the fairness page's breach line. */
  BULKHEAD_LAG_OBJECTIVE_MS: int(1000, 1),
  /** Days a terminal instance is kept before the retention pruner deletes it, unless the tenant's own is set (tiered). */
  BULKHEAD_RETENTION_DAYS: int(30, 1),
  /** The retention pruner: instances of one tenant deleted per batch, and the pause when nothing is left to prune. */
  BULKHEAD_RETENTION_BATCH: int(500, 1),
  BULKHEAD_RETENTION_INTERVAL_MS: int(60_000, 1),
  /**
   * Proxies in front of the web server whose x-forwarded-for is believed: a hop count or
   * addresses and CIDRs (server/web/client-address.ts). Unset: the socket's address is the client's.
   */
  BULKHEAD_TRUSTED_PROXIES: z.string().default(""),
  BULKHEAD_LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
});

export type EngineConfig = z.infer<typeof schema> & {
  /** Every registered backend, `primary` (DATABASE_URL, also the control plane) first. */
  backends: Map<string, string>;
};

export function loadConfig(env: Record<string, string | undefined> = process.env): EngineConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  const config = parsed.data;
  if (config.BULKHEAD_BACKENDS.has(PRIMARY_BACKEND)) {
    throw new Error(`invalid configuration:\n  BULKHEAD_BACKENDS: "${PRIMARY_BACKEND}" is always DATABASE_URL and cannot be listed`);
  }
  const backends = new Map([[PRIMARY_BACKEND, config.DATABASE_URL], ...config.BULKHEAD_BACKENDS]);
  if (!backends.has(config.BULKHEAD_DEFAULT_BACKEND)) {
    throw new Error(`invalid configuration:\n  BULKHEAD_DEFAULT_BACKEND: "${config.BULKHEAD_DEFAULT_BACKEND}" is not a registered backend`);
  }
  return { ...config, backends };
}
