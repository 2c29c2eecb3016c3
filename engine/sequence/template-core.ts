// Templates `{{ … }}` in step params, `cache_key` and a templated `for_each.collection`
// (wire-format B.1). A small hand-written scanner: no eval, no Function, no regular expression that
// can backtrack, and every loop is bounded by the limits below, so a hostile template costs linear
// time and bounded memory.
//
// Runtime-neutral: the byte work of three filters (base64, base64_decode, hash) comes from a
// ByteCodec, Node's in template.ts (the engine) and the browser's in template-check.ts (the
// editor), so both run this one resolver.
import { AppError } from "../errors.ts";
import {
  charCount, isTemplateRoot, jsonText, lengthOf, resolveTemplatePath, toNumber, utf8Length, finiteOrNull, type Scope,
} from "./paths.ts";

export type { Scope } from "./paths.ts";

/** Byte operations the filters need; given by the runtime so this module imports neither Node nor the DOM. */
export interface ByteCodec {
  /** Standard alphabet with padding. */
  base64(bytes: Uint8Array): string;
  /** `body` is already checked: standard alphabet, padding removed. */
  fromBase64(body: string): Uint8Array;
  /** Lowercase hex SHA-256. */
  sha256Hex(bytes: Uint8Array): string;
}

export const TEMPLATE_LIMITS = {
  /** Longest string with a `{{` that is resolved (characters). Plain strings are not limited here. */
  templateLength: 1024 * 1024,
  /** `{{ … }}` pieces in one string. */
  pieces: 10_000,
  /** `|`-separated segments (fallbacks plus filters) in one piece. */
  segments: 32,
  /** Any single filter result, and `json(path)` (B.1: 4 MiB, counted in UTF-8 bytes). */
  filterResultBytes: 4 * 1024 * 1024,
  /**
   * Resolved content one call may produce (characters of inserted text plus serialized size of
   * copied values): `{{context.data}}` repeated in thousands of params must not multiply memory.
   */
  resolvedChars: 16 * 1024 * 1024,
  /** Nesting of the params value itself; create-time validation keeps real sequences far below. */
  depth: 512,
} as const;

/**
 * Resolves every string inside `value` (object values and array elements, recursively; keys are
 * not templated; numbers, booleans and null pass through). Returns a new value: resolved objects
 * are copies, so a handler that mutates its params cannot reach the instance context.
 * Throws `AppError("invalid_argument", "template error: …")` with the failing param's path.
 */
export function resolveTemplatesWith(codec: ByteCodec, value: unknown, scope: Scope): unknown {
  return new Resolution(scope, codec).value(value, [], 0);
}

/** One string: the whole-string form keeps the JSON type, anything else yields a string. */
export function resolveTemplateStringWith(codec: ByteCodec, template: string, scope: Scope): unknown {
  return new Resolution(scope, codec).value(template, [], 0);
}

/** The `{{ … }}` expressions of a template, in order, as the resolver splits them. */
export function templateExpressions(template: string): string[] {
  return splitPieces(template).flatMap((piece) => ("expression" in piece ? [piece.expression] : []));
}

function templateError(message: string): AppError {
  return new AppError("invalid_argument", `template error: ${message}`);
}

type Piece = { text: string } | { expression: string };

/**
 * Splits a string into text and `{{ … }}` pieces in one left-to-right pass. A `}}` inside a
 * quoted filter argument (`replace('}}', '')`) does not close the piece. An unclosed `{{` (no
 * `}}` before the end, or an unterminated quote) leaves the rest of the string literal.
 */
function splitPieces(template: string): Piece[] {
  const pieces: Piece[] = [];
  let placeholders = 0;
  let position = 0;
  while (position < template.length) {
    const open = template.indexOf("{{", position);
    if (open === -1) break;
    const close = closingBraces(template, open + 2);
    if (close === -1) break;
    if (++placeholders > TEMPLATE_LIMITS.pieces) {
      throw templateError(`more than ${TEMPLATE_LIMITS.pieces} {{ }} placeholders in one string`);
    }
    if (open > position) pieces.push({ text: template.slice(position, open) });
    pieces.push({ expression: template.slice(open + 2, close) });
    position = close + 2;
  }
  if (position < template.length) pieces.push({ text: template.slice(position) });
  return pieces;
}

