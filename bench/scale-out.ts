// Scale-out: 1, 2 and 4 engine processes (engine/main.ts, as deployed) on one PostgreSQL, working
// BENCH_SCALE_N (20,000) one-step `noop` instances of 10 tenants, beside 1, 2 and 4 graphile-worker
// processes (bench/scale-out-peer.ts, its documented performance preset) working as many no-op
// jobs. Each side's processes start first; once all are up, every row is made due at one moment,
// and the run is timed from that moment to the last completion. Then the rows are checked for
// double claims: an instance claimed more than once (lease_epoch > 1) or a step that committed
// more than one output. Both must be 0.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { makeWorkerUtils, Logger } from "graphile-worker";
import { loadConfig } from "../engine/config.ts";
import { StorageBackends, Storage } from "../engine/storage/index.ts";
import { createTenant } from "../server/control/tenants.ts";
import { createPrisma } from "../server/db/prisma.ts";
import type { Cluster } from "../scripts/database.ts";
import { benchCluster, benchPool, cloneBenchDatabase, freshBenchDatabase, waitUntil } from "./cluster.ts";
import { postgresVersion, writeResults } from "./results.ts";

const N = Number(process.env.BENCH_SCALE_N ?? 20_000);
const TENANTS = 10;
const PROCESSES = (process.env.BENCH_SCALE_PROCESSES ?? "1,2,4").split(",").map(Number);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 512);
const TEMPLATE = "bench_scale_template";
/** How often the bench looks whether the work is done: a count over the table, which PostgreSQL also has to serve. */
const POLL_MS = 100;
const ROOT = path.resolve(import.meta.dirname, "..");
const silent = new Logger(() => () => {});

/** Tenants, a `noop` sequence each and N instances, due in a century: copied per scenario. */
async function prepareTemplate(cluster: Cluster): Promise<void> {
  const url = await freshBenchDatabase(cluster, TEMPLATE, true);
  const config = loadConfig({ DATABASE_URL: url });
  const storage = new Storage(new StorageBackends(config.backends, { poolSize: 2 }));
  const prisma = createPrisma(url);
  const later = new Date(Date.UTC(2126, 0, 1));
  try {
    for (let t = 0; t < TENANTS; t++) {
      const tenant = await createTenant(prisma, { slug: `scale-${t}`, backendId: config.BULKHEAD_DEFAULT_BACKEND });
      const store = await storage.tenant(tenant.id);
      const id = randomUUID();
      const definition = {
        id, tenant_id: tenant.id, namespace: "default", name: "noop", version: 1, created_at: new Date().toISOString(),
        blocks: [{ type: "step", id: "noop", handler: "noop" }],
      };
      await store.insertSequence({ id, namespace: "default", name: "noop", version: 1, definition, createdAt: new Date() });
      const instance = {
        namespace: "default", sequenceId: id, priority: 1, context: { data: null, config: null }, nextFireAt: later, timezone: "UTC",
        metadata: null, idempotencyKey: null, concurrencyKey: null, maxConcurrency: null, budget: null, dryRun: false,
      };
      for (let left = N / TENANTS; left > 0; left -= 1000) await store.createInstances(Array(Math.min(1000, left)).fill(instance));
    }
  } finally {
    await Promise.all([storage.close(), prisma.$disconnect()]);
  }
}

