// Fan-out: 3 quiet tenants start one-step instances at a steady rate while a noisy tenant runs
// 100-branch parallels of the same slow vendor call, 10x and then 100x the quiet tenants' steps,
// due at a steady rate over the same window.
// What a quiet tenant feels is its step-start lag: when the vendor call began, minus when the
// instance was due. Each is a ratio to the quiet lag alone, with the step slots as configured
// (32 per tenant of 128), with the per-tenant limit off (128 of 128: round robin only), and with
// no step slots at all (every runnable branch starts at once, as before step slots existed).
import os from "node:os";
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { loadConfig } from "../engine/config.ts";
import { HandlerRegistry } from "../engine/handlers/registry.ts";
import { createLogger } from "../engine/logger.ts";
import { Scheduler } from "../engine/scheduler/scheduler.ts";
import { Storage, StorageBackends, type NewInstance } from "../engine/storage/index.ts";
import { createTenant } from "../server/control/tenants.ts";
import { createPrisma } from "../server/db/prisma.ts";
import { benchCluster, freshBenchDatabase, median, percentile, waitUntil } from "./cluster.ts";
import { postgresVersion, writeResults } from "./results.ts";

const QUIET_TENANTS = 3;
const QUIET_PER_TENANT = Number(process.env.BENCH_QUIET_PER_TENANT ?? 100);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 4_000);
const VENDOR_MS = Number(process.env.BENCH_VENDOR_MS ?? 50);
const BRANCHES = 100;
const FACTORS = [10, 100];
const SETUP_LEAD_MS = 2_000;
// p99 of 300 lags is the third-worst lag, and this machine's fsync stalls now and then for 100–250
// ms (with fsync off the tail alone stays under 100 ms): each figure is the median of REPEAT runs.
const REPEAT = Number(process.env.BENCH_FANOUT_REPEAT ?? 3);

type Slots = { name: string; perTenant: number; global: number };
const SLOTS: Slots[] = [
  { name: "step slots 32 per tenant of 128", perTenant: 32, global: 128 },
  { name: "per-tenant limit off (128 of 128)", perTenant: 128, global: 128 },
  { name: "no step slots", perTenant: 1_000_000, global: 1_000_000 },
];

async function runOnce(url: string, slots: Slots, noisySteps: number): Promise<number[]> {
  const config = loadConfig({
    DATABASE_URL: url, BULKHEAD_MAX_CONCURRENT_STEPS: String(slots.global), BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: String(slots.perTenant),
  });
  const storage = new Storage(new StorageBackends(config.backends, { poolSize: config.BULKHEAD_POOL_SIZE }));
  const prisma = createPrisma(url);
  const run = randomUUID().slice(0, 8);
  const due = new Map<string, number>();
  const lags: number[] = [];
  const vendor = async (input: { instanceId: string; signal: AbortSignal }) => {
    const dueAt = due.get(input.instanceId);
    if (dueAt !== undefined) lags.push(Date.now() - dueAt);
    await delay(VENDOR_MS, undefined, { signal: input.signal }).catch(() => {});
    return { kind: "success" as const, output: {} };
  };
  const sequenceOf = async (tenantId: string, blocks: unknown[]) => {
    const id = randomUUID();
    const store = await storage.tenant(tenantId);
    const definition = { id, tenant_id: tenantId, namespace: "default", name: "s", version: 1, created_at: new Date().toISOString(), blocks };
    await store.insertSequence({ id, namespace: "default", name: "s", version: 1, definition, createdAt: new Date() });
    return { store, id };
  };
  const instance = (sequenceId: string, nextFireAt: Date | null): NewInstance => ({
    namespace: "default", sequenceId, priority: 1, context: { data: null, config: null }, nextFireAt, timezone: "UTC",
    metadata: null, idempotencyKey: null, concurrencyKey: null, maxConcurrency: null, budget: null, dryRun: false,
  });
  try {
    const branches = Array.from({ length: BRANCHES }, (_, i) => [{ type: "step", id: `b${i}`, handler: "vendor" }]);
    const noisy = await createTenant(prisma, { slug: `noisy-${run}`, backendId: "primary" });
    const fan = await sequenceOf(noisy.id, [{ type: "parallel", id: "fan", branches }]);
    // Every instance is due within the window from `start` on, the noisy tenant's parallels spread
    // over it like the quiet steps, so its load overlaps theirs whatever its speed. Setup (the
    // inserts) must end before `start`, or "alone" would measure setup.
    const start = Date.now() + SETUP_LEAD_MS;
    const noisyInstances = Math.ceil(noisySteps / BRANCHES);
    if (noisyInstances > 0) {
      await fan.store.createInstances(Array.from({ length: noisyInstances }, (_, i) => instance(fan.id, new Date(start + Math.round((i * WINDOW_MS) / noisyInstances)))));
    }
    for (let q = 0; q < QUIET_TENANTS; q++) {
      const quiet = await createTenant(prisma, { slug: `quiet-${q}-${run}`, backendId: "primary" });
      const one = await sequenceOf(quiet.id, [{ type: "step", id: "one", handler: "vendor" }]);
      for (let i = 0; i < QUIET_PER_TENANT; i++) {
        const at = start + Math.round(((i + q / QUIET_TENANTS) * WINDOW_MS) / QUIET_PER_TENANT);
        const { id } = await one.store.createInstance(instance(one.id, new Date(at)));
        due.set(id, at);
      }
    }
    const scheduler = new Scheduler({
      backend: storage.backends.primary, handlers: new HandlerRegistry([["vendor", vendor]]), config,
      log: createLogger("bench", "warn"), ownerId: `bench-fanout-${run}`, metrics: false,
    });
    await scheduler.start();
    if (Date.now() > start) throw new Error(`setup took longer than ${SETUP_LEAD_MS} ms: raise SETUP_LEAD_MS`);
    await waitUntil(async () => lags.length === QUIET_TENANTS * QUIET_PER_TENANT, 20);
    await scheduler.stop();
    return lags;
  } finally {
    await Promise.all([storage.close(), prisma.$disconnect()]);
  }
}

