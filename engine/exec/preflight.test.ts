// Pre-flight decisions: the pure checks with fixed clocks, and runPreflight's order with a
// recording stand-in for the database (the SQL itself is tested against PostgreSQL in
// engine/storage/*.int.test.ts and preflight.int.test.ts).
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { StepBlock, type BlockInput } from "../sequence/schema.ts";
import { asTenantId, backendOn, RunStore } from "../storage/index.ts";
import { checkDeadline, checkDelay, checkSendWindow, delayUntil, runPreflight, type PreflightDecision } from "./preflight.ts";

type StepFields = Omit<Extract<BlockInput, { type: "step" }>, "type" | "id" | "handler">;
const step = (fields: StepFields = {}): StepBlock => StepBlock.parse({ type: "step", id: "s1", handler: "noop", ...fields });
const utc = (iso: string) => new Date(iso);
const defer = (until: string, reason: string) => ({ kind: "defer", until: utc(until), reason });
const PROCEED = { kind: "proceed" };

describe("checkDeadline", () => {
  const started = utc("2026-11-30T10:00:00Z");

  it("proceeds without a deadline, or before the step first started", () => {
    expect(checkDeadline(step(), started, utc("2027-01-01T00:00:00Z"))).toEqual(PROCEED);
    expect(checkDeadline(step({ deadline: 1000 }), null, utc("2027-01-01T00:00:00Z"))).toEqual(PROCEED);
  });

  it("fails once the deadline has passed since the first start, across retries", () => {
    const s = step({ deadline: 60_000 });
    expect(checkDeadline(s, started, utc("2026-11-30T10:00:59.999Z"))).toEqual(PROCEED);
    expect(checkDeadline(s, started, utc("2026-11-30T10:01:00Z"))).toEqual({ kind: "fail", message: "deadline exceeded", deadline: true });
    expect(checkDeadline(s, started, utc("2026-11-30T12:00:00Z"))).toEqual({ kind: "fail", message: "deadline exceeded", deadline: true });
  });
});

