// The (tenant, handler) breaker state machine, on a fake clock (plain millisecond numbers).
import { describe, expect, it } from "vitest";
import { CircuitBreakerRegistry, HALF_OPEN_RECHECK_MS, type BreakerSettings, type BreakerTransition } from "./registry.ts";
import { isTracked } from "./tracked.ts";

const T0 = Date.UTC(2026, 10, 30, 10);
const COOLDOWN = 60_000;
const DEFAULTS: BreakerSettings = { threshold: 5, cooldownMs: COOLDOWN };
const A = "tenant-a";
const B = "tenant-b";
const HTTP = "http_request";

function registry(options: { settingsFor?: (t: string, h: string) => BreakerSettings | undefined; maxEntries?: number } = {}) {
  const transitions: BreakerTransition[] = [];
  const reg = new CircuitBreakerRegistry({ defaults: DEFAULTS, onTransition: (t) => transitions.push(t), ...options });
  return { reg, transitions };
}

function fail(reg: CircuitBreakerRegistry, times: number, at = T0, tenant = A, handler = HTTP) {
  for (let i = 0; i < times; i++) reg.recordFailure(tenant, handler, at);
}

/** A breaker opened at T0 by five failures. */
function opened() {
  const made = registry();
  fail(made.reg, 5);
  return made;
}

describe("threshold", () => {
  it("stays closed through 4 consecutive failures and opens on the 5th", () => {
    const { reg } = registry();
    fail(reg, 4);
    expect(reg.check(A, HTTP, T0)).toBe(0);
    expect(reg.isOpen(A, HTTP)).toBe(false);
    expect(reg.snapshot(A)).toEqual([
      { tenantId: A, handler: HTTP, state: "closed", failureCount: 4, failureThreshold: 5, cooldownSecs: 60, openedAt: null },
    ]);
    fail(reg, 1);
    expect(reg.isOpen(A, HTTP)).toBe(true);
    expect(reg.check(A, HTTP, T0)).toBe(COOLDOWN);
    expect(reg.snapshot(A)[0]).toMatchObject({ state: "open", failureCount: 5, openedAt: T0 });
  });

  it("a success in between resets the count (failures must be consecutive)", () => {
    const { reg } = registry();
    fail(reg, 4);
    reg.recordSuccess(A, HTTP, T0);
    fail(reg, 4);
    expect(reg.check(A, HTTP, T0)).toBe(0);
    expect(reg.snapshot(A)[0]?.failureCount).toBe(4);
    fail(reg, 1);
    expect(reg.isOpen(A, HTTP)).toBe(true);
  });

  it("uses per-handler settings when given", () => {
    const { reg } = registry({ settingsFor: (_t, h) => (h === "llm_call" ? { threshold: 2, cooldownMs: 10_000 } : undefined) });
    fail(reg, 2, T0, A, "llm_call");
    fail(reg, 2, T0, A, HTTP);
    expect(reg.check(A, "llm_call", T0 + 1_000)).toBe(9_000);
    expect(reg.check(A, HTTP, T0 + 1_000)).toBe(0);
    expect(reg.snapshot(A).find((s) => s.handler === "llm_call")).toMatchObject({ failureThreshold: 2, cooldownSecs: 10 });
  });

  it("refuses settings that could never work", () => {
    expect(() => new CircuitBreakerRegistry({ defaults: { threshold: 0, cooldownMs: 1 } })).toThrow(RangeError);
    expect(() => new CircuitBreakerRegistry({ defaults: { threshold: 5, cooldownMs: 0 } })).toThrow(RangeError);
  });
});

describe("cooldown", () => {
  it("defers with the remaining time, decreasing, until the cooldown has passed", () => {
    const { reg } = opened();
    const waits = [0, 1, 15_000, 30_000, 59_999].map((ms) => reg.check(A, HTTP, T0 + ms));
    expect(waits).toEqual([60_000, 59_999, 45_000, 30_000, 1]);
    expect(reg.check(A, HTTP, T0 + COOLDOWN)).toBe(-1);
  });

  it("failures while open neither extend the cooldown nor emit anything", () => {
    const { reg, transitions } = opened();
    fail(reg, 10, T0 + 30_000);
    expect(reg.check(A, HTTP, T0 + 30_000)).toBe(30_000);
    expect(reg.snapshot(A)[0]).toMatchObject({ failureCount: 5, openedAt: T0 });
    expect(transitions).toHaveLength(1);
  });
});

