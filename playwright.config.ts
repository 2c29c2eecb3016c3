// End-to-end suite: a fresh Bulkhead (own embedded PostgreSQL on 54349, web on 3100, demo data)
// started by e2e/server.ts, driven with the system Chromium. `npm run test:e2e` builds first:
// the server itself builds only when .next/BUILD_ID is missing.
import { defineConfig, devices } from "@playwright/test";
import { E2E_PORT as PORT, E2E_SERVER_ENV } from "./e2e/env.ts";

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  workers: 2,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: "list",
  // A journey here signs in several browsers, spawns CLI processes (about 2 s each) and loads a
  // dozen pages: 15-20 s alone, twice that with both workers, the engine and the database sharing
  // two cores. Slower tests set their own budget.
  timeout: 60_000,
  expect: { timeout: 10_000 },
  use: {
    baseURL: `http://localhost:${PORT}`,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  projects: [
    {
      name: "chromium",
      use: {
        ...devices["Desktop Chrome"],
        launchOptions: {
          executablePath: "/usr/bin/chromium",
          args: [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
          ],
        },
      },
    },
  ],
  webServer: {
    command: "node --import tsx e2e/server.ts",
    url: `http://localhost:${PORT}/signin`,
    env: E2E_SERVER_ENV,
    timeout: 180_000,
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 15_000 },
  },
});
