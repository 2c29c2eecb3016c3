// Once per test run: an embedded PostgreSQL for tests (its own folder and port, so it never
// touches the `npm start` database) and a freshly migrated template database. Every test file
// then copies the template into a database of its own (see test/db.ts).
import type { TestProject } from "vitest/node";
import path from "node:path";
import pg from "pg";
import { DATA_DIR, migrateDeploy, startEmbeddedCluster } from "../scripts/database.ts";

export const TEMPLATE_DATABASE = "bulkhead_template";

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
  // Databases left behind by an interrupted run, and the previous template.
  const { rows } = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname LIKE 'test\\_%' OR datname = $1",
    [TEMPLATE_DATABASE],
  );
  for (const { datname } of rows) await admin.query(`DROP DATABASE ${admin.escapeIdentifier(datname)} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  await admin.end();
  await migrateDeploy(cluster.url(TEMPLATE_DATABASE));

  project.provide("adminUrl", adminUrl);
  project.provide("templateDatabase", TEMPLATE_DATABASE);
  return () => cluster.stop();
}
