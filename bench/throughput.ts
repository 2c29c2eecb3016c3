// Throughput: N `noop` instances across T tenants, created through the storage layer, timed from
// the start of the scheduler to all `completed`, beside graphile-worker working N no-op jobs, same
// PostgreSQL, same process, same concurrency. The peer runs twice: at its documented performance
// settings (worker.graphile.org/docs/performance: a local queue of 500, job completions batched
// with no delay), the headline, and at its defaults. Two workloads: one step against one job, and
// three steps against three chained jobs (each job adds the next).
import { randomUUID } from "node:crypto";
import os from "node:os";
import { EventEmitter } from "node:events";
import { Logger, makeWorkerUtils, run, type WorkerEvents } from "graphile-worker";
import { loadConfig } from "../engine/config.ts";
import { createBuiltInHandlers } from "../engine/handlers/registry.ts";
import { createLogger } from "../engine/logger.ts";
import { Scheduler } from "../engine/scheduler/scheduler.ts";
import { TenantView } from "../engine/scheduler/tenant-view.ts";
import { StorageBackends, Storage } from "../engine/storage/index.ts";
import { createTenant } from "../server/control/tenants.ts";
import { createPrisma } from "../server/db/prisma.ts";
import { benchCluster, benchPool, freshBenchDatabase, median, waitUntil } from "./cluster.ts";
import { cpuMeter, type CpuUse } from "./cpu.ts";
import { BEST_PRESET } from "./graphile-preset.ts";
import { postgresVersion, writeResults } from "./results.ts";

const N = Number(process.env.BENCH_N ?? 5000);
/**
 * Each figure is the median of this many runs, the engines taking turns within a round: at its
 * best the peer works 5,000 jobs in about 0.2 s, where a stall of tens of milliseconds moved a
 * single run's rate by a quarter or more.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const T = Number(process.env.BENCH_TENANTS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/**
 * Instances claimed and held at once, of which CONCURRENCY run a step at a time: the engine's
 * counterpart of graphile-worker's local queue (500 at its best).
 */
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 512);
const silent = new Logger(() => () => {});

/** One `noop` step, or three in a row. */
const stepsOf = (steps: number) => Array.from({ length: steps }, (_, i) => ({ type: "step", id: `noop${i + 1}`, handler: "noop" }));

