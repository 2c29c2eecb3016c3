import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "e2e/**", ".data/**", ".next/**"],
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    // Two cores: two test files at a time, each on its own database.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
