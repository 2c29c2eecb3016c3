// The built-in function table: what a `call` node runs, by name.
//
// B.2 names the functions but not their semantics; these follow Orch8 where it is sensible.
// Missing arguments read as null. "Number" means the arithmetic coercion (`toNumber`: numbers,
// numeric strings, booleans). Array functions give null for arrays over
// EXPRESSION_LIMITS.arrayElements.
//
//   abs(x)               |x|; null if x is not a number.
//   len(x)               elements of an array, keys of an object, characters (code points, not
//                        bytes as in Orch8) of a string; 0 for anything else.
//   json(x)              compact JSON text of x (`"null"` when missing); null above 4 MiB.
//   now()                the current time as an RFC 3339 UTC string, e.g. 2025-05-01T12:00:00.000Z.
//   uuid()               a random (v4) UUID string.
//   random(min, max)     an integer in [min, max), defaults 0 and 100, bounds truncated to
//                        integers; min when max <= min.
//   format_date(t, fmt)  t (RFC 3339, or a plain YYYY-MM-DD as midnight UTC) formatted with a
//                        strftime subset in t's own offset; fmt defaults to "%Y-%m-%d". Supported:
//                        %Y %y %m %d %e %H %I %p %M %S %j %a %A %b %B %u %w %F %T %z %:z %s %%.
//                        null if t does not parse or fmt has any other directive.
//   day_of_week(t)       0 = Monday … 6 = Sunday, in t's own offset; null if t does not parse.
//   keys(o), values(o)   an object's keys / values in code point order of the keys (the stored
//                        order means nothing: PostgreSQL's jsonb reorders keys); [] for non-objects.
//   contains(h, n)       array h has an element == n; or string h contains string n; else false.
//   starts_with(s, p)    both strings and s starts with p; else false. ends_with likewise.
//   sum(a)               sum of the numeric elements (others skipped; [] → 0); null for non-arrays.
//   avg(a)               mean of the numeric elements; null when there are none.
//   min(a), max(a)       smallest / largest numeric element; null when there are none. With two or
//                        more arguments the arguments themselves are the list: min(x, 10).
//   first(a), last(a)    first / last element; null when empty or not an array.
//   slice(x, s, e)       elements (or characters of a string) from s up to e; negative indexes
//                        count from the end (Orch8 clamps them to 0); e defaults to the end.
//   sort(a, order)       numbers ascending, then strings in code point order, then everything else
//                        in original order; order "desc" reverses the comparison. Stable.
//   unique(a)            first occurrence of each element, by ==.
//   count(a, x)          elements == x; count(a) alone is the element count (Orch8 would count
//                        nulls). count(s, t) with strings counts non-overlapping occurrences.
//   change_pct(old, new) (new - old) / old * 100; null if old is 0 or either is not a number.
//   clamp(x, lo, hi)     x limited to [lo, hi]; null if any is not a number or lo > hi (Orch8
//                        would return x unchanged, or panic on lo > hi).
//   anything else        null (B.2: unknown functions are null).
import { finiteOrNull, isJsonObject, jsonText, lengthOf, toNumber, utf8Length } from "../paths.ts";
import { formatTimestamp, parseTimestamp } from "./dates.ts";
import { EXPRESSION_LIMITS } from "./limits.ts";
import type { ExpressionSources } from "./sources.ts";
import { compareStrings, jsonEquals, ordering } from "./values.ts";

/** What a function may use besides its arguments; the evaluator passes itself. */
interface CallContext {
  readonly sources: ExpressionSources;
}

type Fn = (args: unknown[], context: CallContext) => unknown;