async function bulkhead(url: string, n: number, options: { metrics?: boolean; steps?: number } = {}): Promise<{ perSecond: number; claimMedianMs: number; cpu: CpuUse }> {
  const { metrics = true, steps = 1 } = options;
  const config = loadConfig({ DATABASE_URL: url, BULKHEAD_MAX_INSTANCES_IN_FLIGHT: String(IN_FLIGHT), BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: String(IN_FLIGHT),
    BULKHEAD_MAX_CONCURRENT_STEPS: String(CONCURRENCY), BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: String(CONCURRENCY),
  });
  const storage = new Storage(new StorageBackends(config.backends, { poolSize: CONCURRENCY + 4 }));
  const backend = storage.backends.primary;
  const claimMs: number[] = [];
  const statements = new Map<string, number>();
  const statementMs = new Map<string, number>();
  // Count and time every statement where it runs, on the clients themselves (the commits run in
  // transactions on checked-out clients): the claim statement is every query named claim_due_*.
  const record = (statement: string, ms: number) => {
    statements.set(statement, (statements.get(statement) ?? 0) + 1);
    statementMs.set(statement, (statementMs.get(statement) ?? 0) + ms);
    if (statement.startsWith("claim_due")) claimMs.push(ms);
  };
  const counted = (query: (...args: unknown[]) => unknown) => (...args: unknown[]) => {
    const first = args[0] as { name?: string; text?: string } | string;
    const statement = typeof first === "string" ? first.split(/\s/, 1)[0]!.toUpperCase() : first?.name ?? first?.text?.split(/\s/, 1)[0]?.toUpperCase() ?? "unnamed";
    const started = performance.now();
    const callback = args.at(-1);
    if (typeof callback === "function") {
      // pool.query passes a callback: time the statement to it.
      args[args.length - 1] = (...result: unknown[]) => {
        record(statement, performance.now() - started);
        return (callback as (...a: unknown[]) => unknown)(...result);
      };
      return query(...args);
    }
    const pending = query(...args) as Promise<unknown>;
    return pending.finally(() => record(statement, performance.now() - started));
  };
  // pool.query runs on a client too: counting clients' statements counts everything once.
  // Each client once, as it is first made (pool.query checks clients out with a callback).
  const wrapped = new WeakSet<object>();
  backend.pool.on("connect", (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    (client as unknown as { query: unknown }).query = counted(client.query.bind(client) as (...args: unknown[]) => unknown);
  });

  const sql = benchPool(url, 2);
  // Tenants, sequences and instances are created the way the REST API creates them.
  const prisma = createPrisma(url);
  for (let t = 0; t < T; t++) {
    const tenant = await createTenant(prisma, { slug: `bench-${t}`, backendId: config.BULKHEAD_DEFAULT_BACKEND });
    const store = await storage.tenant(tenant.id);
    const sequenceId = randomUUID();
    const name = `noop-x${steps}`;
    const definition = { id: sequenceId, tenant_id: tenant.id, namespace: "default", name, version: 1, created_at: new Date().toISOString(), blocks: stepsOf(steps) };
    await store.insertSequence({ id: sequenceId, namespace: "default", name, version: 1, definition, createdAt: new Date() });
    const instance = {
      namespace: "default", sequenceId, priority: 1, context: { data: null, config: null }, nextFireAt: null, timezone: "UTC",
      metadata: null, idempotencyKey: null, concurrencyKey: null, maxConcurrency: null, budget: null, dryRun: false,
    };
    for (let left = Math.ceil(n / T); left > 0; left -= 1000) await store.createInstances(Array(Math.min(1000, left)).fill(instance));
  }
  await prisma.$disconnect();
  const total = Math.ceil(n / T) * T;
  const cpu = cpuMeter();
  const started = performance.now();
  // As engine/main.ts wires it: the scheduler claims only tenants placed on its backend.
  const tenants = new TenantView(storage, createLogger("bench", "warn"));
  await tenants.start();
  const scheduler = new Scheduler({
    backend, handlers: createBuiltInHandlers({ httpAllow: [] }), config, log: createLogger("bench", "warn"), ownerId: "bench", metrics, tenants,
  });
  await scheduler.start();
  // Watched in the process, then confirmed in the database once, as the peer's end is (see
  // graphileWorker): counting task_instances every 10 ms took 8.5 ms a poll at 20,000 rows, CPU the
  // engine would have been charged for.
  await waitUntil(async () => (scheduler.ends.get("completed") ?? 0) >= total);
  await waitUntil(async () => (await sql.query("SELECT count(*)::int AS n FROM task_instances WHERE state = 'completed'")).rows[0].n === total);
  const seconds = (performance.now() - started) / 1000;
  const used = cpu();
  await scheduler.stop();
  tenants.stop();
  await Promise.all([sql.end(), storage.close()]);
  if (process.env.BENCH_VERBOSE) {
    const perInstance = [...statements].filter(([, v]) => v / total >= 0.001).sort((a, b) => b[1] - a[1]);
    for (const [k, v] of perInstance) console.log(`  ${k}: ${(v / total).toFixed(3)} per instance, mean ${((statementMs.get(k) ?? 0) / v).toFixed(2)} ms`);
    console.log(`  all statements: ${([...statements.values()].reduce((a, b) => a + b, 0) / total).toFixed(3)} per instance`);
  }
  return { perSecond: total / seconds, claimMedianMs: median(claimMs), cpu: used };
}

type PeerSettings = "best" | "default";