export async function main(): Promise<void> {
  const startedAt = performance.now();
  console.log(`fanout: ${QUIET_TENANTS} quiet tenants × ${QUIET_PER_TENANT} one-step instances over ${WINDOW_MS} ms; a noisy tenant's ${BRANCHES}-branch parallels at ${FACTORS.join("x, ")}x; vendor ${VENDOR_MS} ms; ${os.cpus().length} cores`);
  const cluster = await benchCluster();
  try {
    const rows: (string | number)[][] = [];
    const lines: string[] = [];
    let postgres = "";
    process.stdout.write("warming up… ");
    await runOnce(await freshBenchDatabase(cluster, "bench_fanout", true), SLOTS[0]!, 0);
    console.log("done");
    for (const slots of SLOTS) {
      const url = await freshBenchDatabase(cluster, "bench_fanout", true);
      postgres ||= await postgresVersion(url);
      const p99Of = async (noisySteps: number) => {
        const runs: number[] = [];
        for (let i = 0; i < REPEAT; i++) runs.push(percentile(await runOnce(url, slots, noisySteps), 99));
        return median(runs);
      };
      const alone = await p99Of(0);
      const row: (string | number)[] = [slots.name, `${alone} ms`];
      for (const factor of FACTORS) {
        const p99 = await p99Of(factor * QUIET_TENANTS * QUIET_PER_TENANT);
        row.push(`${p99} ms (${(p99 / alone).toFixed(2)}×)`);
        lines.push(`quiet step-start p99 ratio (${slots.name}, noisy ${factor}x / alone): ${(p99 / alone).toFixed(2)}`);
      }
      rows.push(row);
      console.log(`${slots.name}: alone ${row.slice(1).join(", ")}`);
    }
    for (const line of lines) console.log(line);
    writeResults({
      bench: "fanout", startedAt, postgres,
      summary: "Quiet tenants' step-start lag (due → vendor call began), p99, alone and beside a noisy tenant's 100-branch fan-out, with Bulkhead's step slots as configured, with the per-tenant limit off, and with none.",
      tables: [{ columns: ["step slots", "quiet p99 alone", ...FACTORS.map((f) => `noisy ${f}x (ratio to alone)`)], rows }],
      notes: [
        `${QUIET_TENANTS} quiet tenants × ${QUIET_PER_TENANT} instances spread over ${WINDOW_MS} ms, the noisy tenant's parallels due at a steady rate over the same window; each step calls an in-process vendor that answers after ${VENDOR_MS} ms.`,
        `Each p99 is the median of ${REPEAT} runs (BENCH_FANOUT_REPEAT): PostgreSQL runs with fsync on, and this machine's fsync stalls for 100–250 ms now and then, which alone decides the tail of a single run.`,
        "The goal is ≤ 1.25× at both loads with the step slots on. Alone, the lag stays under one scheduler tick (100 ms): every run that ends wakes the claim loop.",
      ],
    });
    console.log('(written to bench/RESULTS.md, section "fanout")');
  } finally {
    await cluster.stop();
  }
}
