// Pre-flight: what stands between a claimed instance and the dispatch of its current step.
// Each check answers proceed, defer until a time, or fail with a reason; the caller applies the
// answer (state, next_fire_at, defer_reason). The pure checks read nothing but their arguments.
// The budget and the rate limit are reservations: a proceed from them has taken a unit.
import { createHash } from "node:crypto";
import type { SendWindow, StepBlock } from "../sequence/schema.ts";
import type { RunStore } from "../storage/index.ts";
import { addDays, fromLocal, isoDate, parseLocalDateTime, toLocal, weekday, zoneOrUtc, type LocalDateTime } from "./zoned-time.ts";

export type DeferReason = "delay" | "send_window" | "rate_limit" | "budget" | "breaker" | "cap";
export type PreflightDecision =
  /** `handler`: the breaker chose the step's fallback handler over its open primary. */
  | { kind: "proceed"; handler?: string }
  | { kind: "defer"; until: Date; reason: DeferReason }
  /** `deadline`: the step's deadline has passed (its on_deadline_breach handler is due). */
  | { kind: "fail"; message: string; deadline?: true };

const PROCEED: PreflightDecision = { kind: "proceed" };

function defer(until: Date | number, reason: DeferReason): PreflightDecision {
  return { kind: "defer", until: new Date(until), reason };
}

// ---------------------------------------------------------------- deadline

/**
 * A step's `deadline` is an SLA counted from when the step first started, across retries.
 * It is breached once that much time has passed (the deadline instant itself is too late).
 * Before the step's first start there is nothing to measure.
 */
export function checkDeadline(step: StepBlock, stepStartedAt: Date | null | undefined, now: Date): PreflightDecision {
  if (step.deadline === undefined || !stepStartedAt) return PROCEED;
  const breached = now.getTime() - stepStartedAt.getTime() >= step.deadline;
  return breached ? { kind: "fail", message: "deadline exceeded", deadline: true } : PROCEED;
}

// ---------------------------------------------------------------- delay

/** The seed of a step's jitter: stable for one step of one instance, different across instances. */
export function jitterSeed(instanceId: string, blockId: string): string {
  return `${instanceId}:${blockId}`;
}

/** A fraction of `jitterMs` (0 to `jitterMs` inclusive) chosen by the seed: the same seed, the same jitter. */
function jitterFor(jitterMs: number, seed: string): number {
  const hash = createHash("sha256").update(seed).digest().readUIntBE(0, 6);
  return Math.floor((hash / 2 ** 48) * (jitterMs + 1));
}

/** `at`, or the same local time on the first later day that is not a weekend or a holiday. */
function onBusinessDay(at: number, zone: string, holidays: ReadonlySet<string>): number {
  let local = toLocal(at, zone);
  const skip = (day: LocalDateTime) => weekday(day) >= 5 || holidays.has(isoDate(day));
  if (!skip(local)) return at;
  while (skip(local)) local = addDays(local, 1);
  return fromLocal(local, zone);
}

/**
 * When a step's delay ends. The time is `reachedAt + duration`, or `fire_at_local` read in the
 * delay's timezone (else the instance's) when it is given and parses (Orch8 falls back to the
 * duration otherwise). Jitter is added next, forward only, so a step never fires before its
 * delay; business days are applied last, so jitter cannot push the step onto a weekend.
 */
export function delayUntil(step: StepBlock, reachedAt: Date, timezone: string, seed: string): Date | null {
  const delay = step.delay;
  if (!delay) return null;
  const zone = zoneOrUtc(delay.timezone ?? timezone);
  const local = delay.fire_at_local ? parseLocalDateTime(delay.fire_at_local) : null;
  let at = local ? fromLocal(local, zone) : reachedAt.getTime() + delay.duration;
  if (delay.jitter) at += jitterFor(delay.jitter, seed);
  if (delay.business_days_only) at = onBusinessDay(at, zone, new Set(delay.holidays));
  return new Date(at);
}

/** The step waits out its `delay`, counted from when the instance reached the step. */
export function checkDelay(step: StepBlock, reachedAt: Date, timezone: string, now: Date, seed: string): PreflightDecision {
  const until = delayUntil(step, reachedAt, timezone, seed);
  return until && until.getTime() > now.getTime() ? defer(until, "delay") : PROCEED;
}

// ---------------------------------------------------------------- send window

/**
 * Whether the window is open at `local`. A window belongs to the day it opens on: one that wraps
 * midnight (22 to 6) with `days: [4]` is open from Friday 22:00 to Saturday 06:00. Orch8 checks
 * the day of the current hour instead, which opens Friday 00:00-06:00 and shuts Saturday morning.
 */
