// The closed-path check allocates nothing. Counted, not inferred from a heap delta: V8's
// GCProfiler reports what every collection during the run reclaimed, so allocated bytes are the
// heap's growth plus what was collected. bench/breaker.ts prints the same figure per check.
import v8 from "node:v8";
import { describe, expect, it } from "vitest";
import { CircuitBreakerRegistry } from "./registry.ts";

const N = 1_000_000;

function allocatedDuring(run: () => void): number {
  const profiler = new v8.GCProfiler();
  const before = v8.getHeapStatistics().used_heap_size;
  profiler.start();
  run();
  const after = v8.getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  const reclaimed = statistics.reduce((sum, gc) => sum + Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize), 0);
  return after - before + reclaimed;
}

describe("check on the closed path", () => {
  it("allocates nothing measurable over a million checks", () => {
    const reg = new CircuitBreakerRegistry({ defaults: { threshold: 5, cooldownMs: 60_000 } });
    const tenants = Array.from({ length: 8 }, (_, i) => `tenant-${i}-${"x".repeat(30)}`);
    const handlers = ["http_request", "llm_call", "worker_handler_with_a_long_name", "noop"];
    // Half of the pairs hold a closed entry with failures, the rest have none: both closed paths.
    for (let t = 0; t < tenants.length; t += 2) for (const h of handlers) reg.recordFailure(tenants[t]!, h, 0);
    let sink = 0;
    const loop = (n: number) => () => {
      for (let i = 0; i < n; i++) sink += reg.check(tenants[i & 7]!, handlers[(i >> 3) & 3]!, i);
    };
    loop(200_000)(); // warm up: compile before measuring
    // A collection of earlier garbage (the test runner's) can land in one run; the best of three is the figure.
    const runs = [0, 1, 2].map(() => allocatedDuring(loop(N)));
    expect(sink).toBe(0);
    // A single small object per check would be >= 16 MB here; the slack is for JIT code and the profiler.
    expect(Math.min(...runs) / N).toBeLessThan(0.25);
  });
});