describe("half-open", () => {
  it("admits exactly one probe among many concurrent checks", () => {
    const { reg } = opened();
    const at = T0 + COOLDOWN + 5;
    const answers = Array.from({ length: 100 }, () => reg.check(A, HTTP, at));
    expect(answers.filter((w) => w === -1)).toHaveLength(1);
    expect(answers[0]).toBe(-1);
    expect(answers.slice(1).every((w) => w > 0)).toBe(true);
    expect(reg.snapshot(A)[0]?.state).toBe("half_open");
    expect(reg.isOpen(A, HTTP)).toBe(true);
  });

  it("the probe's success closes the breaker (count 0, entry dropped)", () => {
    const { reg, transitions } = opened();
    expect(reg.check(A, HTTP, T0 + COOLDOWN)).toBe(-1);
    reg.recordSuccess(A, HTTP, T0 + COOLDOWN + 100);
    expect(reg.check(A, HTTP, T0 + COOLDOWN + 101)).toBe(0);
    expect(reg.isOpen(A, HTTP)).toBe(false);
    expect(reg.snapshot()).toEqual([]);
    expect(reg.size).toBe(0);
    expect(transitions.at(-1)).toEqual({ kind: "closed", tenantId: A, handler: HTTP });
  });

  it("the probe's failure re-opens it with a fresh cooldown", () => {
    const { reg, transitions } = opened();
    const probeAt = T0 + COOLDOWN;
    expect(reg.check(A, HTTP, probeAt)).toBe(-1);
    reg.recordFailure(A, HTTP, probeAt + 500);
    expect(transitions.at(-1)).toEqual({ kind: "opened", tenantId: A, handler: HTTP, failureCount: 6, openedAt: probeAt + 500 });
    expect(reg.check(A, HTTP, probeAt + 1_000)).toBe(COOLDOWN - 500);
    expect(reg.check(A, HTTP, probeAt + 500 + COOLDOWN)).toBe(-1);
  });

  it("a probe that never reports is replaced after another cooldown", () => {
    const { reg } = opened();
    const probeAt = T0 + COOLDOWN;
    expect(reg.check(A, HTTP, probeAt)).toBe(-1);
    // Others look again every few seconds while the probe is out...
    expect(reg.check(A, HTTP, probeAt + 1)).toBe(Math.min(COOLDOWN - 1, HALF_OPEN_RECHECK_MS));
    expect(reg.check(A, HTTP, probeAt + COOLDOWN - 1)).toBe(1);
    // ...and after a whole cooldown without a report, a new probe goes.
    expect(reg.check(A, HTTP, probeAt + COOLDOWN)).toBe(-1);
    expect(reg.check(A, HTTP, probeAt + COOLDOWN)).toBe(Math.min(COOLDOWN, HALF_OPEN_RECHECK_MS));
  });
});

describe("reset", () => {
  it("forgets an open breaker without emitting, and creates nothing for an unknown one", () => {
    const { reg, transitions } = opened();
    reg.reset(A, HTTP);
    expect(reg.check(A, HTTP, T0 + 1)).toBe(0);
    expect(reg.isOpen(A, HTTP)).toBe(false);
    expect(reg.snapshot(A)).toEqual([]);
    expect(transitions).toHaveLength(1);
    reg.reset(A, "never_seen");
    reg.reset("tenant-z", HTTP);
    expect(reg.size).toBe(0);
    // Counting starts over.
    fail(reg, 4, T0 + 2);
    expect(reg.isOpen(A, HTTP)).toBe(false);
  });
});

describe("restoreOpen", () => {
  it("keeps the persisted openedAt, so only the remaining cooldown applies, and emits nothing", () => {
    const { reg, transitions } = registry();
    const openedAt = T0 - 45_000;
    reg.restoreOpen(A, HTTP, 7, openedAt);
    expect(reg.check(A, HTTP, T0)).toBe(15_000);
    expect(reg.snapshot(A)).toEqual([
      { tenantId: A, handler: HTTP, state: "open", failureCount: 7, failureThreshold: 5, cooldownSecs: 60, openedAt },
    ]);
    expect(reg.check(A, HTTP, T0 + 15_000)).toBe(-1);
    expect(transitions).toEqual([]);
  });

  it("an opening already known here leaves the probe in flight alone; a later one is adopted", () => {
    const { reg } = opened();
    expect(reg.check(A, HTTP, T0 + COOLDOWN)).toBe(-1);
    reg.restoreOpen(A, HTTP, 5, T0);
    expect(reg.check(A, HTTP, T0 + COOLDOWN + 1)).toBeGreaterThan(0);
    // Another process's probe failed and re-opened it.
    reg.restoreOpen(A, HTTP, 6, T0 + COOLDOWN + 10);
    expect(reg.snapshot(A)[0]).toMatchObject({ state: "open", failureCount: 6, openedAt: T0 + COOLDOWN + 10 });
    expect(reg.check(A, HTTP, T0 + COOLDOWN + 20)).toBe(COOLDOWN - 10);
  });

  it("an opened_at ahead of this clock never makes the wait longer than one cooldown", () => {
    const { reg } = registry();
    reg.restoreOpen(A, HTTP, 5, T0 + 10_000);
    expect(reg.check(A, HTTP, T0)).toBe(COOLDOWN);
  });
});

