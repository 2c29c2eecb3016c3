// Cron expressions in the dialect of wire-format M (Quartz-style): 5 fields (seconds = 0),
// 6 (seconds first) or 7 (a year last); `*`, lists, ranges, `*/n` and `a/n` steps, month and
// weekday names; day-of-week 1-7 with 1 = Sunday. Anything else is refused with a message that
// says why. croner does the matching; this wrapper checks the shapes first (croner accepts more:
// `?`, `L`, `W`, `#`, nicknames, 0 = Sunday) and does the time-zone mapping itself, so every wall
// time behaves as M says: one in a spring-forward gap fires at the first instant after the gap,
// and one that a fall-back repeats fires once, at its first occurrence.
import { Cron } from "croner";
import { AppError } from "../errors.ts";

interface Field {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
// Quartz numbering: SUN = 1 … SAT = 7.
const WEEKDAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

const FIELDS: readonly Field[] = [
  { name: "seconds", min: 0, max: 59 },
  { name: "minutes", min: 0, max: 59 },
  { name: "hours", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: MONTHS },
  { name: "day of week", min: 1, max: 7, names: WEEKDAYS },
  { name: "year", min: 1970, max: 2099 },
];

/** An expression the dialect refuses; `message` is the parser text of M's 400. */
export class CronSyntaxError extends Error {}

const ITEM = /^(\*|[A-Za-z0-9]+)(?:-([A-Za-z0-9]+))?(?:\/(\d+))?$/;

function value(field: Field, token: string): number {
  if (/^\d+$/.test(token)) {
    const n = Number(token);
    if (n < field.min || n > field.max) throw new CronSyntaxError(`${field.name}: ${token} is out of range ${field.min}-${field.max}`);
    return n;
  }
  const index = field.names?.indexOf(token.toUpperCase()) ?? -1;
  if (index < 0) throw new CronSyntaxError(`${field.name}: ${JSON.stringify(token)} is not a value`);
  return index + field.min;
}

/** Checks one field; returns it with names replaced by their numbers (what croner is given). */
function checkField(field: Field, text: string): string {
  return text.split(",").map((item) => {
    const match = ITEM.exec(item);
    if (!match) throw new CronSyntaxError(`${field.name}: ${JSON.stringify(item)} is not a value, range or step`);
    const [, start, end, step] = match;
    if (step !== undefined && (Number(step) < 1 || Number(step) > field.max - field.min + 1)) {
      throw new CronSyntaxError(`${field.name}: step ${step} is out of range 1-${field.max - field.min + 1}`);
    }
    if (start === "*") {
      if (end !== undefined) throw new CronSyntaxError(`${field.name}: ${JSON.stringify(item)} is not a range`);
      return item;
    }
    const from = value(field, start!);
    if (end === undefined) return step === undefined ? String(from) : `${from}/${step}`;
    const to = value(field, end);
    if (to < from) throw new CronSyntaxError(`${field.name}: range ${item} runs backwards`);
    return `${from}-${to}${step === undefined ? "" : `/${step}`}`;
  }).join(",");
}

/** A checked expression: its fields in 7-field form, for croner. */
export interface ParsedCron {
  /** What was given, trimmed. */
  source: string;
  /** `sec min hour dom month dow year`, names as numbers. */
  normalized: string;
}

/** Parses an expression of M's dialect, or throws CronSyntaxError. */
export function parseCron(expression: string): ParsedCron {
  const parts = expression.trim().split(/\s+/).filter((part) => part !== "");
  if (parts.length < 5 || parts.length > 7) {
    throw new CronSyntaxError(`expected 5, 6 or 7 fields, got ${parts.length}`);
  }
  if (parts.length === 5) parts.unshift("0");
  if (parts.length === 6) parts.push("*");
  const normalized = parts.map((part, index) => checkField(FIELDS[index]!, part)).join(" ");
  return { source: expression.trim(), normalized };
}

/** M's 400 for a bad expression. */
export function invalidCron(error: CronSyntaxError): AppError {
  return new AppError("invalid_argument", `invalid cron expression: ${error.message}`, ["cron_expr"]);
}

/** Parses, or throws M's 400 (an AppError) for a bad expression. */
export function requireCron(expression: string): ParsedCron {
  try {
    return parseCron(expression);
  } catch (error) {
    if (error instanceof CronSyntaxError) throw invalidCron(error);
    throw error;
  }
}

// ------------------------------------------------------------------ time zones

const formats = new Map<string, Intl.DateTimeFormat>();
function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric",
    });
    formats.set(zone, format);
  }
  return format;
}

