// Once per test run: an embedded PostgreSQL for tests (its own folder and port, so it never
// touches the `npm start` database) and a freshly migrated template database. Every test file
// then copies the template into a database of its own (see test/db.ts).
import type { TestProject } from "vitest/node";
import path from "node:path";
import pg from "pg";
import { DATA_DIR, migrateDeploy, startEmbeddedCluster } from "../scripts/database.ts";

// One template per run, so runs started side by side (several terminals, helpers) never drop or
// copy each other's databases.
const TEMPLATE_DATABASE = `bulkhead_template_${process.pid}`;

declare module "vitest" {
  export interface ProvidedContext {
    /** Connection URL of the test cluster's maintenance database. */
    adminUrl: string;
    templateDatabase: string;
    /** The pid of this run's main process, in the names of its databases. */
    runId: number;
  }
}

export default async function setup(project: TestProject) {
  const cluster = await startEmbeddedCluster({
    dataDir: path.join(DATA_DIR, "test", "pg"),
    port: Number(process.env.BULKHEAD_TEST_PG_PORT ?? 54339),
    fast: true,
  });
  const adminUrl = cluster.url("postgres");
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // Databases an interrupted run left behind: their names carry the pid of the run that made
  // them, and a run still alive (another terminal, a helper) keeps its own.
  const { rows } = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname LIKE 'test\\_%' OR datname LIKE 'bulkhead\\_template\\_%'",
  );
  for (const { datname } of rows) {
    if (runIsAlive(Number(/^(?:test|bulkhead_template)_(\d+)/.exec(datname)?.[1]))) continue;
    await admin.query(`DROP DATABASE ${admin.escapeIdentifier(datname)}`).catch(() => {});
  }
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  await migrateDeploy(cluster.url(TEMPLATE_DATABASE));

  project.provide("adminUrl", adminUrl);
  project.provide("templateDatabase", TEMPLATE_DATABASE);
  project.provide("runId", process.pid);
  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
    // Another run still working on this cluster keeps it up (it stops it when it ends).
    const { rows: others } = await client.query(
      "SELECT 1 FROM pg_stat_activity WHERE datname LIKE 'test\\_%' OR datname LIKE 'bulkhead\\_template\\_%' LIMIT 1",
    );
    await client.end();
    if (others.length === 0) await cluster.stop();
  };
}

function runIsAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