describe("checkDelay", () => {
  const reached = utc("2026-11-30T10:00:00Z"); // a Monday

  it("waits `duration` from when the instance reached the step", () => {
    const s = step({ delay: { duration: 5000 } });
    expect(checkDelay(s, reached, "UTC", utc("2026-11-30T10:00:01Z"), "seed")).toEqual(defer("2026-11-30T10:00:05Z", "delay"));
    expect(checkDelay(s, reached, "UTC", utc("2026-11-30T10:00:05Z"), "seed")).toEqual(PROCEED);
    expect(checkDelay(step(), reached, "UTC", reached, "seed")).toEqual(PROCEED);
  });

  it("business days: a delay ending on a weekend moves to Monday at the same local time", () => {
    const s = step({ delay: { duration: 24 * 3_600_000, business_days_only: true } });
    // Friday 16:00 + 24 h = Saturday 16:00 -> Monday 16:00.
    const friday = utc("2026-11-27T16:00:00Z");
    expect(checkDelay(s, friday, "UTC", friday, "seed")).toEqual(defer("2026-11-30T16:00:00Z", "delay"));
  });

  it("business days: holidays are skipped too, and a Friday holiday skips the weekend", () => {
    const s = step({ delay: { duration: 0, business_days_only: true, holidays: ["2026-11-30", "2026-12-01"] } });
    const saturday = utc("2026-11-28T09:00:00Z");
    expect(delayUntil(s, saturday, "UTC", "seed")).toEqual(utc("2026-12-02T09:00:00Z"));
    const fridayHoliday = step({ delay: { duration: 0, business_days_only: true, holidays: ["2026-11-27"] } });
    expect(delayUntil(fridayHoliday, utc("2026-11-27T09:00:00Z"), "UTC", "seed")).toEqual(utc("2026-11-30T09:00:00Z"));
  });

  it("business days are judged in the timezone, not in UTC", () => {
    const s = step({ delay: { duration: 0, business_days_only: true } });
    // Saturday 03:30 UTC is still Friday 22:30 in New York: a business day there.
    const lateFriday = utc("2026-11-28T03:30:00Z");
    expect(checkDelay(s, lateFriday, "America/New_York", lateFriday, "seed")).toEqual(PROCEED);
    // Monday 01:00 in Tokyo is Sunday 16:00 UTC: a business day there, a weekend in UTC.
    expect(delayUntil(s, utc("2026-11-29T16:00:00Z"), "Asia/Tokyo", "seed")).toEqual(utc("2026-11-29T16:00:00Z"));
    expect(delayUntil(s, utc("2026-11-29T16:00:00Z"), "UTC", "seed")).toEqual(utc("2026-11-30T16:00:00Z"));
  });

  it("business days keep the local time across a DST change", () => {
    const s = step({ delay: { duration: 0, business_days_only: true } });
    // Saturday 09:00 CET -> Monday 09:00 CEST (Europe switched on Sunday 2026-03-29): 07:00 UTC, not 08:00.
    expect(delayUntil(s, utc("2026-03-28T08:00:00Z"), "Europe/Berlin", "seed")).toEqual(utc("2026-03-30T07:00:00Z"));
  });

  it("fire_at_local is read in the delay's timezone, else the instance's, and overrides duration", () => {
    const local = { duration: 5000, fire_at_local: "2026-12-01T09:00:00" };
    expect(delayUntil(step({ delay: local }), reached, "Europe/Berlin", "seed")).toEqual(utc("2026-12-01T08:00:00Z"));
    expect(delayUntil(step({ delay: { ...local, timezone: "America/New_York" } }), reached, "Europe/Berlin", "seed")).toEqual(
      utc("2026-12-01T14:00:00Z"),
    );
    // Summer time, and a time inside the spring-forward gap (02:30 does not exist: 03:30 CEST).
    expect(delayUntil(step({ delay: { duration: 0, fire_at_local: "2026-07-01T09:00" } }), reached, "Europe/Berlin", "s")).toEqual(
      utc("2026-07-01T07:00:00Z"),
    );
    expect(delayUntil(step({ delay: { duration: 0, fire_at_local: "2026-03-29T02:30:00" } }), reached, "Europe/Berlin", "s")).toEqual(
      utc("2026-03-29T01:30:00Z"),
    );
    // A time that happens twice (clocks going back): the first one.
    expect(delayUntil(step({ delay: { duration: 0, fire_at_local: "2026-11-01T01:30:00" } }), reached, "America/New_York", "s")).toEqual(
      utc("2026-11-01T05:30:00Z"),
    );
  });

  it("a fire_at_local that does not parse falls back to duration, an unknown zone to UTC", () => {
    expect(delayUntil(step({ delay: { duration: 5000, fire_at_local: "tomorrow" } }), reached, "UTC", "s")).toEqual(
      utc("2026-11-30T10:00:05Z"),
    );
    expect(delayUntil(step({ delay: { duration: 0, fire_at_local: "2026-12-01T09:00:00", timezone: "Mars/Olympus" } }), reached, "UTC", "s")).toEqual(
      utc("2026-12-01T09:00:00Z"),
    );
  });

  it("jitter is deterministic per seed, forward only, and spreads different seeds", () => {
    const s = step({ delay: { duration: 60_000, jitter: 10_000 } });
    const base = reached.getTime() + 60_000;
    const times = Array.from({ length: 20 }, (_, i) => delayUntil(s, reached, "UTC", `instance-${i}:s1`)!.getTime());
    for (const t of times) {
      expect(t).toBeGreaterThanOrEqual(base);
      expect(t).toBeLessThanOrEqual(base + 10_000);
    }
    expect(new Set(times).size).toBeGreaterThan(15);
    expect(times.map((_, i) => delayUntil(s, reached, "UTC", `instance-${i}:s1`)!.getTime())).toEqual(times);
  });
});