async function graphileWorker(url: string, n: number, settings: PeerSettings, chain = 1): Promise<{ perSecond: number; cpu: CpuUse }> {
  // Our own pool (see benchPool): graphile-worker ends a pool it made without waiting, its error
  // handlers already removed, so a closing client could crash the run.
  const pgPool = benchPool(url, CONCURRENCY + 2);
  const utils = await makeWorkerUtils({ pgPool, logger: silent });
  await utils.migrate();
  const jobs = Array.from({ length: n }, () => ({ identifier: "job1", payload: {} }));
  for (let i = 0; i < jobs.length; i += 1000) await utils.addJobs(jobs.slice(i, i + 1000));
  // job1 adds job2, … up to job<chain>, which does nothing: a chain of `chain` jobs per run.
  const taskList = Object.fromEntries(Array.from({ length: chain }, (_, i) => [
    `job${i + 1}`,
    i + 1 < chain ? async (_payload: unknown, helpers: { addJob(identifier: string, payload: unknown): Promise<unknown> }) => { await helpers.addJob(`job${i + 2}`, {}); } : async () => {},
  ]));
  const sql = benchPool(url, 1);
  const cpu = cpuMeter();
  const started = performance.now();
  let completed = 0;
  const events: WorkerEvents = new EventEmitter();
  events.on("job:complete", () => void completed++);
  const runner = await run({
    pgPool, concurrency: CONCURRENCY, pollInterval: 100, noHandleSignals: true, taskList, logger: silent, events,
    ...(settings === "best" ? { preset: BEST_PRESET } : {}),
  });
  // Its jobs' ends counted in the process, then the job table polled until empty (completions are
  // batched, so they reach the table a little after the event).
  await waitUntil(async () => completed >= n * chain);
  await waitUntil(async () => (await sql.query("SELECT count(*)::int AS n FROM graphile_worker._private_jobs")).rows[0].n === 0);
  const seconds = (performance.now() - started) / 1000;
  const used = cpu();
  await runner.stop();
  await Promise.all([sql.end(), utils.release()]);
  await pgPool.end();
  return { perSecond: n / seconds, cpu: used };
}

