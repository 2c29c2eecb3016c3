// A scheduler on a test database, with the fast settings the engine tests share; a test names
// only what it changes (handlers, one setting, the owner).
import { createBuiltInHandlers } from "../engine/handlers/registry.ts";
import { createLogger } from "../engine/logger.ts";
import { Scheduler, type SchedulerConfig, type SchedulerDeps } from "../engine/scheduler/scheduler.ts";
import type { TestDatabase } from "./db.ts";

export const TEST_SCHEDULER_CONFIG: SchedulerConfig = {
  BULKHEAD_TICK_MS: 20, BULKHEAD_IDLE_CLAIM_MS: 1_000, BULKHEAD_CLAIM_BATCH: 64, BULKHEAD_MAX_INSTANCES_PER_TENANT: 0, BULKHEAD_MAX_INSTANCES_IN_FLIGHT: 64,
  BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 32,
  BULKHEAD_MAX_CONCURRENT_STEPS: 64, BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: 32, BULKHEAD_LEASE_MS: 5_000, BULKHEAD_REAPER_MS: 1_000, BULKHEAD_SHUTDOWN_GRACE_MS: 2_000,
  BULKHEAD_BREAKER_THRESHOLD: 5, BULKHEAD_BREAKER_COOLDOWN_SECS: 60,
};

export type SchedulerOverrides = Partial<Omit<SchedulerDeps, "config">> & { config?: Partial<SchedulerConfig> };

/** Not started: the test calls start() (and stop()) itself. */
export function makeScheduler(db: TestDatabase, overrides: SchedulerOverrides = {}): Scheduler {
  const { config, ...deps } = overrides;
  return new Scheduler({
    backend: db.storage.backends.primary,
    handlers: createBuiltInHandlers({ httpAllow: [] }),
    log: createLogger("test", process.env.TEST_LOG ?? "silent"),
    ownerId: "test-engine",
    ...deps,
    config: { ...TEST_SCHEDULER_CONFIG, ...config },
  });
}
