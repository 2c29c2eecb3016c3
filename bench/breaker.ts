// Breaker: the closed-path check, the one every step dispatch pays, beside a naive registry keyed
// by a concatenated `${tenant}:${handler}` string, same process, same keys, same access order.
// Figures: checks per second (median of interleaved rounds) and bytes allocated per check. The
// bytes are counted, not inferred from a heap delta after a GC (which would show only what
// survives, 0 for both): after a GC, allocation = the heap's growth + what every collection
// during the run reclaimed, as V8's GCProfiler reports it.
import { spawn } from "node:child_process";
import v8 from "node:v8";
import { CircuitBreakerRegistry } from "../engine/breakers/registry.ts";
import { writeResults } from "./results.ts";

const CHECKS = Number(process.env.BENCH_CHECKS ?? 10_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TENANTS = 1000;
const HANDLERS = ["http_request", "llm_call", "send_sms", "charge_card", "enrich_lead", "grpc_call", "plugin_sidecar", "crm_sync"];

interface Checker {
  check(tenantId: string, handler: string, now: number): number;
}

/**
 * The peer: one Map with a composite string key. Every check builds the key (a new string, then
 * hashed), and "a:b" + "c" collides with "a" + "b:c". The state logic is kept to the closed path.
 */
class NaiveRegistry implements Checker {
  private readonly breakers = new Map<string, { state: "closed" | "open"; failureCount: number; openedAt: number }>();
  constructor(private readonly cooldownMs: number) {}
  add(tenantId: string, handler: string): void {
    this.breakers.set(`${tenantId}:${handler}`, { state: "closed", failureCount: 1, openedAt: 0 });
  }
  check(tenantId: string, handler: string, now: number): number {
    const entry = this.breakers.get(`${tenantId}:${handler}`);
    if (entry === undefined || entry.state === "closed") return 0;
    return Math.max(1, entry.openedAt + this.cooldownMs - now);
  }
}

type Gc = () => void;

/** `global.gc` exists only under --expose-gc: re-run this benchmark with it when missing. */
async function respawnWithGc(): Promise<void> {
  if (process.env.BULKHEAD_BENCH_RESPAWNED) throw new Error("--expose-gc did not expose global.gc");
  // Re-run this benchmark alone (not `all`), under the name it was asked for in RESULTS.md.
  const child = spawn(process.execPath, ["--expose-gc", ...process.execArgv, process.argv[1]!, "breaker"], {
    stdio: "inherit", env: { ...process.env, BULKHEAD_BENCH_RESPAWNED: "1", BULKHEAD_BENCH_INVOKED: process.argv[2] ?? "breaker" },
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  if (code !== 0) process.exitCode = code ?? 1;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function main(): Promise<void> {
  const startedAt = performance.now();
  const gc = (globalThis as { gc?: Gc }).gc;
  if (!gc) return respawnWithGc();

  // Tenant ids shaped like the engine's (UUIDs); every pair holds a closed entry with one
  // failure in both registries, so both do full lookups that hit.
  const tenants = Array.from({ length: TENANTS }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
  const ours = new CircuitBreakerRegistry({ defaults: { threshold: 5, cooldownMs: 60_000 } });
  const naive = new NaiveRegistry(60_000);
  for (const t of tenants) {
    for (const h of HANDLERS) {
      ours.recordFailure(t, h, 0);
      naive.add(t, h);
    }
  }
  // One shuffled access order, reused by both: a pair index picks (tenant, handler).
  const order = new Uint32Array(1 << 16);
  let seed = 42;
  for (let i = 0; i < order.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    order[i] = seed % (TENANTS * HANDLERS.length);
  }

  // One loop per registry, so each call site sees one class (monomorphic), as in the engine.
  let sink = 0;
  const tenantOf = (pair: number) => tenants[(pair / HANDLERS.length) | 0]!;
  const handlerOf = (pair: number) => HANDLERS[pair % HANDLERS.length]!;
  const runOurs = (n: number) => {
    for (let i = 0; i < n; i++) sink += ours.check(tenantOf(order[i & 0xffff]!), handlerOf(order[i & 0xffff]!), i);
  };
  const runNaive = (n: number) => {
    for (let i = 0; i < n; i++) sink += naive.check(tenantOf(order[i & 0xffff]!), handlerOf(order[i & 0xffff]!), i);
  };
  const run = (registry: Checker, n: number) => (registry === ours ? runOurs(n) : runNaive(n));
  const rate = (registry: Checker) => {
    const started = performance.now();
    run(registry, CHECKS);
    return CHECKS / ((performance.now() - started) / 1000);
  };
  const bytesPerCheck = (registry: Checker) => {
    gc();
    const profiler = new v8.GCProfiler();
    const before = v8.getHeapStatistics().used_heap_size;
    profiler.start();
    run(registry, CHECKS);
    const after = v8.getHeapStatistics().used_heap_size;
    const reclaimed = profiler.stop().statistics.reduce(
      (sum, c) => sum + Math.max(0, c.beforeGC.heapStatistics.usedHeapSize - c.afterGC.heapStatistics.usedHeapSize), 0);
    return (after - before + reclaimed) / CHECKS;
  };

  // Warm both up (compiled before timing), then interleave rounds so drift hits both alike.
  run(ours, CHECKS / 10);
  run(naive, CHECKS / 10);
  const oursRates: number[] = [];
  const naiveRates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    gc();
    naiveRates.push(rate(naive));
    gc();
    oursRates.push(rate(ours));
  }
  const naiveBytes = bytesPerCheck(naive);
  const oursBytes = bytesPerCheck(ours);
  if (sink !== 0) throw new Error("a closed breaker answered non-zero");

  const oursRate = median(oursRates);
  const naiveRate = median(naiveRates);
  const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
  console.log(`breaker closed-path check: ${TENANTS} tenants x ${HANDLERS.length} handlers, ${fmt(CHECKS)} checks a round, median of ${ROUNDS} rounds`);
  console.log(`  naive \`\${tenant}:\${handler}\` key: ${fmt(naiveRate)} checks/s, ${naiveBytes.toFixed(2)} bytes/check`);
  console.log(`  nested maps (ours):            ${fmt(oursRate)} checks/s, ${oursBytes.toFixed(2)} bytes/check`);
  console.log(`  ours / naive: ${(oursRate / naiveRate).toFixed(2)}x the checks per second`);
  console.log(`breaker check: ${Math.round(oursRate)} checks/s, ${oursBytes.toFixed(2)} bytes/check`);
  writeResults({
    bench: "breaker",
    summary: `The closed-path breaker check, ${TENANTS} tenants x ${HANDLERS.length} handlers, beside a Map keyed by \`\${tenant}:\${handler}\`; ${fmt(CHECKS)} checks a round, median of ${ROUNDS} interleaved rounds.`,
    tables: [{
      columns: ["registry", "checks/s", "bytes allocated/check"],
      rows: [
        ["nested maps (Bulkhead)", fmt(oursRate), oursBytes.toFixed(2)],
        ["naive `${tenant}:${handler}` key", fmt(naiveRate), naiveBytes.toFixed(2)],
        ["ratio (Bulkhead / naive)", `${(oursRate / naiveRate).toFixed(2)}x`, ""],
      ],
    }],
    notes: ["Bytes allocated = heap growth + what every GC during the run reclaimed (V8 GCProfiler), after a GC."],
    startedAt,
  });
}