export async function main(): Promise<void> {
  const startedAt = performance.now();
  console.log(`throughput: ${N} noop instances over ${T} tenants, concurrency ${CONCURRENCY}, ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? "?"}`);
  const cluster = await benchCluster();
  const rate = (n: number) => Math.round(n).toLocaleString("en-US");
  try {
    // Warm both up (JIT, prepared statements, catalog caches) before measuring.
    process.stdout.write("warming up… ");
    await bulkhead(await freshBenchDatabase(cluster, "bench_bulkhead", true), 500);
    await graphileWorker(await freshBenchDatabase(cluster, "bench_graphile", false), 500, "best");
    console.log("done");

    const rows: string[][] = [];
    const runs = (rates: number[]) => rates.map(rate).join(" / ");
    /** The median CPU per instance (job, chain) of runs: [this process, PostgreSQL], in µs. */
    const cpuOf = (measured: { cpu: CpuUse }[], n: number) => [
      Math.round((median(measured.map((m) => m.cpu.processMs)) * 1000) / n), Math.round((median(measured.map((m) => m.cpu.postgresMs)) * 1000) / n),
    ];
    const cpuCells = (measured: { cpu: CpuUse }[], n: number) => cpuOf(measured, n).map((us) => (Number.isFinite(us) ? String(us) : "–"));
    for (const steps of [1, 3]) {
      const label = steps === 1 ? "one step" : "three steps";
      const jobs = steps === 1 ? "jobs" : "chains of 3 jobs";
      const ours: { perSecond: number; claimMedianMs: number; cpu: CpuUse }[] = [];
      const peers = { best: [] as { perSecond: number; cpu: CpuUse }[], default: [] as { perSecond: number; cpu: CpuUse }[] };
      for (let round = 1; round <= ROUNDS; round++) {
        ours.push(await bulkhead(await freshBenchDatabase(cluster, "bench_bulkhead", true), N, { steps }));
        for (const settings of ["best", "default"] as const) {
          peers[settings].push(await graphileWorker(await freshBenchDatabase(cluster, "bench_graphile", false), N, settings, steps));
        }
        console.log(`round ${round}, ${label}: bulkhead ${rate(ours.at(-1)!.perSecond)} instances/s, graphile-worker best ${rate(peers.best.at(-1)!.perSecond)} and default ${rate(peers.default.at(-1)!.perSecond)} ${jobs}/s`);
      }
      const oursMedian = median(ours.map((r) => r.perSecond));
      const claimMedian = median(ours.map((r) => r.claimMedianMs));
      const [engineUs, postgresUs] = cpuOf(ours, N);
      console.log(`bulkhead, ${label}: ${rate(oursMedian)} instances/s (median of ${runs(ours.map((r) => r.perSecond))}), claim statement median ${claimMedian.toFixed(2)} ms; CPU per instance: engine ${engineUs} µs, PostgreSQL ${postgresUs} µs`);
      rows.push([`Bulkhead, ${label}`, `${rate(oursMedian)} instances/s`, runs(ours.map((r) => r.perSecond)), claimMedian.toFixed(2), ...cpuCells(ours, N), ""]);
      for (const settings of ["best", "default"] as const) {
        const peer = median(peers[settings].map((r) => r.perSecond));
        const ratio = (oursMedian / peer).toFixed(2);
        const [workerUs, peerPostgresUs] = cpuOf(peers[settings], N);
        console.log(`graphile-worker ${settings}, ${label}: ${rate(peer)} ${jobs}/s (median of ${runs(peers[settings].map((r) => r.perSecond))}); CPU per ${steps === 1 ? "job" : "chain"}: worker ${workerUs} µs, PostgreSQL ${peerPostgresUs} µs`);
        console.log(`throughput ratio (bulkhead / graphile-worker ${settings})${steps === 1 ? "" : ", three steps"}: ${ratio}`);
        rows.push([`graphile-worker at its ${settings === "best" ? "best (performance preset)" : "defaults"}, ${steps === 1 ? "one job" : "three chained jobs"}`, `${rate(peer)} ${jobs}/s`, runs(peers[settings].map((r) => r.perSecond)), "", ...cpuCells(peers[settings], N), `Bulkhead ${ratio}x`]);
      }
    }
    // The cost of per-tenant metrics: the one-step run with collection off.
    const bare: { perSecond: number; cpu: CpuUse }[] = [];
    for (let round = 1; round <= ROUNDS; round++) bare.push(await bulkhead(await freshBenchDatabase(cluster, "bench_bulkhead", true), N, { metrics: false }));
    const bareRates = bare.map((r) => r.perSecond);
    console.log(`bulkhead without tenant metrics: ${rate(median(bareRates))} instances/s (median of ${runs(bareRates)})`);
    rows.push(["Bulkhead, one step, tenant metrics off", `${rate(median(bareRates))} instances/s`, runs(bareRates), "", ...cpuCells(bare, N), ""]);
    writeResults({
      bench: "throughput",
      summary: `${N.toLocaleString("en-US")} \`noop\` instances over ${T} tenants against ${N.toLocaleString("en-US")} graphile-worker 0.17.3 jobs (or chains of three); concurrency ${CONCURRENCY}, same PostgreSQL, same process.`,
      tables: [{ columns: ["run", "per second (median)", "runs", "claim statement median (ms)", "engine / worker CPU per instance (µs)", "PostgreSQL CPU per instance (µs)", "ratio"], rows }],
      notes: [
        `Each figure is the median of ${ROUNDS} runs on fresh databases, the engines taking turns within each round. Timed from the scheduler's (or runner's) start until every instance is \`completed\` (every job gone): both ends are watched in the process (the scheduler's count of completed runs, graphile-worker's \`job:complete\` events), then confirmed in the database. Both warmed up first with 500.`,
        "graphile-worker's best: `preset.worker` with `localQueue: { size: 500 }`, `completeJobBatchDelay: 0`, `failJobBatchDelay: 0` (its Performance page).",
        "CPU per instance (per job, per chain of three): over the timed window, the median of the runs, of the benchmark's own process (the engine, or graphile-worker's runner; garbage collection included) and of every PostgreSQL process (read from /proc, 10 ms resolution), divided by the instances run. Both share the machine's cores: the throughput is bound by their sum.",
      ],
      postgres: await postgresVersion(cluster.url("postgres")),
      startedAt,
    });
  } finally {
    await cluster.stop();
  }
}
