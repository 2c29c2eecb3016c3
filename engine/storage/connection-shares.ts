// A tenant's share of a backend's connection pool: at most `perTenant` of its statements and
// transactions hold a connection at once in this process; the rest wait, first come first
// served, without a connection. A tenant flooding the API or fanning out cannot drain the pool
// that other tenants' statements, the claim and the group commit need. Every tenant-bound store
// (TenantStore on the web side, RunStore in the engine) reaches the pool only through here;
// backend-wide work (claim, group commit, sweeps, moves) uses the pool itself.
//
// No tenant-bound statement is sent while the same caller holds another connection (a
// transaction only uses its own client), so waiting for a share cannot deadlock.
import type pg from "pg";
import { KeyedSlots } from "../resources/keyed-slots.ts";
import type { TenantId } from "./ids.ts";
import type { Connectable, Queryable } from "./transaction.ts";

/** What a tenant-bound store sends its statements to. */
export type TenantConnections = Queryable & Connectable;

export interface ShareOptions {
  /** Connections one tenant may hold at once (at least 1). */
  perTenant: number;
  /** Called when a tenant's statement has to wait for its share (counted as a resource wait). */
  onWait?: (tenantId: string) => void;
}

export class ConnectionShares {
  private readonly slots: KeyedSlots;
  private readonly byTenant = new Map<string, TenantConnections>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: ShareOptions,
  ) {
    this.slots = new KeyedSlots(() => options.perTenant);
  }

  get perTenant(): number {
    return Math.max(1, this.options.perTenant);
  }

  /** The pool as one tenant may use it; one per tenant, kept (runs ask for it per instance). */
  forTenant(tenantId: TenantId): TenantConnections {
    let connections = this.byTenant.get(tenantId);
    if (!connections) this.byTenant.set(tenantId, (connections = this.connectionsOf(tenantId)));
    return connections;
  }

  private connectionsOf(tenantId: TenantId): TenantConnections {
    const take = () => this.slots.acquire(tenantId, undefined, () => this.options.onWait?.(tenantId));
    const pool = this.pool;
    const query = async (...args: unknown[]) => {
      const release = await take();
      try {
        return await (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
      } finally {
        release();
      }
    };
    const connect = async () => {
      const release = await take();
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        release();
        throw error;
      }
      // pg-pool sets a fresh `release` on every checkout, so this wrapper lasts one checkout.
      const giveBack = client.release.bind(client);
      client.release = (error?: Error | boolean) => {
        release();
        giveBack(error);
      };
      return client;
    };
    return { query: query as pg.Pool["query"], connect: connect as pg.Pool["connect"] };
  }

  /** The tenant's connections held and statements waiting for one, now. */
  usage(tenantId: string): { active: number; waiting: number } {
    return this.slots.usage(tenantId);
  }
}