/** Index of the `}}` closing a piece that starts at `from`, skipping quoted text; -1 if none. */
function closingBraces(template: string, from: number): number {
  let quote = "";
  for (let index = from; index < template.length; index++) {
    const char = template[index];
    if (quote) {
      if (char === quote) quote = "";
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === "}" && template[index + 1] === "}") {
      return index;
    }
  }
  return -1;
}

/**
 * Splits on `|` outside quotes and parentheses. `||` is not special: B.1 has no `or` operator, so
 * `a || b` is `a`, an empty (literal) segment, and `b`.
 */
function splitSegments(expression: string): string[] {
  const segments: string[] = [];
  let quote = "";
  let depth = 0;
  let start = 0;
  for (let index = 0; index < expression.length; index++) {
    const char = expression[index];
    if (quote) {
      if (char === quote) quote = "";
    } else if (char === "'" || char === '"') quote = char;
    else if (char === "(") depth++;
    else if (char === ")") depth = Math.max(0, depth - 1);
    else if (char === "|" && depth === 0) {
      segments.push(expression.slice(start, index).trim());
      start = index + 1;
      if (segments.length >= TEMPLATE_LIMITS.segments) {
        throw templateError(`more than ${TEMPLATE_LIMITS.segments} | segments in \`{{${expression}}}\``);
      }
    }
  }
  segments.push(expression.slice(start).trim());
  return segments;
}

