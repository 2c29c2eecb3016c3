// A fresh, migrated database per test file, copied from the template made by global-setup.ts,
// and the services Bulkhead builds on it. Real PostgreSQL, never a mock.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { loadConfig, type EngineConfig } from "../engine/config.ts";
import { Storage, StorageBackends } from "../engine/storage/index.ts";
import { createPrisma, type Prisma } from "../server/db/prisma.ts";

export interface TestDatabase {
  url: string;
  config: EngineConfig;
  prisma: Prisma;
  storage: Storage;
  /** A plain pg pool for assertions made with direct SQL. */
  sql: pg.Pool;
  drop(): Promise<void>;
}

/**
 * A pg pool for a test's own direct SQL. Like the engine's pools, it ignores an idle client's
 * error (the server ending that connection), which would otherwise be an uncaught exception that
 * fails the whole run; a query's own errors still reach the test.
 */
export function testPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  pool.on("error", () => {});
  return pool;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject("adminUrl") });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** test_<run pid>_<random>: global-setup.ts drops those of runs that are no longer alive. */
const databaseName = () => `test_${inject("runId")}_${randomBytes(6).toString("hex")}`;

/** Creates an empty database (no migrations), for tests of the migrations themselves. */
export async function emptyDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = databaseName();
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(inject("adminUrl"));
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin((c) => c.query(`DROP DATABASE ${name} WITH (FORCE)`)).then(() => {}) };
}

export async function freshDatabase(env: Record<string, string> = {}): Promise<TestDatabase> {
  const name = databaseName();
  await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${inject("templateDatabase")}`));
  const url = new URL(inject("adminUrl"));
  url.pathname = `/${name}`;
  const config = loadConfig({ DATABASE_URL: url.toString(), BULKHEAD_LOG_LEVEL: "silent", ...env });
  const prisma = createPrisma(config.DATABASE_URL);
  const storage = new Storage(new StorageBackends(config.backends, { poolSize: 4 }));
  const sql = testPool(config.DATABASE_URL, 2);
  return {
    url: config.DATABASE_URL,
    config,
    prisma,
    storage,
    sql,
    async drop() {
      await Promise.all([prisma.$disconnect(), storage.close(), sql.end()]);
      await admin((c) => c.query(`DROP DATABASE ${name} WITH (FORCE)`));
    },
  };
}