/** Whether `zone` names an IANA zone (`UTC`, `America/New_York`); fixed offsets (`+05:00`) are not zones. */
export function isIanaZone(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** M's 400 for a zone that is not an IANA name. */
export function requireZone(zone: string): string {
  if (isIanaZone(zone)) return zone;
  throw new AppError("invalid_argument", `invalid timezone: '${zone.slice(0, 64)}' (expected an IANA time zone name such as UTC or America/New_York)`, ["timezone"]);
}

/** The wall clock of `zone` at instant `ms`, as milliseconds of a UTC date with those fields (whole seconds). */
function wallAt(ms: number, zone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatOf(zone).formatToParts(new Date(ms))) if (part.type !== "literal") parts[part.type] = Number(part.value);
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

const HOUR = 3_600_000;

/** The zone's UTC offset at instant `ms`, in ms (the wall clock is read to the second). */
const offsetAt = (ms: number, zone: string) => wallAt(ms, zone) - Math.floor(ms / 1000) * 1000;

/**
 * The instant a wall time of `zone` fires at: itself when it exists once, its first occurrence
 * when a fall-back repeats it, and the first instant after the gap when a spring-forward skips it.
 */
export function instantOfWall(wall: number, zone: string): number {
  // Offsets in force well before and after: a transition moves the clock by at most a few hours.
  const candidates = [wall - offsetAt(wall - 12 * HOUR, zone), wall - offsetAt(wall + 12 * HOUR, zone)];
  const valid = candidates.filter((instant) => wallAt(instant, zone) === wall);
  if (valid.length > 0) return Math.min(...valid);
  // In a gap: the transition is between the two readings; find its first instant (to the ms).
  let [low, high] = [Math.min(...candidates), Math.max(...candidates)];
  const before = offsetAt(low, zone);
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (offsetAt(mid, zone) === before) low = mid;
    else high = mid;
  }
  return high;
}

// ------------------------------------------------------------------ occurrences

const patterns = new Map<string, Cron>();
/** croner on a wall clock without DST (offset 0): the zone's mapping is instantOfWall's. */
function wallPattern(parsed: ParsedCron): Cron {
  let cron = patterns.get(parsed.normalized);
  if (!cron) {
    cron = new Cron(parsed.normalized, {
      utcOffset: 0, mode: "7-part", alternativeWeekdays: true, sloppyRanges: true, domAndDow: true, paused: true,
    });
    if (patterns.size > 10_000) patterns.clear();
    patterns.set(parsed.normalized, cron);
  }
  return cron;
}

/** The first occurrence strictly after `after`, in UTC; null when there is none (a year passed). */
export function nextFireAfter(parsed: ParsedCron, zone: string, after: Date): Date | null {
  const cron = wallPattern(parsed);
  const t = after.getTime();
  // Wall times map to instants in order, and the wall time at `t` maps to `t` or before it, so
  // the answer is the first later wall time whose instant is after `t`.
  let wall = new Date(wallAt(t, zone) + (t % 1000 + 1000) % 1000);
  for (;;) {
    const next = cron.nextRun(wall);
    if (!next) return null;
    const instant = instantOfWall(next.getTime(), zone);
    if (instant > t) return new Date(instant);
    wall = next;
  }
}

/** The next `n` occurrences after `after`. */
export function nextFires(parsed: ParsedCron, zone: string, after: Date, n: number): Date[] {
  const fires: Date[] = [];
  let from = after;
  while (fires.length < n) {
    const next = nextFireAfter(parsed, zone, from);
    if (!next) break;
    fires.push(next);
    from = next;
  }
  return fires;
}
