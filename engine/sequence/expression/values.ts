// How B.2 reads values: truthiness, `==`, and the order of `<`/`>` and of sorting.
import { isJsonObject } from "../paths.ts";

/** B.2 truthiness: null, false, 0, "" and [] are falsy; everything else, `{}` included, is truthy. */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

/** Only number/number and string/string pairs are ordered (B.2); anything else is undefined. */
export function ordering(left: unknown, right: unknown): number | undefined {
  if (typeof left === "number" && typeof right === "number") return left < right ? -1 : left > right ? 1 : 0;
  if (typeof left === "string" && typeof right === "string") return compareStrings(left, right);
  return undefined;
}

/**
 * Code point order (as Rust compares strings). JavaScript's `<` compares UTF-16 units, which puts
 * astral characters (surrogates, 0xD800–0xDFFF) before U+E000–U+FFFF; shifting fixes that.
 */
export function compareStrings(left: string, right: string): number {
  const shared = Math.min(left.length, right.length);
  for (let index = 0; index < shared; index++) {
    const a = left.charCodeAt(index);
    const b = right.charCodeAt(index);
    if (a !== b) return fixUp(a) - fixUp(b);
  }
  return left.length - right.length;
}

const fixUp = (unit: number) => (unit >= 0xd800 ? (unit >= 0xe000 ? unit - 0x800 : unit + 0x2000) : unit);

/**
 * `==` (B.2): numbers numerically, everything else by exact JSON equality with no coercion
 * (`"5" == 5` and `"x" == null` are false). Objects compare by keys regardless of order.
 * Iterative, so deep data cannot overflow the stack.
 */
export function jsonEquals(left: unknown, right: unknown): boolean {
  const pending: [unknown, unknown][] = [[left ?? null, right ?? null]];
  for (let pair = pending.pop(); pair; pair = pending.pop()) {
    const [a, b] = pair;
    if (a === b) continue;
    if (Array.isArray(a)) {
      if (!Array.isArray(b) || a.length !== b.length) return false;
      for (let index = 0; index < a.length; index++) pending.push([a[index] ?? null, b[index] ?? null]);
    } else if (isJsonObject(a)) {
      if (!isJsonObject(b)) return false;
      const keys = Object.keys(a);
      if (keys.length !== Object.keys(b).length) return false;
      for (const key of keys) {
        if (!Object.hasOwn(b, key)) return false;
        pending.push([a[key] ?? null, b[key] ?? null]);
      }
    } else {
      return false;
    }
  }
  return true;
}