export const FUNCTIONS: ReadonlyMap<string, Fn> = new Map<string, Fn>([
  ["abs", ([x]) => numberOrNull(toNumber(x), Math.abs)],
  ["len", ([x]) => lengthOf(x)],
  ["json", ([x]) => {
    const text = jsonText(x);
    return text === undefined || utf8Length(text, EXPRESSION_LIMITS.stringLength) > EXPRESSION_LIMITS.stringLength ? null : text;
  }],
  ["now", (_, { sources }) => {
    const now = sources.now();
    return Number.isNaN(now.getTime()) ? null : now.toISOString();
  }],
  ["uuid", (_, { sources }) => sources.uuid()],
  ["random", ([low, high], { sources }) => {
    const min = Math.trunc(toNumber(low) ?? 0);
    const max = Math.trunc(toNumber(high) ?? 100);
    if (max <= min) return min;
    const fraction = Math.min(Math.max(sources.random(), 0), 1 - Number.EPSILON);
    return Math.floor(fraction * (max - min)) + min;
  }],
  ["format_date", ([timestamp, format]) => {
    const parsed = typeof timestamp === "string" ? parseTimestamp(timestamp) : undefined;
    if (!parsed) return null;
    if (format === undefined) return formatTimestamp(parsed, "%Y-%m-%d");
    return typeof format === "string" ? formatTimestamp(parsed, format) : null;
  }],
  ["day_of_week", ([timestamp]) => {
    const parsed = typeof timestamp === "string" ? parseTimestamp(timestamp) : undefined;
    return parsed ? (parsed.weekday + 6) % 7 : null;
  }],
  ["keys", ([object]) => {
    if (!isJsonObject(object)) return [];
    const keys = Object.keys(object);
    return keys.length > EXPRESSION_LIMITS.arrayElements ? null : keys.sort(compareStrings);
  }],
  ["values", ([object]) => {
    if (!isJsonObject(object)) return [];
    const keys = Object.keys(object);
    return keys.length > EXPRESSION_LIMITS.arrayElements ? null : keys.sort(compareStrings).map((key) => object[key]);
  }],
  ["contains", ([haystack, needle]) => {
    if (Array.isArray(haystack)) return scannable(haystack) ? haystack.some((item) => jsonEquals(item, needle)) : null;
    return typeof haystack === "string" && typeof needle === "string" && haystack.includes(needle);
  }],
  ["starts_with", ([text, prefix]) => typeof text === "string" && typeof prefix === "string" && text.startsWith(prefix)],
  ["ends_with", ([text, suffix]) => typeof text === "string" && typeof suffix === "string" && text.endsWith(suffix)],
  ["sum", ([list]) => {
    const numbers = numericElements(list);
    return numbers ? finiteOrNull(numbers.reduce((total, number) => total + number, 0)) : null;
  }],
  ["avg", ([list]) => {
    const numbers = numericElements(list);
    return numbers && numbers.length > 0 ? finiteOrNull(numbers.reduce((total, number) => total + number, 0) / numbers.length) : null;
  }],
  ["min", (args) => extreme(args, (a, b) => a < b)],
  ["max", (args) => extreme(args, (a, b) => a > b)],
  ["first", ([list]) => (Array.isArray(list) ? (list[0] ?? null) : null)],
  ["last", ([list]) => (Array.isArray(list) ? (list[list.length - 1] ?? null) : null)],
  ["slice", ([value, start, end]) => {
    if (typeof value === "string") {
      if (value.length > EXPRESSION_LIMITS.stringLength) return null;
      const chars = Array.from(value);
      return chars.slice(...sliceBounds(chars.length, start, end)).join("");
    }
    return Array.isArray(value) && scannable(value) ? value.slice(...sliceBounds(value.length, start, end)) : null;
  }],
  ["sort", ([list, order]) => {
    if (!Array.isArray(list) || !scannable(list)) return null;
    const direction = order === "desc" ? -1 : 1;
    return [...list].sort((a, b) => direction * sortOrder(a, b));
  }],
  ["unique", ([list]) => {
    if (!Array.isArray(list) || !scannable(list)) return null;
    const seen = new Set<string>();
    const out: unknown[] = [];
    for (const item of list) {
      const key = identity(item);
      if (key === undefined) return null;
      if (!seen.has(key)) {
        seen.add(key);
        out.push(item);
      }
    }
    return out;
  }],
  ["count", (args) => {
    const [haystack, needle] = args;
    if (Array.isArray(haystack)) {
      if (!scannable(haystack)) return null;
      return args.length < 2 ? haystack.length : haystack.filter((item) => jsonEquals(item, needle)).length;
    }
    if (typeof haystack === "string" && typeof needle === "string" && needle !== "") return haystack.split(needle).length - 1;
    return 0;
  }],
  ["change_pct", ([before, after]) => {
    const old = toNumber(before);
    const now = toNumber(after);
    return old === undefined || now === undefined || old === 0 ? null : finiteOrNull(((now - old) / old) * 100);
  }],
  ["clamp", ([value, low, high]) => {
    const [x, lo, hi] = [toNumber(value), toNumber(low), toNumber(high)];
    return x === undefined || lo === undefined || hi === undefined || lo > hi ? null : Math.min(Math.max(x, lo), hi);
  }],
]);

function numberOrNull(number: number | undefined, apply: (number: number) => number): number | null {
  return number === undefined ? null : finiteOrNull(apply(number));
}

function scannable(list: readonly unknown[]): boolean {
  return list.length <= EXPRESSION_LIMITS.arrayElements;
}

function numericElements(list: unknown): number[] | undefined {
  if (!Array.isArray(list) || !scannable(list)) return undefined;
  const numbers: number[] = [];
  for (const item of list) {
    const number = toNumber(item);
    if (number !== undefined) numbers.push(number);
  }
  return numbers;
}

function extreme(args: unknown[], better: (a: number, b: number) => boolean): number | null {
  const numbers = numericElements(args.length > 1 ? args : args[0]);
  if (!numbers || numbers.length === 0) return null;
  return numbers.reduce((best, number) => (better(number, best) ? number : best));
}

/** JavaScript `slice` bounds from expression arguments (truncated; negative counts from the end). */
function sliceBounds(length: number, start: unknown, end: unknown): [number, number] {
  const from = Math.trunc(toNumber(start) ?? 0);
  const to = end === undefined || end === null ? length : Math.trunc(toNumber(end) ?? length);
  return [from, to];
}

const sortRank = (value: unknown) => (typeof value === "number" ? 0 : typeof value === "string" ? 1 : 2);

/** A total order, so sort is deterministic even on mixed arrays. */
function sortOrder(a: unknown, b: unknown): number {
  const rank = sortRank(a) - sortRank(b);
  if (rank !== 0) return rank;
  return ordering(a, b) ?? 0;
}

/** A key equal for exactly the values `==` calls equal; undefined if too deep to build. */
function identity(value: unknown): string | undefined {
  if (typeof value === "number") return `n${value === 0 ? 0 : value}`;
  if (typeof value === "string") return `s${value}`;
  if (typeof value !== "object" || value === null) return `l${String(value)}`;
  try {
    return `j${canonical(value, 0)}`;
  } catch {
    return undefined;
  }
}

/** JSON with sorted keys; throws past 256 levels rather than risk the stack. */
function canonical(value: unknown, depth: number): string {
  if (depth > 256) throw new RangeError("too deep");
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item ?? null, depth + 1)).join(",")}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key] ?? null, depth + 1)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}
