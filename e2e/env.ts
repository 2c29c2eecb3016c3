// Where the e2e server runs: shared by playwright.config.ts and the CLI helper in fixtures.ts.
export const E2E_PORT = 3100;

export const E2E_SERVER_ENV = {
  PORT: String(E2E_PORT),
  BULKHEAD_DATA_DIR: ".data/e2e",
  BULKHEAD_PG_PORT: "54349",
  NEXT_TELEMETRY_DISABLED: "1",
};
