// The registered storage backends of this process: one PostgreSQL pool each. Connection strings
// come from configuration only; nothing outside this file sees them.
import pg from "pg";
import { AppError } from "../errors.ts";
import { BACKEND_ID_PATTERN, PRIMARY_BACKEND } from "../config.ts";

export interface Backend {
  readonly id: string;
  readonly pool: pg.Pool;
}

// Return int8 (bigint) as a JS number: epochs and counters stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export class StorageBackends {
  private readonly byId = new Map<string, Backend>();

  constructor(connectionStrings: Map<string, string>, options: { poolSize?: number } = {}) {
    if (!connectionStrings.has(PRIMARY_BACKEND)) throw new Error(`the "${PRIMARY_BACKEND}" backend is required`);
    for (const [id, connectionString] of connectionStrings) {
      if (!BACKEND_ID_PATTERN.test(id)) throw new Error(`invalid backend id "${id.slice(0, 130)}"`);
      const pool = new pg.Pool({ connectionString, max: options.poolSize ?? 10 });
      // An idle client's error (e.g. the server restarting) must not crash the process.
      pool.on("error", () => {});
      this.byId.set(id, { id, pool });
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