describe("checkSendWindow", () => {
  const nineToFive = step({ send_window: {} }); // defaults: 9-17, every day

  it("proceeds inside the window and without one", () => {
    expect(checkSendWindow(nineToFive, "UTC", utc("2026-11-30T10:00:00Z"))).toEqual(PROCEED);
    expect(checkSendWindow(nineToFive, "UTC", utc("2026-11-30T16:59:59Z"))).toEqual(PROCEED);
    expect(checkSendWindow(step(), "UTC", utc("2026-11-30T03:00:00Z"))).toEqual(PROCEED);
  });

  it("before the window defers to its opening, after it to the next day's", () => {
    expect(checkSendWindow(nineToFive, "UTC", utc("2026-11-30T07:30:00Z"))).toEqual(defer("2026-11-30T09:00:00Z", "send_window"));
    expect(checkSendWindow(nineToFive, "UTC", utc("2026-11-30T17:00:00Z"))).toEqual(defer("2026-12-01T09:00:00Z", "send_window"));
  });

  it("reads the hours in the instance's timezone", () => {
    // 13:00 UTC is 08:00 in New York (EST): it opens at 14:00 UTC.
    expect(checkSendWindow(nineToFive, "America/New_York", utc("2026-11-30T13:00:00Z"))).toEqual(
      defer("2026-11-30T14:00:00Z", "send_window"),
    );
    expect(checkSendWindow(nineToFive, "America/New_York", utc("2026-11-30T14:00:00Z"))).toEqual(PROCEED);
  });

  it("allowed days (0 = Monday): Friday evening waits for Monday", () => {
    const weekdays = step({ send_window: { days: [0, 1, 2, 3, 4] } });
    expect(checkSendWindow(weekdays, "UTC", utc("2026-11-27T18:00:00Z"))).toEqual(defer("2026-11-30T09:00:00Z", "send_window"));
    expect(checkSendWindow(weekdays, "UTC", utc("2026-11-28T10:00:00Z"))).toEqual(defer("2026-11-30T09:00:00Z", "send_window"));
    expect(checkSendWindow(weekdays, "UTC", utc("2026-11-27T10:00:00Z"))).toEqual(PROCEED);
  });

  it("a window that wraps midnight is open on both sides of it", () => {
    const night = step({ send_window: { start_hour: 22, end_hour: 6 } });
    expect(checkSendWindow(night, "UTC", utc("2026-11-30T23:00:00Z"))).toEqual(PROCEED);
    expect(checkSendWindow(night, "UTC", utc("2026-12-01T05:59:00Z"))).toEqual(PROCEED);
    expect(checkSendWindow(night, "UTC", utc("2026-11-30T12:00:00Z"))).toEqual(defer("2026-11-30T22:00:00Z", "send_window"));
    expect(checkSendWindow(night, "UTC", utc("2026-12-01T06:00:00Z"))).toEqual(defer("2026-12-01T22:00:00Z", "send_window"));
  });

  it("a wrapping window belongs to the day it opens on", () => {
    const fridayNight = step({ send_window: { start_hour: 22, end_hour: 6, days: [4] } });
    expect(checkSendWindow(fridayNight, "UTC", utc("2026-11-27T23:00:00Z"))).toEqual(PROCEED);
    expect(checkSendWindow(fridayNight, "UTC", utc("2026-11-28T03:00:00Z"))).toEqual(PROCEED); // Saturday 03:00
    expect(checkSendWindow(fridayNight, "UTC", utc("2026-11-27T03:00:00Z"))).toEqual(defer("2026-11-27T22:00:00Z", "send_window"));
    expect(checkSendWindow(fridayNight, "UTC", utc("2026-11-28T07:00:00Z"))).toEqual(defer("2026-12-04T22:00:00Z", "send_window"));
  });

  it("the next opening keeps its local hour across a DST change (Europe/Berlin, America/New_York)", () => {
    // Saturday 18:00 CET; Sunday 09:00 is CEST (UTC+2): 07:00 UTC, where adding 24 h would give 08:00.
    expect(checkSendWindow(nineToFive, "Europe/Berlin", utc("2026-03-28T17:00:00Z"))).toEqual(defer("2026-03-29T07:00:00Z", "send_window"));
    // Autumn: Saturday 18:00 CEST; Sunday 09:00 is CET (UTC+1): 08:00 UTC.
    expect(checkSendWindow(nineToFive, "Europe/Berlin", utc("2026-10-24T16:00:00Z"))).toEqual(defer("2026-10-25T08:00:00Z", "send_window"));
    // New York springs forward on 2026-03-08: Sunday 09:00 EDT is 13:00 UTC.
    expect(checkSendWindow(nineToFive, "America/New_York", utc("2026-03-07T23:00:00Z"))).toEqual(
      defer("2026-03-08T13:00:00Z", "send_window"),
    );
  });

  it("an opening hour that the DST change skips opens when the clock reaches it", () => {
    const early = step({ send_window: { start_hour: 2, end_hour: 5 } });
    // Berlin, Sunday 2026-03-29 00:30 CET: 02:00 never happens, the window opens at 03:00 CEST.
    expect(checkSendWindow(early, "Europe/Berlin", utc("2026-03-28T23:30:00Z"))).toEqual(defer("2026-03-29T01:00:00Z", "send_window"));
    expect(checkSendWindow(early, "Europe/Berlin", utc("2026-03-29T01:00:00Z"))).toEqual(PROCEED);
  });
});

