// `npm run bench -- <name>`: benchmarks that print figures measured in one run beside a peer, and
// write them to bench/RESULTS.md. `npm run bench -- all` runs every one in turn.
const benches: Record<string, () => Promise<void>> = {
  throughput: () => import("./throughput.ts").then((m) => m.main()),
  fairness: () => import("./fairness.ts").then((m) => m.main()),
  breaker: () => import("./breaker.ts").then((m) => m.main()),
  "claim-latency": () => import("./claim-latency.ts").then((m) => m.main()),
  "claim-definitions": () => import("./claim-definitions.ts").then((m) => m.main()),
  "instance-list": () => import("./instance-list.ts").then((m) => m.main()),
  fanout: () => import("./fanout.ts").then((m) => m.main()),
  fleet: () => import("./fleet.ts").then((m) => m.main()),
  "scale-out": () => import("./scale-out.ts").then((m) => m.main()),
  console: () => import("./console.ts").then((m) => m.main()),
  retention: () => import("./retention.ts").then((m) => m.main()),
  idle: () => import("./idle.ts").then((m) => m.main()),
};

const chosen = process.argv[2] ?? "throughput";
if (chosen === "all") {
  for (const [name, bench] of Object.entries(benches)) {
    console.log(`\n== ${name} ==`);
    const started = performance.now();
    await bench();
    console.log(`== ${name}: ${((performance.now() - started) / 1000).toFixed(1)} s ==`);
  }
} else {
  const bench = benches[chosen];
  if (!bench) {
    console.error(`unknown benchmark "${chosen}"; one of: ${Object.keys(benches).join(", ")}, all`);
    process.exit(1);
  }
  await bench();
}
export {};
