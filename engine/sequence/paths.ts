// What templates (wire-format B.1) and expressions (B.2) read: the resolution scope, dotted-path
// navigation, and the few value helpers both languages define the same way (`len`, `json`,
// numeric coercion). No Node-only imports: the editor runs this in the browser.

/** Everything a template or expression can read, taken right before the step (or condition) runs. */
export interface Scope {
  context: { data: unknown; config: unknown };
  /** Latest recorded output per block id (already filtered of internal rows by the caller). */
  outputs: Record<string, unknown>;
  instanceId: string;
  runtime: Record<string, unknown>;
  state: Record<string, unknown>;
}

/** First segments a template may start with; anything else is "unknown template root". */
const TEMPLATE_ROOTS: ReadonlySet<string> = new Set([
  "context", "data", "config", "outputs", "steps", "input", "instance_id", "runtime", "state",
]);

// Loop conditions see no outputs (B.2 visibility). Orch8 hands them `{}`, so `outputs` itself is an
// empty object there, not null.
const NO_OUTPUTS: Record<string, unknown> = Object.freeze({});

/** `"a.b.0"` → `["a", "b", "0"]`. No bracket syntax: `items[0]` is one (missing) key. */
export function splitPath(path: string): string[] {
  return path.split(".");
}

/** The segment before the first dot. */
export function rootOf(path: string): string {
  const dot = path.indexOf(".");
  return dot === -1 ? path : path.slice(0, dot);
}

export function isTemplateRoot(path: string): boolean {
  return TEMPLATE_ROOTS.has(rootOf(path));
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const INDEX = /^[0-9]+$/;

/**
 * One step down. Only own properties count, so `__proto__`, `constructor`, `toString` or a
 * string's `length` read as missing: a tenant's template can never reach a prototype. Arrays
 * answer purely numeric segments only. Missing is `null` (JSON has no undefined).
 */
export function child(container: unknown, key: string): unknown {
  if (Array.isArray(container)) {
    if (!INDEX.test(key)) return null;
    const index = Number(key);
    return index < container.length && Object.hasOwn(container, index) ? (container[index] ?? null) : null;
  }
  if (isJsonObject(container) && Object.hasOwn(container, key)) return container[key] ?? null;
  return null;
}

/** Follows `segments[start..]` from `value`; null as soon as a step is missing. */
export function navigate(value: unknown, segments: readonly string[], start = 0): unknown {
  let current: unknown = value ?? null;
  for (let index = start; index < segments.length && current !== null; index++) {
    current = child(current, segments[index] as string);
  }
  return current;
}

export type TemplatePathResult = { value: unknown } | { error: string };

/**
 * A template path (B.1). Unknown roots and `context.<other>` are errors the caller turns into a
 * step failure; a missing value under a known root is `null`.
 */
export function resolveTemplatePath(path: string, scope: Scope): TemplatePathResult {
  const segments = splitPath(path);
  const [root, section] = segments;
  switch (root) {
    case "context":
      if (section === "data") return { value: navigate(scope.context.data, segments, 2) };
      if (section === "config") return { value: navigate(scope.context.config, segments, 2) };
      return { error: `unknown context section \`${section ?? ""}\` in \`${path}\` (only context.data and context.config exist)` };
    case "state":
      return { value: navigate(scope.state, segments, 1) };
    default: {
      const value = commonRoot(segments, scope, true);
      return value === UNKNOWN ? { error: `unknown template root \`${root}\` in \`${path}\`` } : { value };
    }
  }
}

/**
 * An expression path (B.2). Never fails: `context.<other>` is null, and any root not listed in
 * B.2 (including `state`, which B.2 does not list) is read under `context.data`, so
 * `mode == "fast"` means `context.data.mode == "fast"`.
 */
export function resolveExpressionPath(path: string, scope: Scope, outputsVisible: boolean): unknown {
  const segments = splitPath(path);
  const [root, section] = segments;
  if (root === "context") {
    if (section === "data") return navigate(scope.context.data, segments, 2);
    if (section === "config") return navigate(scope.context.config, segments, 2);
    return null;
  }
  const value = commonRoot(segments, scope, outputsVisible);
  return value === UNKNOWN ? navigate(scope.context.data, segments, 0) : value;
}

const UNKNOWN = Symbol("unknown root");

/** The roots both languages share, with the same meaning. */
function commonRoot(segments: readonly string[], scope: Scope, outputsVisible: boolean): unknown {
  switch (segments[0]) {
    case "data":
      return navigate(scope.context.data, segments, 1);
    case "config":
      return navigate(scope.context.config, segments, 1);
    case "outputs":
    case "steps":
      return navigate(outputsVisible ? scope.outputs : NO_OUTPUTS, segments, 1);
    case "input":
      return navigate(child(scope.context.data, "input"), segments, 1);
    case "instance_id":
      return navigate(scope.instanceId, segments, 1);
    case "runtime":
      return navigate(scope.runtime, segments, 1);
    default:
      return UNKNOWN;
  }
}

// ---- value helpers shared by both languages ----

/** Unicode characters (code points), not UTF-16 units and not UTF-8 bytes. */
export function charCount(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // A high surrogate followed by a low one is a single character.
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
    count++;
  }
  return count;
}

/** `len`: elements of an array, keys of an object, characters of a string; 0 for anything else. */
export function lengthOf(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (isJsonObject(value)) return Object.keys(value).length;
  if (typeof value === "string") return charCount(value);
  return 0;
}

/** UTF-8 size of `text`, counting no further than `limit + 1` (callers only ask "is it over?"). */
export function utf8Length(text: string, limit = Infinity): number {
  let bytes = 0;
  for (let index = 0; index < text.length && bytes <= limit; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        index++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Compact JSON text of a value (`null` for missing), or undefined when the value cannot be
 * serialized (too deep for the stack, a cycle). Callers decide what that means.
 */
export function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value ?? null);
  } catch {
    return undefined;
  }
}

// Digits with an optional fraction and exponent, nothing else: no whitespace, hex, "Infinity"
// or empty string, which JavaScript's Number() would all accept.
const NUMERIC = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/**
 * Arithmetic coercion (B.2): numbers, numeric strings and booleans are numbers; everything else
 * (null, other strings, arrays, objects) is not. Non-finite results count as not a number.
 */
export function toNumber(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string" && value.length <= 400 && NUMERIC.test(value)) {
    const number = Number(value);
    return Number.isFinite(number) ? number : undefined;
  }
  return undefined;
}

/** JSON has no NaN or Infinity: such results are null. */
export function finiteOrNull(number: number): number | null {
  return Number.isFinite(number) ? number : null;
}
