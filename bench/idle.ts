// Idle: what an engine costs when nothing is due, on the console data set (10,000 tenants on two
// backends, about 1,000,000 instances, schedules and scheduled work weeks away: bench/console-seed.ts),
// against graphile-worker's runner at its best settings idling on the same cluster with no jobs.
// CPU of the engine's process (or the peer's, this one) and of every PostgreSQL process over
// WINDOW_S seconds, after WARMUP_S. An idle engine still keeps its tenants' hour of figures
// moving (tenant_activity_hour, every minute) and looks for due work; it should cost little else.
import { EventEmitter } from "node:events";
import { Logger, makeWorkerUtils, run, type WorkerEvents } from "graphile-worker";
import { benchPool } from "./cluster.ts";
import { cpuMeter, processCpuMs } from "./cpu.ts";
import { openDataSet, processEnv, refreshAllMetrics, start, stop } from "./console.ts";
import { BEST_PRESET } from "./graphile-preset.ts";
import { postgresVersion, writeResults } from "./results.ts";

const WARMUP_S = Number(process.env.BENCH_IDLE_WARMUP_S ?? 15);
const WINDOW_S = Number(process.env.BENCH_IDLE_WINDOW_S ?? 30);

const say = (line: string) => console.log(`idle: ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const silent = new Logger(() => () => {});

interface Use {
  processMs: number;
  postgresMs: number;
}

async function bulkheadEngine(urls: Record<string, string>): Promise<Use> {
  const engine = start(["engine/main.ts"], processEnv(urls));
  try {
    await sleep(WARMUP_S * 1000);
    if (engine.exitCode !== null) throw new Error("the engine exited");
    const process0 = processCpuMs(engine.pid!);
    const meter = cpuMeter();
    await sleep(WINDOW_S * 1000);
    const { postgresMs } = meter();
    return { processMs: processCpuMs(engine.pid!) - process0, postgresMs };
  } finally {
    await stop(engine);
  }
}

async function graphileWorker(url: string): Promise<Use> {
  const pgPool = benchPool(url, 4);
  const utils = await makeWorkerUtils({ pgPool, logger: silent });
  await utils.migrate();
  const events: WorkerEvents = new EventEmitter();
  const runner = await run({ pgPool, concurrency: 32, noHandleSignals: true, taskList: { job: async () => {} }, logger: silent, events, preset: BEST_PRESET });
  try {
    await sleep(WARMUP_S * 1000);
    const meter = cpuMeter();
    await sleep(WINDOW_S * 1000);
    return meter();
  } finally {
    await runner.stop();
    await utils.release();
    await pgPool.end();
  }
}

export async function main(): Promise<void> {
  const startedAt = performance.now();
  const { cluster, urls } = await openDataSet();
  try {
    await refreshAllMetrics(urls);
    await cluster.ensureDatabase("bench_idle_graphile");
    say(`Bulkhead's engine over both backends: ${WARMUP_S} s to start, then ${WINDOW_S} s measured`);
    const ours = await bulkheadEngine(urls);
    say(`graphile-worker (best settings), no jobs: the same`);
    const peer = await graphileWorker(cluster.url("bench_idle_graphile"));
    const perCore = (ms: number) => `${((100 * ms) / (WINDOW_S * 1000)).toFixed(1)}%`;
    const rows = [
      ["Bulkhead engine (10,000 tenants, 2 backends)", ours.processMs, perCore(ours.processMs), ours.postgresMs, perCore(ours.postgresMs)],
      ["graphile-worker runner, best settings", Math.round(peer.processMs), perCore(peer.processMs), peer.postgresMs, perCore(peer.postgresMs)],
    ];
    const total = (u: Use) => u.processMs + u.postgresMs;
    const ratio = total(ours) / Math.max(1, total(peer));
    for (const row of rows) say(row.join(" | "));
    console.log(`idle CPU ratio (bulkhead / graphile-worker best): ${ratio.toFixed(1)}`);
    writeResults({
      bench: "idle",
      summary: `An engine with nothing due over ${WINDOW_S} s, on the console data set (10,000 tenants on two backends, about 1,000,000 instances, every scheduled instance and cron schedule weeks away, tenant_metrics minutes of the last 3 hours for every tenant), after ${WARMUP_S} s to start; against graphile-worker's runner at its best settings with no jobs, on the same cluster.`,
      tables: [{
        columns: ["idle process", "its CPU (ms)", "of one core", "PostgreSQL CPU (ms)", "of one core"],
        rows: [...rows, ["ratio, both together", "", "", "", `${ratio.toFixed(1)}x`]],
      }],
      notes: [
        "The engine still moves every tenant's hour of figures on by a minute each minute (tenant_activity_hour: 10,000 tenants active in the data set's last hour), looks up the next due time each tick, claims once per idle interval and sweeps leases and waits. graphile-worker has no tenants and no figures to keep.",
      ],
      postgres: await postgresVersion(urls.primary!),
      startedAt,
    });
  } finally {
    await cluster.stop();
  }
}
