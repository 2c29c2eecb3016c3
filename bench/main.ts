// `npm run bench -- <name>`: benchmarks that print figures measured in one run beside a peer.
const benches: Record<string, () => Promise<void>> = {
  throughput: () => import("./throughput.ts").then((m) => m.main()),
  breaker: () => import("./breaker.ts").then((m) => m.main()),
  "instance-list": () => import("./instance-list.ts").then((m) => m.main()),
};

const chosen = process.argv[2] ?? "throughput";
const bench = benches[chosen];
if (!bench) {
  console.error(`unknown benchmark "${chosen}"; one of: ${Object.keys(benches).join(", ")}`);
  process.exit(1);
}
await bench();
export {};
