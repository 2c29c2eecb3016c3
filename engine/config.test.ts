import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";

const base = { DATABASE_URL: "postgresql://u:p@localhost:5432/db" };

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      BULKHEAD_TICK_MS: 100,
      BULKHEAD_IDLE_CLAIM_MS: 2000,
      BULKHEAD_CLAIM_BATCH: 256,
      BULKHEAD_MAX_INSTANCES_PER_TENANT: 0,
      BULKHEAD_BREAKER_THRESHOLD: 5,
      BULKHEAD_BREAKER_COOLDOWN_SECS: 60,
      BULKHEAD_MAX_CONCURRENT_STEPS: 128,
      BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: 32,
      BULKHEAD_MAX_INSTANCES_IN_FLIGHT: 128,
      BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 32,
      BULKHEAD_DEFAULT_BACKEND: "primary",
    });
    expect([...config.backends]).toEqual([["primary", base.DATABASE_URL]]);
  });

  it("registers extra backends by id", () => {
    const config = loadConfig({ ...base, BULKHEAD_BACKENDS: "eu-1=postgresql://a/b, us.2=postgresql://c/d", BULKHEAD_DEFAULT_BACKEND: "eu-1" });
    expect([...config.backends.keys()]).toEqual(["primary", "eu-1", "us.2"]);
    expect(config.BULKHEAD_DEFAULT_BACKEND).toBe("eu-1");
  });

  it.each([
    [{}, /DATABASE_URL/],
    [{ ...base, BULKHEAD_BACKENDS: "bad id=postgresql://x" }, /BULKHEAD_BACKENDS/],
    [{ ...base, BULKHEAD_BACKENDS: "=postgresql://x" }, /BULKHEAD_BACKENDS/],
    [{ ...base, BULKHEAD_BACKENDS: "primary=postgresql://x" }, /always DATABASE_URL/],
    [{ ...base, BULKHEAD_DEFAULT_BACKEND: "eu-1" }, /not a registered backend/],
    [{ ...base, BULKHEAD_TICK_MS: "0" }, /BULKHEAD_TICK_MS/],
    [{ ...base, BULKHEAD_MAX_INSTANCES_PER_TENANT: "-1" }, /BULKHEAD_MAX_INSTANCES_PER_TENANT/],
  ])("rejects %j", (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