/** Splits filter arguments on commas outside quotes; `''` is no arguments. */
function splitArguments(text: string): string[] {
  if (text.trim() === "") return [];
  const parts: string[] = [];
  let quote = "";
  let start = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quote) {
      if (char === quote) quote = "";
    } else if (char === "'" || char === '"') quote = char;
    else if (char === ",") {
      parts.push(text.slice(start, index).trim());
      start = index + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

function isQuoted(text: string): boolean {
  return text.length >= 2 && (text[0] === "'" || text[0] === '"') && text[text.length - 1] === text[0];
}

const NUMBER_LITERAL = /^[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** A literal: `'quoted'`/`"quoted"`, a number, `true`/`false`/`null`, else the bare word itself. */
function literal(text: string): unknown {
  if (isQuoted(text)) return text.slice(1, -1);
  if (text.length <= 400 && NUMBER_LITERAL.test(text)) {
    const number = Number(text);
    if (Number.isFinite(number)) return number;
  }
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "null") return null;
  return text;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `name(args)` → name and the raw text between the parentheses; undefined for anything else. */
function callForm(segment: string): { name: string; inner: string } | undefined {
  const open = segment.indexOf("(");
  if (open <= 0 || !segment.endsWith(")")) return undefined;
  const name = segment.slice(0, open).trim();
  return IDENTIFIER.test(name) ? { name, inner: segment.slice(open + 1, -1) } : undefined;
}

/** B.1's filters and path functions, by form: `x | upper`, `x | replace(a, b)`, `len(path)`. */
export const BARE_FILTERS: ReadonlySet<string> = new Set(["upper", "lower", "trim", "abs", "url_encode", "base64", "base64_decode"]);
export const CALL_FILTERS: ReadonlySet<string> = new Set(["replace", "default", "truncate", "join", "split", "hash", "round"]);
export const PATH_FUNCTIONS: ReadonlySet<string> = new Set(["json", "len"]);

type Segment =
  | { kind: "path"; path: string }
  | { kind: "function"; name: string; path: string }
  | { kind: "literal"; value: unknown }
  | { kind: "filter"; name: string; args: string[] };

function classify(segment: string): Segment {
  if (isQuoted(segment)) return { kind: "literal", value: literal(segment) };
  if (BARE_FILTERS.has(segment)) return { kind: "filter", name: segment, args: [] };
  const call = callForm(segment);
  if (call) {
    if (PATH_FUNCTIONS.has(call.name)) return { kind: "function", name: call.name, path: call.inner.trim() };
    if (BARE_FILTERS.has(call.name) || CALL_FILTERS.has(call.name)) {
      return { kind: "filter", name: call.name, args: splitArguments(call.inner) };
    }
    // Orch8 would take `foo(x)` as the literal text; a misspelt filter is far likelier.
    throw templateError(`unknown filter or function \`${call.name}\``);
  }
  if (isTemplateRoot(segment)) return { kind: "path", path: segment };
  return { kind: "literal", value: literal(segment) };
}

/** One call of `resolveTemplates`: the scope plus the budget shared by everything it resolves. */
class Resolution {
  private spent = 0;
  /** Serialized form of objects already copied or inserted, so repeats cost no second stringify. */
  private readonly serialized = new WeakMap<object, string>();

  constructor(
    private readonly scope: Scope,
    private readonly codec: ByteCodec,
  ) {}

  value(value: unknown, path: (string | number)[], depth: number): unknown {
    if (depth > TEMPLATE_LIMITS.depth) throw withPath(templateError(`params nested deeper than ${TEMPLATE_LIMITS.depth} levels`), path);
    if (typeof value === "string") {
      try {
        return this.string(value);
      } catch (error) {
        throw withPath(error, path);
      }
    }
    if (Array.isArray(value)) return value.map((item, index) => this.value(item, [...path, index], depth + 1));
    if (typeof value === "object" && value !== null) {
      // fromEntries defines own properties, so a `__proto__` key stays a key and never becomes
      // the prototype of the copy.
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.value(item, [...path, key], depth + 1)]));
    }
    return value;
  }

  private string(template: string): unknown {
    if (!template.includes("{{")) return template;
    if (template.length > TEMPLATE_LIMITS.templateLength) {
      throw templateError(`template longer than ${TEMPLATE_LIMITS.templateLength} characters`);
    }
    const pieces = splitPieces(template);
    const [first] = pieces;
    if (pieces.length === 1 && first && "expression" in first) return this.copy(this.expression(first.expression));
    let out = "";
    for (const piece of pieces) {
      if ("text" in piece) {
        out += piece.text;
        continue;
      }
      const inserted = this.inline(this.expression(piece.expression));
      this.spend(inserted.length);
      out += inserted;
    }
    return out;
  }

  /** `{{ a | b | 'lit' | filter … }}`: fallbacks first, then filters; B.1's evaluation order. */
  private expression(raw: string): unknown {
    const expression = raw.trim();
    if (expression === "") throw templateError("empty {{ }}");
    const segments = splitSegments(expression).map(classify);
    const [head] = segments;
    if (!head || (head.kind !== "path" && head.kind !== "function")) {
      const root = (expression.split("|", 1)[0] ?? "").trim().split(".", 1)[0];
      throw templateError(`unknown template root \`${root}\` in \`{{${raw}}}\``);
    }
    let index = 0;
    let value: unknown = null;
    // Fallbacks: paths are tried left to right until one is non-null; a literal ends the chain.
    // Alternatives after the one that settled it are not evaluated.
    let settled = false;
    for (; index < segments.length; index++) {
      const segment = segments[index] as Segment;
      if (segment.kind === "filter") break;
      if (settled) continue;
      if (segment.kind === "literal") {
        value = segment.value;
        settled = true;
      } else {
        value = this.source(segment);
        settled = value !== null;
      }
    }
    for (; index < segments.length; index++) {
      const segment = segments[index] as Segment;
      if (segment.kind !== "filter") {
        throw templateError(`unknown filter \`${describe(segment)}\` in \`{{${raw}}}\``);
      }
      value = this.filter(segment.name, segment.args, value);
      checkFilterResult(segment.name, value);
    }
    return value;
  }

  private source(segment: Extract<Segment, { kind: "path" | "function" }>): unknown {
    if (segment.kind === "path") return this.path(segment.path);
    if (!isTemplateRoot(segment.path)) throw templateError(`unknown template root \`${segment.path}\` in \`${segment.name}(…)\``);
    const value = this.path(segment.path);
    if (segment.name === "len") return lengthOf(value);
    const text = jsonText(value);
    if (text === undefined) throw templateError(`json(${segment.path}) cannot be serialized`);
    checkFilterResult("json", text);
    return text;
  }

  private path(path: string): unknown {
    const result = resolveTemplatePath(path, this.scope);
    if ("error" in result) throw templateError(result.error);
    return result.value;
  }

  /** A filter argument that may be a path (`replace('x', data.y)`, `default(data.z)`) or a literal. */
  private argument(raw: string): unknown {
    if (!isQuoted(raw) && isTemplateRoot(raw)) return this.path(raw);
    return literal(raw);
  }

  private filter(name: string, args: string[], value: unknown): unknown {
    const arity = (min: number, max = min) => {
      if (args.length < min || args.length > max) {
        const expected = min === max ? `${min}` : `${min} to ${max}`;
        throw templateError(`filter \`${name}\` takes ${expected} argument${max === 1 ? "" : "s"}, got ${args.length}`);
      }
    };
    switch (name) {
      case "upper":
        arity(0);
        return filterText(value).toUpperCase();
      case "lower":
        arity(0);
        return filterText(value).toLowerCase();
      case "trim":
        arity(0);
        return filterText(value).trim();
      case "abs": {
        arity(0);
        const number = toNumber(value);
        return number === undefined ? null : Math.abs(number);
      }
      case "url_encode":
        arity(0);
        return urlEncode(filterText(value));
      case "base64":
        arity(0);
        return this.codec.base64(new TextEncoder().encode(filterText(value)));
      case "base64_decode": {
        arity(0);
        const bytes = base64Decode(filterText(value), this.codec);
        if (!bytes) throw templateError("base64_decode: input is not valid base64");
        return new TextDecoder().decode(bytes);
      }
      case "replace": {
        arity(2);
        const find = textArgument(literal(args[0] as string));
        if (find === "") throw templateError("replace: the text to find must not be empty");
        return boundedReplace(filterText(value), find, insertText(this.argument(args[1] as string)));
      }
      case "default":
        arity(1);
        return value === null || value === "" ? this.argument(args[0] as string) : value;
      case "truncate": {
        arity(1, 2);
        const length = literal(args[0] as string);
        if (typeof length !== "number" || !Number.isInteger(length) || length < 0) {
          throw templateError("truncate: the length must be a non-negative integer");
        }
        return truncate(filterText(value), length, args[1] === undefined ? "" : textArgument(literal(args[1])));
      }
      case "join":
        arity(1);
        return boundedJoin(value, textArgument(literal(args[0] as string)));
      case "split":
        arity(1);
        return boundedSplit(filterText(value), textArgument(literal(args[0] as string)));
      case "hash": {
        arity(1);
        const algorithm = textArgument(literal(args[0] as string));
        if (algorithm.toLowerCase() !== "sha256") throw templateError(`hash: unsupported algorithm \`${algorithm}\` (only sha256)`);
        return this.codec.sha256Hex(new TextEncoder().encode(filterText(value)));
      }
      case "round": {
        arity(1);
        const digits = literal(args[0] as string);
        if (typeof digits !== "number" || !Number.isInteger(digits) || digits < 0 || digits > 15) {
          throw templateError("round: the number of decimals must be an integer from 0 to 15");
        }
        const number = toNumber(value);
        return number === undefined ? null : roundHalfAwayFromZero(number, digits);
      }
      default:
        throw templateError(`unknown filter \`${name}\``);
    }
  }

  /** The whole-string result, as a copy so the caller cannot mutate the scope through it. */
  private copy(value: unknown): unknown {
    if (typeof value !== "object" || value === null) return value;
    const text = this.serialize(value);
    this.spend(text.length);
    return JSON.parse(text);
  }

  /** Inline form: strings raw, everything else compact JSON, missing as the text `null`. */
  private inline(value: unknown): string {
    if (typeof value === "string") return value;
    if (typeof value === "object" && value !== null) return this.serialize(value);
    return jsonText(value) ?? "null";
  }

  private serialize(value: object): string {
    let text = this.serialized.get(value);
    if (text === undefined) {
      text = jsonText(value);
      if (text === undefined) throw templateError("value cannot be serialized as JSON");
      this.serialized.set(value, text);
    }
    return text;
  }

  private spend(chars: number) {
    this.spent += chars;
    if (this.spent > TEMPLATE_LIMITS.resolvedChars) {
      throw templateError(`resolved templates exceed ${TEMPLATE_LIMITS.resolvedChars} characters`);
    }
  }
}

