// The engine process: connects to every registered storage backend and runs until SIGTERM/SIGINT.
// The scheduler (claim loop, leases, reaper) plugs in here; until then the process only proves
// its databases are reachable and shuts down cleanly.
import { loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { Storage, StorageBackends } from "./storage/index.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger("engine", config.BULKHEAD_LOG_LEVEL);
  const storage = new Storage(new StorageBackends(config.backends, { poolSize: config.BULKHEAD_POOL_SIZE }));

  for (const id of storage.backends.ids()) {
    await storage.backends.get(id).pool.query("SELECT 1");
    log.info({ backend_id: id }, "backend connected");
  }
  log.info({ backends: storage.backends.ids(), tick_ms: config.BULKHEAD_TICK_MS }, "engine started");

  // Nothing else keeps the event loop alive until the scheduler exists: idle pools close their
  // connections after 10 s and Node would exit on its own.
  const keepAlive = setInterval(() => {}, 60_000);
  await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  }).then((signal) => log.info({ signal }, "engine stopping"));

  clearInterval(keepAlive);
  await storage.close();
  log.info("engine stopped");
}

main().catch((error: unknown) => {
  createLogger("engine").fatal({ err: error }, "engine failed");
  process.exit(1);
});
