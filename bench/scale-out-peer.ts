// One graphile-worker process of the scale-out bench: its documented best preset, no-op jobs,
// until SIGTERM; then it prints how many jobs it ran, so the bench can tell a job run twice.
import pg from "pg";
import { Logger, run } from "graphile-worker";
import { BEST_PRESET } from "./graphile-preset.ts";

const pgPool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.BENCH_CONCURRENCY ?? 32) + 2 });
pgPool.on("error", () => {}); // a client lost at shutdown must not end the process before it reports
let ran = 0;
const runner = await run({
  pgPool, concurrency: Number(process.env.BENCH_CONCURRENCY ?? 32), pollInterval: 100, noHandleSignals: true, preset: BEST_PRESET,
  logger: new Logger(() => () => {}),
  taskList: { work: async () => { ran++; } },
});
process.once("SIGTERM", () => {
  void runner.stop().then(async () => {
    await pgPool.end();
    process.stdout.write(`${JSON.stringify({ ran })}\n`);
  });
});
