// Where the e2e server runs: shared by playwright.config.ts and the CLI helper in fixtures.ts.
export const E2E_PORT = 3100;

/**
 * The fake vendor of e2e/noisy-neighbour.spec.ts listens here; it, E2E_SLOW_VENDOR_PORT and
 * E2E_RUN_VIEW_VENDOR_PORT are the only loopback addresses http_request may reach
 * (BULKHEAD_HTTP_ALLOW), so every other loopback target stays refused.
 */
export const E2E_VENDOR_PORT = 3199;

/**
 * The slow vendor of e2e/resources.spec.ts: a port of its own, since specs run side by side and
 * the noisy-neighbour vendor holds E2E_VENDOR_PORT while it runs. Also allow-listed.
 */
export const E2E_SLOW_VENDOR_PORT = 3198;

/** The failing vendor of e2e/run-view.spec.ts (503 until told to recover): its own port too. Allow-listed. */
export const E2E_RUN_VIEW_VENDOR_PORT = 3197;

export const E2E_SERVER_ENV = {
  PORT: String(E2E_PORT),
  BULKHEAD_DATA_DIR: ".data/e2e",
  BULKHEAD_PG_PORT: "54349",
  NEXT_TELEMETRY_DISABLED: "1",
  // Warnings and errors only: a log line per step would bury a failing test's report in CI.
  BULKHEAD_LOG_LEVEL: "warn",
  BULKHEAD_HTTP_ALLOW: `127.0.0.1:${E2E_VENDOR_PORT},127.0.0.1:${E2E_SLOW_VENDOR_PORT},127.0.0.1:${E2E_RUN_VIEW_VENDOR_PORT}`,
  // The per-tenant claim cap is on, as in a shared deployment: a tenant gets at most 8 instances
  // of one claim batch, so a flood cannot take a whole batch.
  BULKHEAD_MAX_INSTANCES_PER_TENANT: "8",
};
