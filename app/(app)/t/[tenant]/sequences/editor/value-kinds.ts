// Any JSON value (a worker's params, a sub_sequence's input, an interceptor's params) as a tree of
// controls: each value is text, a number, true/false, null, an object of named values or a list.
// Every JSON value is one of these, so none needs to be typed as JSON. No React (value-kinds.test.ts).

export const VALUE_KINDS = ["text", "number", "boolean", "null", "object", "list"] as const;
export type ValueKind = (typeof VALUE_KINDS)[number];

export const KIND_LABELS: Record<ValueKind, string> = { text: "text", number: "number", boolean: "true / false", null: "null", object: "object", list: "list" };

export function kindOf(value: unknown): ValueKind {
  if (typeof value === "string") return "text";
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "boolean";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object" && value !== null) return "object";
  return "null";
}

/** The value a control switched to `kind` starts with, keeping what carries over (text to number...). */
export function convert(value: unknown, kind: ValueKind): unknown {
  if (kindOf(value) === kind) return value;
  switch (kind) {
    case "text":
      return value === null || value === undefined || typeof value === "object" ? "" : String(value);
    case "number": {
      const number = typeof value === "string" ? Number(value) : NaN;
      return Number.isFinite(number) && String(value).trim() !== "" ? number : 0;
    }
    case "boolean":
      return value === "true";
    case "null":
      return null;
    case "object":
      return {};
    case "list":
      return [];
  }
}

/** `key1`, `key2`... the first not in `object`. */
export function freshKey(object: Record<string, unknown>): string {
  for (let n = 1; ; n++) if (!(`key${n}` in object)) return `key${n}`;
}

/** `object` with the entry `from` renamed to `to`, in its place; unchanged when `to` is taken by another entry. */
export function renameKey(object: Record<string, unknown>, from: string, to: string): Record<string, unknown> {
  if (from === to || to in object) return object;
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key === from ? to : key, value]));
}