function isOpen(window: SendWindow, days: ReadonlySet<number>, local: LocalDateTime): boolean {
  const allowed = (day: number) => days.size === 0 || days.has(day);
  const today = weekday(local);
  const { start_hour: start, end_hour: end } = window;
  if (start === end) return allowed(today); // refused at creation; Orch8 reads it as all day
  if (start < end) return allowed(today) && local.hour >= start && local.hour < end;
  if (local.hour >= start) return allowed(today);
  return local.hour < end && allowed((today + 6) % 7);
}

/** The first opening after `nowMs`: the start hour of the next allowed day, found day by day. */
function nextOpening(window: SendWindow, days: ReadonlySet<number>, local: LocalDateTime, zone: string, nowMs: number): number {
  const hour = window.start_hour === window.end_hour ? 0 : window.start_hour;
  // Each step is a calendar day, not 24 h, so a DST change cannot shift the opening hour.
  for (let ahead = 0; ahead <= 7; ahead++) {
    const day = addDays(local, ahead);
    if (days.size > 0 && !days.has(weekday(day))) continue;
    const opening = fromLocal({ ...day, hour, minute: 0, second: 0, millisecond: 0 }, zone);
    if (opening > nowMs) return opening;
  }
  throw new Error("unreachable: a week always holds an allowed day");
}

/**
 * The step runs only inside `[start_hour, end_hour)` on an allowed day (0 = Monday) in the
 * instance's timezone; outside, it waits for the next opening.
 */
export function checkSendWindow(step: StepBlock, timezone: string, now: Date): PreflightDecision {
  const window = step.send_window;
  if (!window) return PROCEED;
  const zone = zoneOrUtc(timezone);
  // Days outside 0-6 are refused at creation; ignoring them here can never block a step forever.
  const days = new Set(window.days.filter((day) => day >= 0 && day <= 6));
  const local = toLocal(now.getTime(), zone);
  if (isOpen(window, days, local)) return PROCEED;
  return defer(nextOpening(window, days, local, zone, now.getTime()), "send_window");
}

// ---------------------------------------------------------------- the pipeline's entry

/** The tenant's budget and rate limits, bound to the instance's tenant (its RunStore). */
export type Reservations = Pick<RunStore, "tryConsumeBudget" | "refundBudget" | "tryConsumeRateLimit">;

export interface PreflightInput {
  /** The parsed step (defaults applied, durations in ms). */
  step: StepBlock;
  /** The instance's IANA timezone. */
  timezone: string;
  /** When the instance reached this step: its delay counts from here. */
  reachedAt: Date;
  /** When the step first started, across retries: its deadline counts from here. Absent before. */
  startedAt?: Date | null;
  instanceId: string;
  now: Date;
  reservations: Reservations;
  /** The (tenant, handler) breaker decision (engine/breakers), asked last. Absent means proceed. */
  breaker?: () => PreflightDecision | Promise<PreflightDecision>;
  /**
   * False when the tenant is known to have no budget, which saves the budget statement on the
   * hot path (the scheduler keeps that list fresh). Absent means check.
   */
  budgeted?: boolean;
}

/**
 * All pre-flight checks of one step, in DESIGN's order (deadline, budget, delay, send window,
 * rate limit, breaker) but for one change: the budget is taken after the pure checks. Taking a
 * budget step or a rate-limit unit is a write that another process sees at once, so a step that
 * its delay or send window holds back must not take one. The answer is the first that is not
 * proceed. When the rate limit or the breaker defers a step that has taken a budget step, the
 * step is handed back: a rate-limited tenant must not drain its budget without running anything.
 * A rate-limit unit taken before a breaker deferral is not handed back; it frees itself when its
 * window passes.
 */
export async function runPreflight(input: PreflightInput): Promise<PreflightDecision> {
  const { step, timezone, reservations, now } = input;

  for (const decision of [
    checkDeadline(step, input.startedAt, now),
    checkDelay(step, input.reachedAt, timezone, now, jitterSeed(input.instanceId, step.id)),
    checkSendWindow(step, timezone, now),
  ]) {
    if (decision.kind !== "proceed") return decision;
  }

  const budget = input.budgeted === false ? { ok: true as const, periodStart: null } : await reservations.tryConsumeBudget(now);
  if (!budget.ok) return defer(budget.retryAt, "budget");

  const decision = await afterBudget(input);
  if (decision.kind !== "proceed" && budget.periodStart) await reservations.refundBudget(budget.periodStart);
  return decision;
}

/** The checks after the budget: the rate limit, then the breaker. */
async function afterBudget(input: PreflightInput): Promise<PreflightDecision> {
  const key = input.step.rate_limit_key;
  if (key !== undefined) {
    const unit = await input.reservations.tryConsumeRateLimit(key, input.now);
    if (!unit.ok) return defer(unit.retryAt, "rate_limit");
  }
  return input.breaker ? await input.breaker() : PROCEED;
}
