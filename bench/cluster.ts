// The PostgreSQL every benchmark runs against: an embedded cluster of its own (never the
// `npm start` or test databases), with PostgreSQL's default durability so figures mean something.
import path from "node:path";
import pg from "pg";
import { DATA_DIR, migrateDeploy, startEmbeddedCluster, type Cluster } from "../scripts/database.ts";

export async function benchCluster(): Promise<Cluster> {
  return startEmbeddedCluster({ dataDir: path.join(DATA_DIR, "bench", "pg"), port: Number(process.env.BULKHEAD_BENCH_PG_PORT ?? 54379) });
}

/** A new, empty database (dropped first if a previous run left it), migrated when asked. */
export async function freshBenchDatabase(cluster: Cluster, name: string, migrate: boolean): Promise<string> {
  const admin = new pg.Client({ connectionString: cluster.url("postgres") });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = cluster.url(name);
  if (migrate) await migrateDeploy(url);
  return url;
}

/** A new database copied from `template` (a migrated, seeded database nobody is connected to). */
export async function cloneBenchDatabase(cluster: Cluster, template: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: cluster.url("postgres") });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    // A client that just disconnected from the template may still have its server process: the
    // copy is refused (55006, object in use) until that exits.
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== "55006" || attempt === 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    await admin.end();
  }
  return cluster.url(name);
}

/**
 * A pool whose clients' connection errors do not crash the benchmark. `end()` resolves before the
 * server has seen its clients go, so one may still be told "terminating connection due to
 * administrator command" by the DROP DATABASE … WITH (FORCE) or the cluster stop right after;
 * those are expected once the pool is ending, anything earlier is reported.
 */
export function benchPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  const onError = (error: Error) => {
    if (!pool.ending) console.warn(`bench pool: client error: ${error.message}`);
  };
  pool.on("error", onError);
  // Checked-out clients too (graphile-worker's LISTEN client is held for the whole run).
  pool.on("connect", (client) => client.on("error", onError));
  return pool;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)]! : NaN;
}

/** The nearest-rank percentile (p in 0..100): the smallest value with at least p% of values at or below it. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}

export async function waitUntil(check: () => Promise<boolean>, pollMs = 10): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, pollMs));
}
