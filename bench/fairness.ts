// Fairness: what one flooding tenant does to everyone else's schedule lag.
//
// Quiet tenants (BENCH_QUIET_TENANTS, 3) each get a steady trickle of BENCH_QUIET_PER_TENANT (100)
// one-step `sleep` instances (5, 10, 15 or 20 ms), due one after another across BENCH_WINDOW_MS
// (10 s), the tenants staggered. One noisy tenant dumps 10x, then 100x, the quiet tenants' total,
// all due at the start. Scenarios: quiet alone; 10x and 100x with the per-tenant claim cap
// (BULKHEAD_MAX_INSTANCES_PER_TENANT = BENCH_FAIRNESS_CAP, 8) on and off; graphile-worker 0.17.3
// with the same arrivals (quiet jobs with run_at, the noisy jobs queued at once), alone, 10x, 100x.
// Same PostgreSQL, same process, same concurrency, same poll interval (100 ms).
//
// Schedule lag, exactly, per quiet instance: the moment the claim statement that took it ran
// minus its due time. Bulkhead: the claim's `now` (its $1, the time the statement stamps into
// updated_at) minus the row's next_fire_at, both as the claim statement returns them (read where
// it runs, on the pool). graphile-worker: job.locked_at (its get-jobs statement's now()) minus
// job.run_at, read in the task. Neither includes the claim statement's own duration. A scenario
// ends when every quiet instance has been claimed; what is left of the flood is dropped.
//
// The per-tenant concurrency limit is set to the global one in every Bulkhead scenario, so the
// claim cap is the only fairness mechanism that differs between "cap on" and "cap off".
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import { loadConfig } from "../engine/config.ts";
import { createBuiltInHandlers } from "../engine/handlers/registry.ts";
import { createLogger } from "../engine/logger.ts";
import { Scheduler } from "../engine/scheduler/scheduler.ts";
import { StorageBackends, Storage, type NewInstance } from "../engine/storage/index.ts";
import { createTenant } from "../server/control/tenants.ts";
import { createPrisma } from "../server/db/prisma.ts";
import type { Cluster } from "../scripts/database.ts";
import { benchCluster, benchPool, cloneBenchDatabase, freshBenchDatabase, percentile, waitUntil } from "./cluster.ts";
import { postgresVersion, writeResults, type ResultTable } from "./results.ts";