describe("tenant isolation", () => {
  it("tenant A's failures never affect tenant B's breaker for the same handler", () => {
    const { reg, transitions } = registry();
    fail(reg, 50, T0, A);
    expect(reg.isOpen(A, HTTP)).toBe(true);
    expect(reg.check(B, HTTP, T0)).toBe(0);
    expect(reg.isOpen(B, HTTP)).toBe(false);
    expect(reg.snapshot(B)).toEqual([]);
    expect(transitions.every((t) => t.tenantId === A)).toBe(true);

    // B counts on its own, and B's success does not close A.
    fail(reg, 4, T0, B);
    reg.recordSuccess(B, HTTP, T0);
    expect(reg.isOpen(A, HTTP)).toBe(true);
    expect(reg.snapshot(B)).toEqual([]);
    // Nor does the shape of the key leak: no concatenation that "a:b" + "c" could collide with.
    fail(reg, 5, T0, "x:y", "z");
    expect(reg.isOpen("x", "y:z")).toBe(false);
    expect(reg.check("x", "y:z", T0)).toBe(0);
  });
});

describe("untracked handlers", () => {
  const untracked = ["noop", "log", "sleep", "fail", "self_modify", "emit_event", "send_signal", "query_instance", "human_review"];

  it.each(untracked)("%s always proceeds and is never recorded", (handler) => {
    const { reg, transitions } = registry();
    expect(isTracked(handler)).toBe(false);
    fail(reg, 20, T0, A, handler);
    reg.recordSuccess(A, handler, T0);
    reg.restoreOpen(A, handler, 5, T0);
    expect(reg.check(A, handler, T0 + 1)).toBe(0);
    expect(reg.isOpen(A, handler)).toBe(false);
    expect(reg.snapshot()).toEqual([]);
    expect(transitions).toEqual([]);
  });

  it("everything else is tracked, external worker handlers included", () => {
    for (const handler of ["http_request", "llm_call", "send_email_worker", "Noop", "noop "]) expect(isTracked(handler)).toBe(true);
  });
});

describe("transitions", () => {
  it("are emitted exactly on opening and on leaving open", () => {
    const { reg, transitions } = registry();
    fail(reg, 4);
    reg.recordSuccess(A, HTTP, T0); // closed -> closed: nothing
    fail(reg, 5); // opened
    reg.check(A, HTTP, T0 + COOLDOWN); // open -> half-open: the row stays, nothing
    reg.recordFailure(A, HTTP, T0 + COOLDOWN + 1); // probe failed: opened again
    reg.check(A, HTTP, T0 + 2 * COOLDOWN + 1);
    reg.recordSuccess(A, HTTP, T0 + 2 * COOLDOWN + 2); // probe succeeded: closed
    reg.recordSuccess(A, HTTP, T0 + 2 * COOLDOWN + 3); // healthy: nothing
    fail(reg, 5, T0 + 3 * COOLDOWN); // opened
    reg.recordSuccess(A, HTTP, T0 + 3 * COOLDOWN + 1); // a late success while open: closed
    reg.reset(A, HTTP); // nothing left to reset; resets emit nothing anyway
    expect(transitions).toEqual([
      { kind: "opened", tenantId: A, handler: HTTP, failureCount: 5, openedAt: T0 },
      { kind: "opened", tenantId: A, handler: HTTP, failureCount: 6, openedAt: T0 + COOLDOWN + 1 },
      { kind: "closed", tenantId: A, handler: HTTP },
      { kind: "opened", tenantId: A, handler: HTTP, failureCount: 5, openedAt: T0 + 3 * COOLDOWN },
      { kind: "closed", tenantId: A, handler: HTTP },
    ]);
  });
});

describe("memory", () => {
  it("healthy pairs hold nothing: checks and successes create no entries", () => {
    const { reg } = registry();
    for (let t = 0; t < 100; t++) {
      for (let h = 0; h < 10; h++) {
        expect(reg.check(`t${t}`, `h${h}`, T0)).toBe(0);
        reg.recordSuccess(`t${t}`, `h${h}`, T0);
      }
    }
    expect(reg.size).toBe(0);
    fail(reg, 1, T0, "t1", "h1");
    expect(reg.size).toBe(1);
    reg.recordSuccess("t1", "h1", T0);
    expect(reg.size).toBe(0);
  });

  it("past maxEntries, stale closed entries are swept; open and recent ones stay", () => {
    const { reg } = registry({ maxEntries: 10 });
    fail(reg, 5, T0, A, "down"); // open
    for (let h = 0; h < 9; h++) fail(reg, 1, T0, A, `stale${h}`);
    expect(reg.size).toBe(10);
    fail(reg, 1, T0 + COOLDOWN - 1, B, "recent");
    expect(reg.size).toBe(11); // nothing stale yet: kept
    // The next sweep waits until the held entries double (20).
    for (let h = 0; h < 9; h++) fail(reg, 1, T0 + 2 * COOLDOWN - 1, B, `fresh${h}`);
    expect(reg.size).toBe(20);
    fail(reg, 1, T0 + 2 * COOLDOWN, B, "trigger");
    expect(reg.size).toBe(11);
    expect(reg.isOpen(A, "down")).toBe(true);
    expect(reg.snapshot(A).map((s) => s.handler)).toEqual(["down"]);
    expect(reg.snapshot(B).map((s) => s.handler)).toEqual([...Array.from({ length: 9 }, (_, h) => `fresh${h}`), "trigger"]);
  });
});
