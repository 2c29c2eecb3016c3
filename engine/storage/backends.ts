// The registered storage backends of this process: one PostgreSQL pool each. Connection strings
// come from configuration only; nothing outside this file sees them.
import pg from "pg";
import { AppError } from "../errors.ts";
import {
  BACKEND_ID_PATTERN, DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT_MS, DEFAULT_TENANT_SHARE_PERCENT, PRIMARY_BACKEND, type EngineConfig,
} from "../config.ts";
import { ConnectionShares, type TenantConnections } from "./connection-shares.ts";
import type { TenantId } from "./ids.ts";

export interface Backend {
  readonly id: string;
  /** Backend-wide work: claim, group commit, sweeps, moves, the control plane. */
  readonly pool: pg.Pool;
  /** The pool within one tenant's share of its connections. */
  forTenant(tenantId: TenantId): TenantConnections;
}

export interface BackendOptions {
  poolSize?: number;
  /** Percent of the pool one tenant may hold at once (default 50, at least one connection). */
  tenantSharePercent?: number;
  /** Every statement's limit; 0 turns it off (default 30 s). */
  statementTimeoutMs?: number;
  /** A tenant's statement waited for its share. */
  onConnectionWait?: (tenantId: string) => void;
}

/** The pool settings of the configuration. */
export function backendOptions(
  config: Pick<EngineConfig, "BULKHEAD_POOL_SIZE" | "BULKHEAD_POOL_TENANT_SHARE_PERCENT" | "BULKHEAD_STATEMENT_TIMEOUT_MS">,
): BackendOptions {
  return {
    poolSize: config.BULKHEAD_POOL_SIZE,
    tenantSharePercent: config.BULKHEAD_POOL_TENANT_SHARE_PERCENT,
    statementTimeoutMs: config.BULKHEAD_STATEMENT_TIMEOUT_MS,
  };
}

/** The connections one tenant may hold of a pool of `poolSize`. */
export function tenantShare(poolSize: number, sharePercent = DEFAULT_TENANT_SHARE_PERCENT): number {
  return Math.max(1, Math.floor((poolSize * sharePercent) / 100));
}

/** A backend over `pool`, each tenant limited to its share. */
export function backendOn(id: string, pool: pg.Pool, options: Pick<BackendOptions, "tenantSharePercent" | "onConnectionWait"> = {}): Backend {
  const shares = new ConnectionShares(pool, {
    perTenant: tenantShare(pool.options?.max ?? DEFAULT_POOL_SIZE, options.tenantSharePercent),
    onWait: options.onConnectionWait,
  });
  return { id, pool, forTenant: (tenantId) => shares.forTenant(tenantId) };
}

// Return int8 (bigint) as a JS number: epochs and counters stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export class StorageBackends {
  private readonly byId = new Map<string, Backend>();

  constructor(connectionStrings: Map<string, string>, options: BackendOptions = {}) {
    if (!connectionStrings.has(PRIMARY_BACKEND)) throw new Error(`the "${PRIMARY_BACKEND}" backend is required`);
    const statementTimeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    for (const [id, connectionString] of connectionStrings) {
      if (!BACKEND_ID_PATTERN.test(id)) throw new Error(`invalid backend id "${id.slice(0, 130)}"`);
      const pool = new pg.Pool({
        connectionString,
        max: options.poolSize ?? DEFAULT_POOL_SIZE,
        // A runaway statement (a tenant's huge scan, a lock wait) ends instead of holding its
        // connection; so does a transaction left idle by a crashed caller.
        ...(statementTimeout > 0 ? { statement_timeout: statementTimeout, idle_in_transaction_session_timeout: statementTimeout } : {}),
      });
      // An idle client's error (e.g. the server restarting) must not crash the process.
      pool.on("error", () => {});
      this.byId.set(id, backendOn(id, pool, options));
    }
  }

  /** The primary backend, which also holds the control plane (tenants, placements, users). */
  get primary(): Backend {
    return this.byId.get(PRIMARY_BACKEND)!;
  }

  /** Fails closed: a backend this process did not register is Unsupported, never a default. */
  get(id: string): Backend {
    const backend = this.byId.get(id);
    if (!backend) throw new AppError("unsupported", "tenant storage is not available in this process");
    return backend;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  async close(): Promise<void> {
    await Promise.all([...this.byId.values()].map((backend) => backend.pool.end()));
  }
}
