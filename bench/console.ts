// Console: every operator console page and every tenant page (of the largest tenant and of a
// small one) opened in Chromium against a data set of 10,000 tenants and 1,000,000 instances
// (bench/console-seed.ts) on two backends, served by Bulkhead's production web server and an
// engine, as `npm start` runs them. Per page: the document's time, each data request's time (tRPC
// batches) and their p95, and the time to settle; a page over DATA_P95_MS or SETTLE_MS is flagged.
//
// The data set is kept in .data/bench-console (its own cluster, on a port of its own) and seeded
// again only when SEED_VERSION changes; a run writes only the last hours of tenant_metrics again.
// It needs a production build (`npx next build`) of the tree being measured.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { loadConfig } from "../engine/config.ts";
import { Storage, StorageBackends } from "../engine/storage/index.ts";
import { seedDemo, DEMO_OPERATOR, DEMO_PASSWORD } from "../prisma/seed.ts";
import { addMember, createUser } from "../server/control/users.ts";
import { createPrisma } from "../server/db/prisma.ts";
import { migrateDeploy, pendingMigrations, PROJECT_ROOT, startEmbeddedCluster, type Cluster } from "../scripts/database.ts";
import { percentile, median } from "./cluster.ts";
import {
  LARGE_ADMIN, LARGE_TENANT, refreshMetrics, seedBackend, seedControlPlane, SEED_VERSION, SMALL_ADMIN, SMALL_TENANT, TENANTS,
} from "./console-seed.ts";
import { launch, measurePage, QUIET_MS, signedIn, timeProcedures, type Load, type PageSpec } from "./console-pages.ts";
import { postgresVersion, writeResults } from "./results.ts";

const DATA_DIR = path.join(PROJECT_ROOT, ".data", "bench-console");
const SEED_MARK = path.join(DATA_DIR, "seeded.json");
const PG_PORT = Number(process.env.BENCH_CONSOLE_PG_PORT ?? 54389);
const WEB_PORT = Number(process.env.BENCH_CONSOLE_WEB_PORT ?? 3389);
const LOADS = Number(process.env.BENCH_CONSOLE_LOADS ?? 5);
/** Only the pages whose name contains this (all when unset). */
const ONLY = process.env.BENCH_CONSOLE_PAGES;
/** BENCH_CONSOLE_SPLIT=1: each page's procedures also timed one at a time (bench/console-pages.ts timeProcedures). */
const SPLIT = process.env.BENCH_CONSOLE_SPLIT === "1";
const DATA_P95_MS = 300;
const SETTLE_MS = 1_000;
const BACKENDS = [{ id: "primary", database: "bulkhead" }, { id: "eu-1", database: "bulkhead_eu1" }] as const;

const say = (line: string) => console.log(`console: ${line}`);

/** The cluster with both databases, migrated, seeded unless the kept data set is of this seed's version. */
export async function openDataSet(): Promise<{ cluster: Cluster; urls: Record<string, string> }> {
  const kept = fs.existsSync(SEED_MARK) && (JSON.parse(fs.readFileSync(SEED_MARK, "utf8")) as { version?: string }).version === SEED_VERSION;
  if (!kept) {
    // A partial or older data set is thrown away whole.
    fs.rmSync(DATA_DIR, { recursive: true, force: true });
  }
  const cluster = await startEmbeddedCluster({ dataDir: path.join(DATA_DIR, "pg"), port: PG_PORT }, say);
  const urls: Record<string, string> = {};
  try {
    for (const backend of BACKENDS) {
      await cluster.ensureDatabase(backend.database);
      urls[backend.id] = cluster.url(backend.database);
      if ((await pendingMigrations(urls[backend.id]!)).length > 0) await migrateDeploy(urls[backend.id]!);
    }
    if (!kept) await seed(urls);
    else say(`kept data set of ${SEED_VERSION} in ${path.relative(PROJECT_ROOT, DATA_DIR)}`);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return { cluster, urls };
}

/** The environment `npm start` gives the web server and the engine, on the data set. */
export function processEnv(urls: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env, DATABASE_URL: urls.primary, BULKHEAD_BACKENDS: `eu-1=${urls["eu-1"]}`, BULKHEAD_DEFAULT_BACKEND: "primary",
    AUTH_SECRET: randomBytes(32).toString("base64url"), BULKHEAD_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    NEXT_TELEMETRY_DISABLED: "1", PORT: String(WEB_PORT), BULKHEAD_LOG_LEVEL: "warn",
  };
}