function spawnAll(count: number, args: string[], env: Record<string, string>, stdout: "ignore" | "pipe" = "ignore"): ChildProcess[] {
  return Array.from({ length: count }, () =>
    spawn(process.execPath, ["--import", "tsx", ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", stdout, "inherit"] }));
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(children.map((child) => new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  })));
}

interface Outcome {
  perSecond: number;
  /** Instances claimed more than once plus steps with more than one committed output; for the peer, runs beyond one per job. */
  doubleClaims: number;
}

async function bulkhead(cluster: Cluster, processes: number): Promise<Outcome> {
  const url = await cloneBenchDatabase(cluster, TEMPLATE, "bench_scale");
  const sql = benchPool(url, 2);
  const engines = spawnAll(processes, ["engine/main.ts"], {
    DATABASE_URL: url, BULKHEAD_LOG_LEVEL: "warn",
    BULKHEAD_MAX_INSTANCES_IN_FLIGHT: String(IN_FLIGHT), BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: String(IN_FLIGHT),
    BULKHEAD_MAX_CONCURRENT_STEPS: String(CONCURRENCY), BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: String(CONCURRENCY),
  });
  try {
    // Each scheduler listens for due notices in a session of its own once it has started.
    await waitUntil(async () => (await sql.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'bulkhead-due-listener'",
    )).rows[0].n === processes, 50);
    const started = performance.now();
    await sql.query("UPDATE task_instances SET next_fire_at = now()");
    // From the counts the triggers keep (a few rows), not a count over task_instances, whose cost
    // grows with the table and would be charged to the engines (see bench/throughput.ts).
    await waitUntil(async () => (await sql.query("SELECT coalesce(sum(n), 0)::int AS n FROM tenant_instance_counts WHERE state <> 'completed'")).rows[0].n === 0, POLL_MS);
    const seconds = (performance.now() - started) / 1000;
    const { rows } = await sql.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM task_instances WHERE lease_epoch > 1)
            + (SELECT count(*) FROM (SELECT 1 FROM block_outputs GROUP BY instance_id, block_id HAVING count(*) > 1) twice) AS n`,
    );
    return { perSecond: N / seconds, doubleClaims: Number(rows[0]!.n) };
  } finally {
    await stopAll(engines);
    await sql.end();
  }
}

async function graphileWorker(cluster: Cluster, processes: number): Promise<Outcome> {
  const url = await freshBenchDatabase(cluster, "bench_scale_graphile", false);
  const pgPool = benchPool(url, 4);
  const utils = await makeWorkerUtils({ pgPool, logger: silent });
  await utils.migrate();
  const later = new Date(Date.UTC(2126, 0, 1));
  for (let from = 0; from < N; from += 1000) {
    await utils.addJobs(Array.from({ length: Math.min(1000, N - from) }, () => ({ identifier: "work", payload: {}, runAt: later })));
  }
  // Each worker counts its runs and prints the count when stopped: more runs than jobs is a job run twice.
  const workers = spawnAll(processes, ["bench/scale-out-peer.ts"], { DATABASE_URL: url, BENCH_CONCURRENCY: String(CONCURRENCY) }, "pipe");
  const ran = workers.map((worker) => new Promise<number>((resolve) => {
    let out = "";
    worker.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
    worker.once("exit", () => resolve((JSON.parse(out.trim() || "{\"ran\":0}") as { ran: number }).ran));
  }));
  try {
    await waitUntil(async () => (await pgPool.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'",
    )).rows[0].n >= processes, 50);
    const started = performance.now();
    await pgPool.query("UPDATE graphile_worker._private_jobs SET run_at = now()");
    await waitUntil(async () => (await pgPool.query("SELECT count(*)::int AS n FROM graphile_worker._private_jobs")).rows[0].n === 0, POLL_MS);
    const seconds = (performance.now() - started) / 1000;
    await stopAll(workers);
    const runs = (await Promise.all(ran)).reduce((a, b) => a + b, 0);
    return { perSecond: N / seconds, doubleClaims: runs - N };
  } finally {
    await stopAll(workers);
    await utils.release();
    await pgPool.end();
  }
}

export async function main(): Promise<void> {
  const startedAt = performance.now();
  console.log(`scale-out: ${N.toLocaleString("en-US")} one-step instances of ${TENANTS} tenants, ${PROCESSES.join(" / ")} processes on one PostgreSQL`);
  const cluster = await benchCluster();
  const rows: { processes: number; bulkhead: Outcome; peer: Outcome }[] = [];
  let postgres: string | undefined;
  try {
    postgres = await postgresVersion(cluster.url("postgres"));
    await prepareTemplate(cluster);
    for (const processes of PROCESSES) {
      const row = { processes, bulkhead: await bulkhead(cluster, processes), peer: await graphileWorker(cluster, processes) };
      rows.push(row);
      console.log(
        `  ${processes} process${processes === 1 ? "" : "es"}: bulkhead ${row.bulkhead.perSecond.toFixed(0)}/s (double claims ${row.bulkhead.doubleClaims}), ` +
        `graphile-worker best ${row.peer.perSecond.toFixed(0)}/s (jobs run twice ${row.peer.doubleClaims}); ` +
        `throughput ratio (bulkhead / graphile-worker best): ${(row.bulkhead.perSecond / row.peer.perSecond).toFixed(2)}`,
      );
    }
  } finally {
    await cluster.stop();
  }
  const one = rows[0]!;
  writeResults({
    bench: "scale-out",
    summary:
      `${N.toLocaleString("en-US")} one-step \`noop\` instances of ${TENANTS} tenants, worked by 1, 2 and 4 engine processes ` +
      `(\`engine/main.ts\`, ${IN_FLIGHT} in flight and ${CONCURRENCY} steps at once each) on one PostgreSQL, beside as many ` +
      `graphile-worker processes (concurrency ${CONCURRENCY}, local queue 500, batched completions) working as many no-op jobs.`,
    tables: [{
      columns: ["processes", "bulkhead (instances/s)", "vs 1 process", "double claims", "graphile-worker best (jobs/s)", "vs 1 process", "jobs run twice", "ratio"],
      rows: rows.map((row) => [
        String(row.processes), row.bulkhead.perSecond.toFixed(0), `${(row.bulkhead.perSecond / one.bulkhead.perSecond).toFixed(2)}x`, String(row.bulkhead.doubleClaims),
        row.peer.perSecond.toFixed(0), `${(row.peer.perSecond / one.peer.perSecond).toFixed(2)}x`, String(row.peer.doubleClaims),
        `${(row.bulkhead.perSecond / row.peer.perSecond).toFixed(2)}x`,
      ]),
    }],
    notes: [
      "Timed from the one UPDATE that makes every row due (all processes already up and listening) to the last completion.",
      "Double claims: instances with lease_epoch > 1 plus (instance, block) pairs with more than one committed output. Jobs run twice: the runs the workers counted beyond one per job.",
      "Every process, the bench and PostgreSQL share the machine's 2 cores: more processes add contention for the same CPU, not capacity.",
    ],
    postgres,
    startedAt,
  });
}
