// breakerPreflight's three outcomes on a fake clock: proceed, proceed with the fallback, defer.
import { describe, expect, it } from "vitest";
import type { PreflightDecision } from "../exec/preflight.ts";
import { breakerPreflight, type BreakerDecision } from "./preflight.ts";
import { CircuitBreakerRegistry } from "./registry.ts";

const T0 = Date.UTC(2026, 10, 30, 10);
const COOLDOWN = 60_000;
const A = "tenant-a";

function openAt(reg: CircuitBreakerRegistry, handler: string, at: number) {
  for (let i = 0; i < 5; i++) reg.recordFailure(A, handler, at);
}

function setup() {
  const reg = new CircuitBreakerRegistry({ defaults: { threshold: 5, cooldownMs: COOLDOWN } });
  return reg;
}

describe("breakerPreflight", () => {
  it("proceeds with the step's own handler while its breaker is closed", () => {
    const reg = setup();
    expect(breakerPreflight(reg, A, { handler: "http_request", fallback_handler: "backup" }, T0)).toEqual({ kind: "proceed", handler: "http_request" });
    expect(breakerPreflight(reg, A, { handler: "noop" }, T0)).toEqual({ kind: "proceed", handler: "noop" });
  });

  it("defers to now + the remaining cooldown when the primary is open and there is no fallback", () => {
    const reg = setup();
    openAt(reg, "http_request", T0);
    const now = T0 + 20_000;
    expect(breakerPreflight(reg, A, { handler: "http_request" }, now)).toEqual({ kind: "defer", until: new Date(T0 + COOLDOWN), reason: "breaker" });
  });

  it("proceeds with the fallback when the primary is open and the fallback's breaker is closed", () => {
    const reg = setup();
    openAt(reg, "http_request", T0);
    expect(breakerPreflight(reg, A, { handler: "http_request", fallback_handler: "backup_sms" }, T0 + 1)).toEqual({ kind: "proceed", handler: "backup_sms" });
  });

  it("defers, by the primary's remaining cooldown, when the fallback is open too", () => {
    const reg = setup();
    openAt(reg, "http_request", T0);
    openAt(reg, "backup_sms", T0 + 50_000);
    expect(breakerPreflight(reg, A, { handler: "http_request", fallback_handler: "backup_sms" }, T0 + 55_000)).toEqual({
      kind: "defer", until: new Date(T0 + COOLDOWN), reason: "breaker",
    });
  });

  it("proceeds with an untracked fallback", () => {
    const reg = setup();
    openAt(reg, "http_request", T0);
    expect(breakerPreflight(reg, A, { handler: "http_request", fallback_handler: "log" }, T0 + 1)).toEqual({ kind: "proceed", handler: "log" });
  });

  it("a half-open fallback takes this dispatch as its single probe", () => {
    const reg = setup();
    openAt(reg, "http_request", T0 + 30_000);
    openAt(reg, "backup_sms", T0);
    const step = { handler: "http_request", fallback_handler: "backup_sms" };
    expect(breakerPreflight(reg, A, step, T0 + COOLDOWN)).toEqual({ kind: "proceed", handler: "backup_sms" });
    expect(breakerPreflight(reg, A, step, T0 + COOLDOWN)).toEqual({ kind: "defer", until: new Date(T0 + 30_000 + COOLDOWN), reason: "breaker" });
  });

  it("a half-open primary probes itself once; the others go to the fallback", () => {
    const reg = setup();
    openAt(reg, "http_request", T0);
    const step = { handler: "http_request", fallback_handler: "backup_sms" };
    expect(breakerPreflight(reg, A, step, T0 + COOLDOWN)).toEqual({ kind: "proceed", handler: "http_request" });
    expect(breakerPreflight(reg, A, step, T0 + COOLDOWN)).toEqual({ kind: "proceed", handler: "backup_sms" });
  });

  it("records no failure for a deferral, and another tenant is never deferred", () => {
    const reg = setup();
    openAt(reg, "http_request", T0);
    for (let i = 0; i < 10; i++) breakerPreflight(reg, A, { handler: "http_request", fallback_handler: "backup_sms" }, T0 + 1);
    for (let i = 0; i < 10; i++) breakerPreflight(reg, A, { handler: "http_request" }, T0 + 1);
    expect(reg.snapshot(A)).toEqual([expect.objectContaining({ handler: "http_request", failureCount: 5, openedAt: T0 })]);
    expect(breakerPreflight(reg, "tenant-b", { handler: "http_request" }, T0 + 1)).toEqual({ kind: "proceed", handler: "http_request" });
  });

  it("fits runPreflight's breaker slot", () => {
    const decision: BreakerDecision = breakerPreflight(setup(), A, { handler: "http_request" }, T0);
    const passedThrough: PreflightDecision = decision;
    expect(passedThrough.kind).toBe("proceed");
  });
});