function withPath(error: unknown, path: (string | number)[]): unknown {
  if (!(error instanceof AppError) || path.length === 0 || error.path) return error;
  const at = path.map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? key : `.${key}`)).join("");
  return new AppError(error.code, error.message.replace(/^template error: /, `template error at ${at}: `), path);
}

function describe(segment: Segment): string {
  if (segment.kind === "path") return segment.path;
  if (segment.kind === "function") return `${segment.name}(${segment.path})`;
  if (segment.kind === "filter") return segment.name;
  return String(segment.value);
}

function checkFilterResult(name: string, value: unknown) {
  const limit = TEMPLATE_LIMITS.filterResultBytes;
  let bytes = 0;
  if (typeof value === "string") bytes = utf8Length(value, limit);
  else if (typeof value === "object" && value !== null) bytes = utf8Length(jsonText(value) ?? "", limit);
  if (bytes > limit) throw templateError(`result of \`${name}\` exceeds ${limit} bytes`);
}

/** Text filters read null as the empty string, other non-strings as their compact JSON. */
function filterText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return jsonText(value) ?? "";
}

/** A filter argument that must be text (separators, suffixes, the text to find). */
function textArgument(value: unknown): string {
  return typeof value === "string" ? value : (jsonText(value) ?? "");
}

/** A replacement taken from a path: strings raw, missing as nothing, others as compact JSON. */
function insertText(value: unknown): string {
  if (value === null || value === undefined) return "";
  return textArgument(value);
}