async function seed(urls: Record<string, string>): Promise<void> {
  const started = performance.now();
  say(`seeding ${TENANTS.toLocaleString("en-US")} tenants and about 1,000,000 instances (${SEED_VERSION})`);
  const config = loadConfig(processEnv(urls));
  const prisma = createPrisma(urls.primary!);
  const storage = new Storage(new StorageBackends(config.backends, { poolSize: 2 }));
  try {
    // The demo's users and tenants (the operator signs in as on `npm start`), then the two admins.
    await seedDemo(prisma, storage, config);
    const primary = new pg.Client({ connectionString: urls.primary });
    await primary.connect();
    try {
      await seedControlPlane(primary);
    } finally {
      await primary.end();
    }
    for (const [email, tenantId] of [[LARGE_ADMIN, LARGE_TENANT], [SMALL_ADMIN, SMALL_TENANT]] as const) {
      await createUser(prisma, { email, password: DEMO_PASSWORD, name: `Admin of ${tenantId}` });
      await addMember(prisma, { tenantId, email, role: "admin" });
    }
  } finally {
    await Promise.all([prisma.$disconnect(), storage.close()]);
  }
  // Both backends at once: the machine's two cores.
  await Promise.all(BACKENDS.map(async (backend) => {
    const db = new pg.Client({ connectionString: urls[backend.id] });
    await db.connect();
    try {
      await seedBackend(db, backend.id, say);
    } finally {
      await db.end();
    }
  }));
  fs.writeFileSync(SEED_MARK, JSON.stringify({ version: SEED_VERSION, seededAt: new Date().toISOString() }));
  say(`seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** Every tenant's minutes of the last 3 hours written again, so the data set's hour is now. */
export async function refreshAllMetrics(urls: Record<string, string>): Promise<void> {
  for (const backend of BACKENDS) {
    const db = new pg.Client({ connectionString: urls[backend.id] });
    await db.connect();
    try {
      say(`${backend.id}: ${(await refreshMetrics(db, backend.id)).toLocaleString("en-US")} tenant_metrics minutes written for the last 3 hours`);
    } finally {
      await db.end();
    }
  }
}

export function start(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  // Its own process group, so stopping reaches what it starts too.
  return spawn(process.execPath, ["--import", "tsx", ...args], { cwd: PROJECT_ROOT, env, stdio: ["ignore", "inherit", "inherit"], detached: true });
}

export function stop(child: ChildProcess): Promise<void> {
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

async function firstId(url: string, text: string, values: unknown[]): Promise<string> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ id: string }>(text, values);
    if (!rows[0]) throw new Error(`nothing found for ${text}`);
    return rows[0].id;
  } finally {
    await db.end();
  }
}

const backendOf = (tenantId: string) => (Number(tenantId.slice("tenant-".length)) % 3 === 1 ? "eu-1" : "primary");

async function tenantPages(urls: Record<string, string>, tenantId: string, size: string): Promise<PageSpec[]> {
  const url = urls[backendOf(tenantId)]!;
  const instance = await firstId(url, "SELECT id FROM task_instances WHERE tenant_id = $1 AND state = 'failed' ORDER BY created_at DESC LIMIT 1", [tenantId]);
  const sequence = await firstId(url, "SELECT id FROM sequences WHERE tenant_id = $1 ORDER BY name LIMIT 1", [tenantId]);
  const base = `/t/${tenantId}`;
  return [
    ["overview", base], ["instances", `${base}/instances`], ["instance detail", `${base}/instances/${instance}`], ["failed", `${base}/failed`],
    ["sequences", `${base}/sequences`], ["editor", `${base}/sequences/${sequence}`], ["schedules", `${base}/schedules`],
    ["approvals", `${base}/approvals`], ["workers", `${base}/workers`], ["breakers", `${base}/breakers`], ["settings", `${base}/settings`],
  ].map(([name, address]) => ({ name: `${size} tenant: ${name}`, path: address! }));
}

const CONSOLE_PAGES: PageSpec[] = [
  { name: "/ops (tenants by name)", path: "/ops" },
  { name: "/ops tenants by claims", path: "/ops?sort=claims" },
  { name: "/ops tenants by lag", path: "/ops?sort=lag" },
  { name: "/ops search \"gr\" (typed)", path: "/ops", action: (page) => page.getByLabel("Search", { exact: true }).pressSequentially("gr") },
  { name: "/ops search \"kestrel\"", path: "/ops?q=kestrel" },
  { name: "/ops next page (by claims)", path: "/ops?sort=claims", action: (page) => page.getByRole("button", { name: "Next" }).click() },
  { name: "/ops/tenants/<large>", path: `/ops/tenants/${LARGE_TENANT}` },
  { name: "/ops/tenants/new", path: "/ops/tenants/new" },
  { name: "/ops/moves", path: "/ops/moves" },
  { name: "/ops/fairness", path: "/ops/fairness" },
  { name: "/ops/resources", path: "/ops/resources" },
  { name: "/ops/breakers", path: "/ops/breakers" },
  { name: "/ops/workers", path: "/ops/workers" },
  { name: "/ops/audit", path: "/ops/audit" },
];

interface PageResult {
  name: string;
  loads: Load[];
}

const ms = (value: number) => (Number.isFinite(value) ? Math.round(value).toString() : "–");

/** The row of one page: document p50/p95, requests per load, data p50/p95/max, the slowest procedure, settle p50/p95, flags. */
function row(result: PageResult): (string | number)[] {
  const documents = result.loads.flatMap((l) => (l.documentMs === null ? [] : [l.documentMs]));
  const times = result.loads.flatMap((l) => l.requests.map((r) => r.ms));
  const settles = result.loads.map((l) => l.settleMs);
  const byProcedure = new Map<string, number[]>();
  for (const r of result.loads.flatMap((l) => l.requests)) for (const p of r.procedures) byProcedure.set(p, [...(byProcedure.get(p) ?? []), r.ms]);
  const slowest = [...byProcedure].map(([p, t]) => [p, percentile(t, 95)] as const).sort((a, b) => b[1] - a[1])[0];
  const p95 = percentile(times, 95);
  const settle95 = percentile(settles, 95);
  const document95 = percentile(documents, 95);
  const flags = [
    document95 > DATA_P95_MS ? `document p95 > ${DATA_P95_MS} ms` : "", p95 > DATA_P95_MS ? `data p95 > ${DATA_P95_MS} ms` : "",
    settle95 > SETTLE_MS ? `settle > ${SETTLE_MS / 1000} s` : "",
  ].filter(Boolean);
  return [
    result.name, ms(median(documents)), ms(document95), (times.length / result.loads.length).toFixed(1), ms(median(times)), ms(p95), ms(times.length ? Math.max(...times) : NaN),
    (result.loads.reduce((sum, l) => sum + l.prefetches, 0) / result.loads.length).toFixed(1),
    slowest ? `${slowest[0]} (${ms(slowest[1])})` : "–", ms(median(settles)), ms(settle95), flags.length ? `**${flags.join(", ")}**` : "ok",
  ];
}

const COLUMNS = ["page", "document p50 (ms)", "document p95 (ms)", "data requests per load", "data p50 (ms)", "data p95 (ms)", "data max (ms)", "prefetches per load", "slowest procedure, p95 (ms)", "settle p50 (ms)", "settle p95 (ms)", "flag"];

function printTable(rows: (string | number)[][]): void {
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: (string | number)[]) => cells.map((c, i) => String(c).padEnd(widths[i]!)).join("  ");
  console.log(line(COLUMNS));
  for (const r of rows) console.log(line(r));
}

export async function main(): Promise<void> {
  const startedAt = performance.now();
  const { cluster, urls } = await openDataSet();
  const children: ChildProcess[] = [];
  try {
    await refreshAllMetrics(urls);
    if (!fs.existsSync(path.join(PROJECT_ROOT, ".next", "BUILD_ID"))) throw new Error("no production build: run `npx next build` first (under the lock)");
    const env = processEnv(urls);
    children.push(start(["scripts/web.ts"], env), start(["engine/main.ts"], env));
    const base = `http://127.0.0.1:${WEB_PORT}`;
    for (let tries = 0; !(await fetch(`${base}/signin`).then((r) => r.ok, () => false)); tries++) {
      if (tries > 600 || children.some((c) => c.exitCode !== null)) throw new Error("the web server did not come up");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const browser = await launch();
    const results: PageResult[] = [];
    try {
      const visitors = [
        { email: DEMO_OPERATOR, pages: CONSOLE_PAGES },
        { email: LARGE_ADMIN, pages: await tenantPages(urls, LARGE_TENANT, "large") },
        { email: SMALL_ADMIN, pages: await tenantPages(urls, SMALL_TENANT, "small") },
      ];
      for (const visitor of visitors) {
        const context = await signedIn(browser, base, visitor.email, DEMO_PASSWORD);
        try {
          for (const spec of visitor.pages.filter((p) => !ONLY || p.name.includes(ONLY))) {
            const loads = await measurePage(context, spec, LOADS);
            results.push({ name: spec.name, loads });
            if (SPLIT) {
              for (const [procedure, times] of await timeProcedures(context, loads)) say(`    ${procedure} alone: ${times.map((t) => Math.round(t)).join(", ")} ms`);
            }
            const [, , document95, perLoad, , p95, , prefetches, slowest, settle, , flag] = row({ name: spec.name, loads });
            say(`${spec.name}: document p95 ${document95} ms, ${perLoad} data requests, p95 ${p95} ms (slowest ${slowest}), ${prefetches} prefetches, settle ${settle} ms ${flag === "ok" ? "" : flag}`);
          }
        } finally {
          await context.close();
        }
      }
    } finally {
      await browser.close();
    }

    const rows = results.map(row);
    console.log("");
    printTable(rows);
    const flagged = rows.filter((r) => r.at(-1) !== "ok").length;
    console.log(`\n${flagged} of ${rows.length} pages flagged (document or data request p95 > ${DATA_P95_MS} ms, or settle p95 > ${SETTLE_MS} ms)`);
    if (!ONLY) {
      writeResults({
        bench: "console",
        summary: `Every operator console page and every tenant page (of ${LARGE_TENANT}, 200,000 instances, on primary; of ${SMALL_TENANT}, tens, on eu-1) in Chromium at 1440×900, ${LOADS} loads each, over ${TENANTS.toLocaleString("en-US")} tenants and about 1,000,000 instances on two backends, served by the production web server and an engine. Goal: each data request (and the document, which brings the reads made while the page renders) ≤ ${DATA_P95_MS} ms p95, settled ≤ ${SETTLE_MS / 1000} s.`,
        tables: [{ columns: COLUMNS, rows }],
        notes: [
          "Document: the page's own request, from its start to its last byte as Chromium times it (none for an interaction); the reads a page makes while it renders (server/web/prefetch.tsx) stream in with it, so its views ask for nothing when they start.",
          `Data request: one tRPC batch (\`/api/trpc/…\`), from the request's start to its last byte as Chromium times it; p95 is the nearest rank over every data request of the page's ${LOADS} loads. Settle: from the navigation's start (or the click, or the first keystroke) until no request but the live streams (\`/api/live/…\`) has been in flight for ${QUIET_MS} ms, to the end of the last one; p95 over the loads.`,
          "Each page is loaded once first to warm the browser's cache and the server (not counted), then in a new tab per load. The browser, the web server, the engine and PostgreSQL share the machine's 2 cores.",
          `Data set (bench/console-seed.ts): 4 tenants with 200k, 150k, 100k and 100k instances, the other 9,996 with 10–80; of every 100 instances 70 completed (with an output), 8 failed, 5 scheduled, 2 running, 8 waiting, 3 paused (with a signal), 4 cancelled, over 30 days; tenant_metrics minutes for the last 3 hours (every tenant every minute in the last hour: 10,000 active tenants; before it every minute for 1,000 tenants and every fifth for the rest); ~270 tenants with Open breakers, ~1,000 with cron schedules, 500 with triggers, 400 own limits, 300 finished moves, 100,000 audit lines. A tenant is on eu-1 when its number % 3 = 1.`,
        ],
        postgres: await postgresVersion(urls.primary!),
        startedAt,
      });
    }
  } finally {
    await Promise.all(children.map(stop));
    await cluster.stop();
  }
}
