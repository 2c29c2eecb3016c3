// The engine process: one scheduler per registered storage backend, until SIGTERM/SIGINT; then
// stop claiming, finish or release in-flight work, and exit 0.
import os from "node:os";
import { loadConfig } from "./config.ts";
import { createBuiltInHandlers } from "./handlers/registry.ts";
import { splitAllowList } from "./handlers/outbound-guard.ts";
import { createLogger } from "./logger.ts";
import { keyringFromEnv } from "./secrets/sealed-text.ts";
import { DeletionRunner } from "./lifecycle/deletion-runner.ts";
import { MoveRunner } from "./moves/move-runner.ts";
import { RETENTION_DEFAULTS, RetentionPruner } from "./retention/pruner.ts";
import { TenantView } from "./scheduler/tenant-view.ts";
import { Scheduler, stepSlots } from "./scheduler/scheduler.ts";
import { BackendStore, backendOptions, Storage, StorageBackends } from "./storage/index.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger("engine", config.BULKHEAD_LOG_LEVEL);
  // Resource waits of any tenant are counted by one scheduler; each row is written where its tenant is placed.
  let schedulers: Scheduler[] = [];
  const waited = (tenantId: string, resource: string) => schedulers[0]?.metrics.waited(tenantId, resource);
  // Enough connections for the in-flight steps plus the claim, renewal and reaper statements.
  const poolSize = Math.max(config.BULKHEAD_POOL_SIZE, Math.min(config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT, 32) + 3);
  const storage = new Storage(new StorageBackends(config.backends, {
    ...backendOptions(config), poolSize, onConnectionWait: (tenantId) => waited(tenantId, "db_connections"),
  }));
  const ownerId = `${os.hostname()}:${process.pid}`;
  // A malformed key stops the engine here rather than at the first credential it opens.
  if (!keyringFromEnv().primary) log.warn("BULKHEAD_ENCRYPTION_KEY is not set: credentials are stored in plaintext");

  // One copy of the placements (and the operators' per-tenant limits) for every scheduler: each
  // claims only its backend's tenants.
  const tenantView = new TenantView(storage, log);
  await tenantView.start();
  const handlers = createBuiltInHandlers({
    httpAllow: splitAllowList(config.BULKHEAD_HTTP_ALLOW),
    outboundPerHost: (tenantId) => tenantView.limitsOf(tenantId)?.outboundPerHost ?? config.BULKHEAD_OUTBOUND_PER_HOST,
    eventLimits: { perParent: config.BULKHEAD_EVENTS_PER_PARENT, perTenantPerMinute: config.BULKHEAD_EVENTS_PER_TENANT_PER_MINUTE },
    onWait: waited,
  });
  // One set of step slots for the process: the limits count steps across every backend.
  const slots = stepSlots(config, tenantView);
  schedulers = storage.backends.ids().map((id) => {
    const backend = storage.backends.get(id);
    return new Scheduler({ backend, backends: storage.backends, handlers, config, ownerId, tenants: tenantView, slots, log: log.child({ backend_id: id }) });
  });
  for (const id of storage.backends.ids()) {
    await storage.backends.get(id).pool.query("SELECT 1");
    log.info({ backend_id: id }, "backend connected");
  }
  for (const scheduler of schedulers) await scheduler.start();
  // Tenant moves and deletions the operators start in the console run here.
  const moves = new MoveRunner(storage, log.child({ component: "moves" }));
  moves.start();
  const deletions = new DeletionRunner(storage, log.child({ component: "deletions" }));
  deletions.start();
  // Finished instances past their tenant's retention are pruned on every backend, beside the claims.
  const pruners = storage.backends.ids().map((id) => new RetentionPruner({
    store: new BackendStore(storage.backends.get(id)), tenants: tenantView, defaultDays: config.BULKHEAD_RETENTION_DAYS,
    log: log.child({ component: "retention" }),
    options: { ...RETENTION_DEFAULTS, batch: config.BULKHEAD_RETENTION_BATCH, intervalMs: config.BULKHEAD_RETENTION_INTERVAL_MS },
  }));
  for (const pruner of pruners) pruner.start();
  log.info({ backends: storage.backends.ids(), owner: ownerId, tick_ms: config.BULKHEAD_TICK_MS }, "engine started");

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  log.info({ signal, in_flight: schedulers.reduce((n, s) => n + s.inFlight, 0) }, "engine stopping");
  await moves.stop();
  await deletions.stop();
  await Promise.all(pruners.map((p) => p.stop()));
  await Promise.all(schedulers.map((s) => s.stop()));
  tenantView.stop();
  await storage.close();
  log.info("engine stopped");
}

main().catch((error: unknown) => {
  createLogger("engine").fatal({ err: error }, "engine failed");
  process.exit(1);
});