// ---------------------------------------------------------------- runPreflight

interface Answers {
  /** The budget's answer: a unit from the period starting at this time, or exhausted until `retryAt`. */
  budget?: { periodStart: Date } | { retryAt: Date } | "unlimited";
  rate?: "ok" | { retryAt: Date };
}

/** The tenant's reservations over a stand-in for its pool that records the statements asked of it and answers as told. */
function recordingDb(answers: Answers = {}) {
  const calls: string[] = [];
  const query = async ({ name }: { name: string }) => {
    calls.push(name);
    const budget = answers.budget ?? "unlimited";
    if (name === "budget_consume") {
      if (budget === "unlimited") return { rows: [{ consumed_in: null, period_start: null, period_secs: null }] };
      if ("periodStart" in budget) return { rows: [{ consumed_in: budget.periodStart, period_start: budget.periodStart, period_secs: 60 }] };
      return { rows: [{ consumed_in: null, period_start: new Date(budget.retryAt.getTime() - 60_000), period_secs: 60 }] };
    }
    if (name === "rate_limit_consume") {
      const rate = answers.rate ?? "ok";
      return { rows: [rate === "ok" ? { limited: true, taken: true, retry_at: null } : { limited: true, taken: false, retry_at: rate.retryAt }] };
    }
    return { rows: [], rowCount: 1 };
  };
  const pool = { query } as unknown as pg.Pool;
  const claim = { id: "i-1", tenantId: asTenantId("acme"), leaseEpoch: 1, dueAt: new Date(0) };
  return { calls, reservations: new RunStore(backendOn("primary", pool), claim) };
}