const QUIET_TENANTS = Number(process.env.BENCH_QUIET_TENANTS ?? 3);
const PER_TENANT = Number(process.env.BENCH_QUIET_PER_TENANT ?? 100);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 10_000);
const CAP = Number(process.env.BENCH_FAIRNESS_CAP ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const FACTORS = (process.env.BENCH_NOISY_FACTORS ?? "10,100").split(",").map(Number);
/** Quiet arrivals start this long after the scheduler is told to start (it is up by then). */
const LEAD_MS = 500;
const POLL_MS = 100;
const SLEEPS_MS = [5, 10, 15, 20];
const TEMPLATE = "bench_fairness_template";
const NOISY = "noisy";
const quietIds = Array.from({ length: QUIET_TENANTS }, (_, q) => `quiet-${q}`);
const silent = new Logger(() => () => {});

interface Load {
  perTenant: number;
  windowMs: number;
  /** Noisy instances, all due at the start. */
  noisy: number;
}

interface Outcome {
  /** Schedule lag of every quiet instance, ms. */
  lags: number[];
  /** Noisy instances claimed while the quiet ones were being claimed, per second. */
  noisyPerSecond: number;
}

/** Quiet instance i of tenant q is due at start + (i + (q + 0.5) / tenants) * spacing. */
function quietDue(start: number, load: Load, q: number, i: number): Date {
  const spacing = load.windowMs / load.perTenant;
  return new Date(start + (i + (q + 0.5) / QUIET_TENANTS) * spacing);
}

/** The tenants and their sequences (one per sleep length), created once and copied per scenario. */
async function prepareTemplate(cluster: Cluster): Promise<Map<string, string[]>> {
  const url = await freshBenchDatabase(cluster, TEMPLATE, true);
  const config = loadConfig({ DATABASE_URL: url });
  const storage = new Storage(new StorageBackends(config.backends, { poolSize: 2 }));
  const prisma = createPrisma(url);
  const sequences = new Map<string, string[]>();
  try {
    for (const slug of [...quietIds, NOISY]) {
      const tenant = await createTenant(prisma, { slug, backendId: config.BULKHEAD_DEFAULT_BACKEND });
      const store = await storage.tenant(tenant.id);
      const ids: string[] = [];
      for (const ms of SLEEPS_MS) {
        const id = randomUUID();
        const name = `sleep-${ms}ms`;
        const definition = {
          id, tenant_id: tenant.id, namespace: "default", name, version: 1, created_at: new Date().toISOString(),
          blocks: [{ type: "step", id: "work", handler: "sleep", params: { duration_ms: ms } }],
        };
        await store.insertSequence({ id, namespace: "default", name, version: 1, definition, createdAt: new Date() });
        ids.push(id);
      }
      sequences.set(tenant.id, ids);
    }
  } finally {
    await Promise.all([storage.close(), prisma.$disconnect()]);
  }
  return sequences;
}

async function bulkhead(cluster: Cluster, sequences: Map<string, string[]>, load: Load, cap: number): Promise<Outcome> {
  const url = await cloneBenchDatabase(cluster, TEMPLATE, "bench_fairness");
  const config = loadConfig({
    DATABASE_URL: url, BULKHEAD_MAX_INSTANCES_IN_FLIGHT: String(CONCURRENCY), BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: String(CONCURRENCY),
    BULKHEAD_MAX_CONCURRENT_STEPS: String(CONCURRENCY), BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: String(CONCURRENCY),
    BULKHEAD_MAX_INSTANCES_PER_TENANT: String(cap), BULKHEAD_TICK_MS: String(POLL_MS),
  });
  const storage = new Storage(new StorageBackends(config.backends, { poolSize: CONCURRENCY + 4 }));
  const backend = storage.backends.primary;
  const instance = (tenantId: string, i: number, nextFireAt: Date): NewInstance => ({
    namespace: "default", sequenceId: sequences.get(tenantId)![i % SLEEPS_MS.length]!, priority: 1, context: { data: null, config: null },
    nextFireAt, timezone: "UTC", metadata: null, idempotencyKey: null, concurrencyKey: null, maxConcurrency: null, budget: null, dryRun: false,
  });

  const noisyStore = await storage.tenant(NOISY);
  const now = new Date();
  for (let from = 0; from < load.noisy; from += 1000) {
    await noisyStore.createInstances(Array.from({ length: Math.min(1000, load.noisy - from) }, (_, k) => instance(NOISY, from + k, now)));
  }

  // Lag where the claim runs: every claim_due_* statement's `now` and the rows it returns.
  const quiet = new Set(quietIds);
  const lags = new Map<string, number>();
  let noisyClaimed = 0;
  const query = backend.pool.query.bind(backend.pool) as (...args: unknown[]) => Promise<unknown>;
  (backend.pool as unknown as { query: unknown }).query = async (...args: unknown[]) => {
    const result = await query(...args);
    const statement = args[0] as { name?: string; values?: unknown[] };
    if (statement?.name?.startsWith("claim_due")) {
      const at = (statement.values![0] as Date).getTime();
      for (const row of (result as { rows: { id: string; tenant_id: string; next_fire_at: Date }[] }).rows) {
        if (!quiet.has(row.tenant_id)) noisyClaimed++;
        else if (!lags.has(row.id)) lags.set(row.id, at - row.next_fire_at.getTime());
      }
    }
    return result;
  };

  const scheduler = new Scheduler({
    backend, handlers: createBuiltInHandlers({ httpAllow: [] }), config, log: createLogger("bench", "warn"), ownerId: "bench-fairness",
  });
  const start = Date.now() + LEAD_MS;
  for (const [q, tenantId] of quietIds.entries()) {
    const store = await storage.tenant(tenantId);
    await store.createInstances(Array.from({ length: load.perTenant }, (_, i) => instance(tenantId, i, quietDue(start, load, q, i))));
  }
  const started = performance.now();
  await scheduler.start();
  const total = load.perTenant * QUIET_TENANTS;
  await waitUntil(async () => lags.size === total);
  const seconds = (performance.now() - started) / 1000;
  await scheduler.stop();
  await storage.close();
  return { lags: [...lags.values()], noisyPerSecond: noisyClaimed / seconds };
}

async function graphileWorker(cluster: Cluster, load: Load): Promise<Outcome> {
  const url = await freshBenchDatabase(cluster, "bench_fairness_graphile", false);
  // Our own pool (see benchPool): graphile-worker ends a pool it made without waiting, its error
  // handlers already removed, so a closing client could crash the run.
  const pgPool = benchPool(url, CONCURRENCY + 2);
  const utils = await makeWorkerUtils({ pgPool, logger: silent });
  await utils.migrate();
  const ms = (i: number) => SLEEPS_MS[i % SLEEPS_MS.length]!;
  for (let from = 0; from < load.noisy; from += 1000) {
    await utils.addJobs(Array.from({ length: Math.min(1000, load.noisy - from) }, (_, k) => ({ identifier: "work", payload: { ms: ms(from + k), quiet: false } })));
  }
  const start = Date.now() + LEAD_MS;
  for (let q = 0; q < QUIET_TENANTS; q++) {
    await utils.addJobs(Array.from({ length: load.perTenant }, (_, i) => ({ identifier: "work", payload: { ms: ms(i), quiet: true }, runAt: quietDue(start, load, q, i) })));
  }
  const lags: number[] = [];
  let noisyClaimed = 0;
  const started = performance.now();
  const runner = await run({
    pgPool, concurrency: CONCURRENCY, pollInterval: POLL_MS, noHandleSignals: true, logger: silent,
    taskList: {
      work: async (payload, helpers) => {
        const { ms: sleepMs, quiet } = payload as { ms: number; quiet: boolean };
        if (quiet) lags.push(helpers.job.locked_at!.getTime() - helpers.job.run_at.getTime());
        else noisyClaimed++;
        await delay(sleepMs);
      },
    },
  });
  const total = load.perTenant * QUIET_TENANTS;
  await waitUntil(async () => lags.length >= total);
  const seconds = (performance.now() - started) / 1000;
  await runner.stop();
  await utils.release();
  await pgPool.end();
  return { lags, noisyPerSecond: noisyClaimed / seconds };
}

interface Row {
  peer: "bulkhead" | "graphile-worker";
  scenario: string;
  noisy: number;
  outcome: Outcome;
}

const ms = (value: number) => value.toFixed(0);

export async function main(): Promise<void> {
  const startedAt = performance.now();
  const quietTotal = QUIET_TENANTS * PER_TENANT;
  const load = (factor: number): Load => ({ perTenant: PER_TENANT, windowMs: WINDOW_MS, noisy: factor * quietTotal });
  console.log(
    `fairness: ${QUIET_TENANTS} quiet tenants x ${PER_TENANT} one-step sleep instances due over ${WINDOW_MS / 1000} s; a noisy tenant ` +
    `with ${FACTORS.map((f) => `${f}x`).join(" / ")} that, due at once; claim cap ${CAP}, concurrency ${CONCURRENCY}, poll ${POLL_MS} ms`,
  );
  const cluster = await benchCluster();
  const rows: Row[] = [];
  let postgres: string | undefined;
  try {
    postgres = await postgresVersion(cluster.url("postgres"));
    const sequences = await prepareTemplate(cluster);
    process.stdout.write("warming up… ");
    const warm: Load = { perTenant: Math.max(1, Math.round(PER_TENANT / 5)), windowMs: WINDOW_MS / 5, noisy: quietTotal };
    await bulkhead(cluster, sequences, warm, CAP);
    await bulkhead(cluster, sequences, warm, 0);
    await graphileWorker(cluster, warm);
    console.log("done");

    const report = (row: Row) => {
      rows.push(row);
      const { lags, noisyPerSecond } = row.outcome;
      console.log(
        `  ${`${row.peer}, ${row.scenario}`.padEnd(36)} quiet lag p50 ${ms(percentile(lags, 50)).padStart(6)} ms, ` +
        `p99 ${ms(percentile(lags, 99)).padStart(6)} ms, max ${ms(Math.max(...lags)).padStart(6)} ms; noisy ${noisyPerSecond.toFixed(0)}/s`,
      );
    };
    report({ peer: "bulkhead", scenario: "alone", noisy: 0, outcome: await bulkhead(cluster, sequences, load(0), CAP) });
    for (const factor of FACTORS) {
      report({ peer: "bulkhead", scenario: `${factor}x, cap on (${CAP})`, noisy: factor, outcome: await bulkhead(cluster, sequences, load(factor), CAP) });
      report({ peer: "bulkhead", scenario: `${factor}x, cap off`, noisy: factor, outcome: await bulkhead(cluster, sequences, load(factor), 0) });
    }
    report({ peer: "graphile-worker", scenario: "alone", noisy: 0, outcome: await graphileWorker(cluster, load(0)) });
    for (const factor of FACTORS) {
      report({ peer: "graphile-worker", scenario: `${factor}x, FIFO`, noisy: factor, outcome: await graphileWorker(cluster, load(factor)) });
    }
  } finally {
    await cluster.stop();
  }

  const alone = (peer: Row["peer"]) => percentile(rows.find((r) => r.peer === peer && r.noisy === 0)!.outcome.lags, 99);
  console.log("quiet tenants' p99 schedule lag as a ratio to their p99 when alone (same engine):");
  for (const row of rows.filter((r) => r.noisy > 0)) {
    console.log(`  ${`${row.peer}, ${row.scenario}`.padEnd(36)} ${(percentile(row.outcome.lags, 99) / alone(row.peer)).toFixed(2)}x`);
  }
  const table: ResultTable = {
    columns: ["engine", "scenario", "noisy instances", "quiet lag p50 (ms)", "quiet lag p99 (ms)", "quiet lag max (ms)", "p99 / alone", "noisy claimed/s"],
    rows: rows.map((row) => {
      const p99 = percentile(row.outcome.lags, 99);
      return [
        row.peer, row.scenario, (row.noisy * quietTotal).toLocaleString("en-US"), ms(percentile(row.outcome.lags, 50)), ms(p99),
        ms(Math.max(...row.outcome.lags)), `${(p99 / alone(row.peer)).toFixed(2)}x`, row.outcome.noisyPerSecond.toFixed(0),
      ];
    }),
  };
  writeResults({
    bench: "fairness",
    summary:
      `${QUIET_TENANTS} quiet tenants x ${PER_TENANT} one-step \`sleep\` (5–20 ms) instances, due steadily over ${WINDOW_MS / 1000} s; ` +
      `one noisy tenant with ${FACTORS.map((f) => `${f}x`).join(" and ")} the quiet total, all due at the start. ` +
      `Concurrency ${CONCURRENCY} (per tenant too), poll interval ${POLL_MS} ms for both engines.`,
    tables: [table],
    notes: [
      "Schedule lag = when the claim statement that took the instance ran − its due time: for Bulkhead the claim's `now` − `next_fire_at` " +
      "(as the claim statement returns them), for graphile-worker `locked_at` − `run_at`. p99 is the nearest-rank percentile over every quiet instance.",
      `"p99 / alone" divides by the same engine's alone p99 (Bulkhead ${ms(alone("bulkhead"))} ms, graphile-worker ${ms(alone("graphile-worker"))} ms).`,
      `Cap on: BULKHEAD_MAX_INSTANCES_PER_TENANT=${CAP}; cap off: 0. graphile-worker has one FIFO queue (priority, run_at).`,
      "A scenario ends once every quiet instance is claimed; \"noisy claimed/s\" is the flood's rate over that time.",
    ],
    postgres,
    startedAt,
  });
}
