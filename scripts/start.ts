// `npm start`: the database (embedded unless DATABASE_URL is set), migrations, demo data on first
// start, a production build when missing, then the web server and the engine. Ctrl-C or SIGTERM
// stops every process it started, the database included.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { loadConfig } from "../engine/config.ts";
import { Storage, StorageBackends } from "../engine/storage/index.ts";
import { createPrisma } from "../server/db/prisma.ts";
import { DEMO_PASSWORD, DEMO_TENANTS, demoLogins, seedDemo } from "../prisma/seed.ts";
import { DATA_DIR, openBulkheadDatabase, PROJECT_ROOT } from "./database.ts";

const startedAt = Date.now();
const say = (line: string) => console.log(`[bulkhead] ${line}`);
const bin = (name: string) => path.join(PROJECT_ROOT, "node_modules", ".bin", name);
const port = Number(process.env.PORT ?? 3000);

/** A secret from the environment, else one generated on first start and kept in .data. */
function keptSecret(name: string, file: string, make: () => string): string {
  if (process.env[name]) return process.env[name];
  const kept = path.join(DATA_DIR, file);
  if (!fs.existsSync(kept)) {
    fs.mkdirSync(DATA_DIR, { recursive: true });
    fs.writeFileSync(kept, make(), { mode: 0o600 });
  }
  return fs.readFileSync(kept, "utf8").trim();
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  // Own process group, so stopping reaches any process it starts in turn too.
  return spawn(command, args, { cwd: PROJECT_ROOT, env, stdio: "inherit", detached: true });
}

function stopGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      resolve();
    }
  });
}

const db = await openBulkheadDatabase(say);
/** Stops the database and exits with one line instead of a stack trace. */
async function fail(message: string): Promise<never> {
  console.error(`[bulkhead] error: ${message}`);
  await db.stop();
  process.exit(1);
}
say(`database ready (${db.embedded ? "embedded PostgreSQL 17" : "DATABASE_URL"}) in ${Date.now() - startedAt} ms`);

const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: db.url,
  BULKHEAD_BACKENDS: db.backends,
  AUTH_SECRET: keptSecret("AUTH_SECRET", "auth-secret", () => randomBytes(32).toString("base64url")),
  // Seals credentials at rest (engine/secrets/sealed-text.ts); losing the file loses them.
  BULKHEAD_ENCRYPTION_KEY: keptSecret("BULKHEAD_ENCRYPTION_KEY", "encryption-key", () => randomBytes(32).toString("hex")),
  NEXT_TELEMETRY_DISABLED: "1",
  PORT: String(port),
};
const config = loadConfig(env);
const prisma = createPrisma(db.url);
const storage = new Storage(new StorageBackends(config.backends, { poolSize: 2 }));
/** Where the demo tenants live now (read back, since they may have been moved since seeding). */
let demoPlacement = "";
try {
  if (await seedDemo(prisma, storage, config)) say("demo data created");
  const placements = await prisma.tenantStoragePlacement.findMany({ where: { tenantId: { in: DEMO_TENANTS.map((t) => t.slug) } } });
  demoPlacement = placements.map((p) => `${p.tenantId} on ${p.backendId}`).sort().join(", ");
} catch (error) {
  await fail(`could not create the demo data: ${(error as Error).message}`);
} finally {
  await Promise.all([prisma.$disconnect(), storage.close()]);
}

if (!fs.existsSync(path.join(PROJECT_ROOT, ".next", "BUILD_ID"))) {
  say("no production build yet: running next build (about a minute)");
  const build = run(bin("next"), ["build"], env);
  const code = await new Promise<number | null>((resolve) => build.on("exit", resolve));
  if (code !== 0) await fail("next build failed (its output is above)");
}

const children = [
  run(process.execPath, ["--import", "tsx", "scripts/web.ts"], env),
  run(process.execPath, ["--import", "tsx", "engine/main.ts"], env),
];

let stopping = false;
async function stopAll(status: number): Promise<void> {
  // Ctrl-C can arrive twice (the terminal and npm both pass it on): the first stop runs to its
  // end, stopping the database only once the engine has written its last metrics.
  if (stopping) return;
  stopping = true;
  say("stopping web, engine and database");
  await Promise.all(children.map(stopGroup));
  await db.stop();
  process.exit(status);
}
process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));
for (const child of children) {
  child.on("exit", (code) => {
    if (!stopping) {
      say(`a process exited unexpectedly (status ${code}); stopping the rest`);
      void stopAll(1);
    }
  });
}

// Ready when the sign-in page answers.
for (let tries = 0; tries < 600 && !stopping; tries++) {
  const ok = await fetch(`http://127.0.0.1:${port}/signin`).then((r) => r.ok, () => false);
  if (ok) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
say(`Bulkhead is up in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: http://localhost:${port}`);
say(`demo logins (password "${DEMO_PASSWORD}"):`);
for (const login of demoLogins()) say(`  ${login.email.padEnd(26)} ${login.role}`);
if (demoPlacement) say(`storage backends ${[...config.backends.keys()].join(", ")}: ${demoPlacement}`);
