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

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)]! : NaN;
}

export async function waitUntil(check: () => Promise<boolean>, pollMs = 10): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, pollMs));
}