describe("runPreflight", () => {
  const now = utc("2026-11-30T10:00:00Z");
  const base = { timezone: "UTC", instanceId: "i-1", reachedAt: now, startedAt: null, now };
  const periodStart = utc("2026-11-30T09:59:00Z");

  it("proceeds when every check does, taking a budget step and a rate-limit unit, then asks the breaker", async () => {
    const { calls, reservations } = recordingDb({ budget: { periodStart } });
    const breakerAsked: string[] = [];
    const decision = await runPreflight({
      ...base, reservations, step: step({ rate_limit_key: "sms" }),
      breaker: () => (breakerAsked.push("asked"), { kind: "proceed" as const }),
    });
    expect(decision).toEqual(PROCEED);
    expect(calls).toEqual(["budget_consume", "rate_limit_consume"]);
    expect(breakerAsked).toEqual(["asked"]);
  });

  it("a deadline failure comes first, before anything is taken", async () => {
    const { calls, reservations } = recordingDb({ budget: { retryAt: utc("2026-11-30T11:00:00Z") } });
    const s = step({ deadline: 1000, delay: { duration: 60_000 }, rate_limit_key: "sms" });
    const decision = await runPreflight({ ...base, reservations, step: s, startedAt: utc("2026-11-30T09:00:00Z") });
    expect(decision).toEqual({ kind: "fail", message: "deadline exceeded", deadline: true });
    expect(calls).toEqual([]);
  });

  it("no budget is burnt on a step its delay or send window holds back", async () => {
    const delayed = recordingDb({ budget: { periodStart } });
    expect(await runPreflight({ ...base, reservations: delayed.reservations, step: step({ delay: { duration: 5000 }, rate_limit_key: "sms" }) })).toEqual(
      defer("2026-11-30T10:00:05Z", "delay"),
    );
    expect(delayed.calls).toEqual([]);

    const closed = recordingDb({ budget: { periodStart } });
    const night = step({ send_window: { start_hour: 22, end_hour: 6 }, rate_limit_key: "sms" });
    expect(await runPreflight({ ...base, reservations: closed.reservations, step: night })).toEqual(defer("2026-11-30T22:00:00Z", "send_window"));
    expect(closed.calls).toEqual([]);
  });

  it("an exhausted budget defers to the next period without touching the rate limit", async () => {
    const { calls, reservations } = recordingDb({ budget: { retryAt: utc("2026-11-30T10:01:00Z") } });
    const breaker = () => {
      throw new Error("the breaker must not be asked");
    };
    expect(await runPreflight({ ...base, reservations, step: step({ rate_limit_key: "sms" }), breaker })).toEqual(
      defer("2026-11-30T10:01:00Z", "budget"),
    );
    expect(calls).toEqual(["budget_consume"]);
  });

  it("a rate-limited step defers and hands its budget step back", async () => {
    const { calls, reservations } = recordingDb({ budget: { periodStart }, rate: { retryAt: utc("2026-11-30T10:00:30Z") } });
    expect(await runPreflight({ ...base, reservations, step: step({ rate_limit_key: "sms" }) })).toEqual(defer("2026-11-30T10:00:30Z", "rate_limit"));
    expect(calls).toEqual(["budget_consume", "rate_limit_consume", "budget_refund"]);
  });

  it("the breaker decides last; its deferral hands the budget step back, its richer proceed passes through", async () => {
    const deferred = recordingDb({ budget: { periodStart } });
    const open: PreflightDecision = { kind: "defer", until: utc("2026-11-30T10:01:00Z"), reason: "breaker" };
    expect(await runPreflight({ ...base, reservations: deferred.reservations, step: step(), breaker: () => open })).toEqual(open);
    expect(deferred.calls).toEqual(["budget_consume", "budget_refund"]);

    const fallback = recordingDb({ budget: "unlimited" });
    const viaFallback = { kind: "proceed" as const, handler: "backup_sms" };
    expect(await runPreflight({ ...base, reservations: fallback.reservations, step: step(), breaker: async () => viaFallback })).toBe(viaFallback);
  });

  it("an unlimited tenant has nothing to hand back", async () => {
    const { calls, reservations } = recordingDb({ budget: "unlimited", rate: { retryAt: utc("2026-11-30T10:00:30Z") } });
    expect((await runPreflight({ ...base, reservations, step: step({ rate_limit_key: "sms" }) })).kind).toBe("defer");
    expect(calls).toEqual(["budget_consume", "rate_limit_consume"]);
  });
});
