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
  // Databases an interrupted run left behind. One still in use belongs to a run going on now:
  // without FORCE its drop fails, and it is left alone.
  const { rows } = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname LIKE 'test\\_%' OR datname LIKE 'bulkhead\\_template\\_%'",
  );
  for (const { datname } of rows) await admin.query(`DROP DATABASE ${admin.escapeIdentifier(datname)}`).catch(() => {});
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  await migrateDeploy(cluster.url(TEMPLATE_DATABASE));

  project.provide("adminUrl", adminUrl);
  project.provide("templateDatabase", TEMPLATE_DATABASE);
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