/** Every occurrence replaced; the result size is known before anything is built. */
function boundedReplace(text: string, find: string, replacement: string): string {
  let matches = 0;
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + find.length)) matches++;
  const length = text.length + matches * (replacement.length - find.length);
  // UTF-16 length is at most the UTF-8 length, so this rejects early without under-counting.
  if (length > TEMPLATE_LIMITS.filterResultBytes) throw templateError(`result of \`replace\` exceeds ${TEMPLATE_LIMITS.filterResultBytes} bytes`);
  return text.split(find).join(replacement);
}

/** Array elements joined: strings raw, others as compact JSON (null as `null`); a non-array is "". */
function boundedJoin(value: unknown, separator: string): string {
  if (!Array.isArray(value)) return "";
  const parts: string[] = [];
  let length = 0;
  for (const item of value) {
    const part = typeof item === "string" ? item : (jsonText(item) ?? "null");
    length += part.length + separator.length;
    if (length > TEMPLATE_LIMITS.filterResultBytes + separator.length) {
      throw templateError(`result of \`join\` exceeds ${TEMPLATE_LIMITS.filterResultBytes} bytes`);
    }
    parts.push(part);
  }
  return parts.join(separator);
}

/** `split('')` splits into characters, as in most languages' string split. */
function boundedSplit(text: string, separator: string): string[] {
  // Each part costs at least two quotes and a comma in the result's JSON.
  let parts = 1;
  if (separator === "") parts = charCount(text);
  else for (let at = text.indexOf(separator); at !== -1; at = text.indexOf(separator, at + separator.length)) parts++;
  if (text.length + 3 * parts > TEMPLATE_LIMITS.filterResultBytes) {
    throw templateError(`result of \`split\` exceeds ${TEMPLATE_LIMITS.filterResultBytes} bytes`);
  }
  return separator === "" ? Array.from(text) : text.split(separator);
}

/** The first `length` characters, plus `suffix` when something was cut. */
function truncate(text: string, length: number, suffix: string): string {
  if (charCount(text) <= length) return text;
  let head = "";
  let count = 0;
  for (const char of text) {
    if (count++ === length) break;
    head += char;
  }
  return head + suffix;
}

/** Half away from zero (as Rust's f64::round); JavaScript's Math.round rounds -2.5 to -2. */
function roundHalfAwayFromZero(number: number, digits: number): number | null {
  const factor = 10 ** digits;
  return finiteOrNull((Math.sign(number) * Math.round(Math.abs(number) * factor)) / factor);
}

/** RFC 3986 percent-encoding of the UTF-8 bytes: only `A-Z a-z 0-9 - _ . ~` stay as they are. */
function urlEncode(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let out = "";
  for (const byte of bytes) {
    const unreserved =
      (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) ||
      byte === 0x2d || byte === 0x5f || byte === 0x2e || byte === 0x7e;
    out += unreserved ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

const BASE64_BODY = /^[A-Za-z0-9+/]*$/;

/**
 * Standard alphabet; padding optional; anything else (whitespace, URL-safe letters) is invalid.
 * Checked here because a decoder (Buffer's) may skip characters it does not know and accepts `-` and `_`.
 */
function base64Decode(text: string, codec: ByteCodec): Uint8Array | undefined {
  const body = text.endsWith("==") ? text.slice(0, -2) : text.endsWith("=") ? text.slice(0, -1) : text;
  if (body.length % 4 === 1 || (body.length !== text.length && text.length % 4 !== 0)) return undefined;
  if (!BASE64_BODY.test(body)) return undefined;
  return codec.fromBase64(body);
}
