// Text PostgreSQL cannot store, found before it reaches the database: a lone UTF-16 surrogate
// (text and jsonb must be valid UTF-8; the driver would turn it into U+FFFD or the server refuse
// it with 22P02) and NUL (refused in text and jsonb). Every door checks its input with this (REST
// bodies, tRPC inputs, worker and handler outputs), so bad input is a 400 naming the field, not a
// 500 from the server. Browser-safe.

export interface TextProblem {
  /** Where, as `instances[0].context.data.name`; the empty string for the value itself. */
  path: string;
  message: string;
}

const SURROGATE = "contains an unpaired UTF-16 surrogate";
const NUL = "contains a NUL (\\u0000) character";

// In a `u` regex a surrogate pair is one code point above U+FFFF, so this matches lone halves only.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu;

function problemOf(text: string): string | null {
  if (LONE_SURROGATE.test(text)) return SURROGATE;
  if (text.includes("\u0000")) return NUL;
  return null;
}

function join(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

/** The first string (or object key) of `value` PostgreSQL could not store, depth first; null if none. */
export function unstorableText(value: unknown, path = ""): TextProblem | null {
  if (typeof value === "string") {
    const message = problemOf(value);
    return message ? { path, message } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableText(value[i], join(path, i));
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const keyProblem = problemOf(key);
      // The key itself is bad: name the object and say so, without echoing the key.
      if (keyProblem) return { path, message: `a key ${keyProblem}` };
      const found = unstorableText(item, join(path, key));
      if (found) return found;
    }
  }
  return null;
}

/** `path: message`, or the message alone for the value itself. */
export function describeTextProblem(problem: TextProblem): string {
  return problem.path === "" ? problem.message : `${problem.path}: ${problem.message}`;
}

/** `text` with every lone surrogate and NUL replaced by U+FFFD: for messages we store as given (a vendor's error text). */
export function storableText(text: string): string {
  return text.replace(LONE_SURROGATES, "\uFFFD").replaceAll("\u0000", "\uFFFD");
}
