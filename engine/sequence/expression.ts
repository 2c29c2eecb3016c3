// Expressions (wire-format B.2): router `condition`, loop `condition`/`break_on`, step `when`,
// `retry.retry_if`. A tokenizer and a recursive-descent parser build an AST (cached by text);
// the evaluator walks it. No eval, no Function. Work is bounded: the text length, the nesting
// depth (so no input can overflow the stack) and the arrays functions will scan are capped.
// Evaluation never throws: odd operands, unknown functions and missing paths give null.
// No Node-only imports: the editor runs this in the browser.
import { AppError } from "../errors.ts";
import {
  finiteOrNull, isJsonObject, jsonText, lengthOf, resolveExpressionPath, toNumber, utf8Length, type Scope,
} from "./paths.ts";

export type { Scope } from "./paths.ts";

export const EXPRESSION_LIMITS = {
  /** Characters of expression text. */
  length: 10_000,
  /** Nesting of parentheses, calls, array literals, ternary branches and unary operators. */
  depth: 64,
  /** Elements (or keys) an array function will scan; above it the function gives null. */
  arrayElements: 100_000,
  /** Longest string `+` or `json()` will build (characters); above it the result is null. */
  stringLength: 4 * 1024 * 1024,
  /** Parsed expressions kept, least recently used dropped first. */
  cacheEntries: 1000,
} as const;

export type CompareOperator = "==" | "!=" | ">" | ">=" | "<" | "<=" | "in";
export type ArithmeticOperator = "+" | "-" | "*" | "/";

/** Chains of one precedence level are n-ary nodes, so `a || b || …` adds no depth. */
export type Ast =
  | { readonly kind: "literal"; readonly value: string | number | boolean | null }
  | { readonly kind: "path"; readonly path: string }
  | { readonly kind: "array"; readonly items: readonly Ast[] }
  | { readonly kind: "call"; readonly name: string; readonly args: readonly Ast[] }
  | { readonly kind: "not"; readonly operand: Ast }
  | { readonly kind: "negate"; readonly operand: Ast }
  | { readonly kind: "logical"; readonly operator: "&&" | "||"; readonly operands: readonly Ast[] }
  | { readonly kind: "compare"; readonly operator: CompareOperator; readonly left: Ast; readonly right: Ast }
  | { readonly kind: "arithmetic"; readonly first: Ast; readonly rest: readonly { readonly operator: ArithmeticOperator; readonly operand: Ast }[] }
  | { readonly kind: "conditional"; readonly test: Ast; readonly then: Ast; readonly otherwise: Ast };

/** Where `now()`, `random()` and `uuid()` come from; tests pass fixed ones. */
export interface ExpressionSources {
  now(): Date;
  /** In [0, 1). */
  random(): number;
  uuid(): string;
}

export const systemSources: ExpressionSources = {
  now: () => new Date(),
  random: () => Math.random(),
  uuid: randomUuid,
};

export interface EvaluateOptions {
  /** Router conditions and `when` see `outputs.*`; loop `condition` and `break_on` do not (B.2). */
  outputsVisible: boolean;
  sources?: ExpressionSources;
}

// ---- parsing ----

type Token =
  | { type: "number"; value: number; at: number }
  | { type: "string"; value: string; at: number }
  | { type: "word"; value: string; at: number }
  | { type: "operator"; value: string; at: number }
  | { type: "end"; at: number };

class SyntaxProblem {
  constructor(readonly message: string, readonly at: number) {}
}

const TWO_CHAR_OPERATORS: ReadonlySet<string> = new Set(["==", "!=", ">=", "<=", "&&", "||"]);
const ONE_CHAR_OPERATORS: ReadonlySet<string> = new Set([">", "<", "!", "+", "-", "*", "/", "(", ")", "[", "]", ",", "?", ":"]);

const isDigit = (code: number) => code >= 48 && code <= 57;
const isWordStart = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
// `-` is not a word character: `a-b` is a subtraction, so hyphenated names are not addressable.
const isWordPart = (code: number) => isWordStart(code) || isDigit(code) || code === 46;

function tokenize(text: string, start: number, end: number): Token[] {
  const tokens: Token[] = [];
  let index = start;
  while (index < end) {
    const char = text[index] as string;
    const code = text.charCodeAt(index);
    if (char === " " || char === "\t" || char === "\n" || char === "\r") {
      index++;
    } else if (char === '"' || char === "'") {
      // No escape sequences (B.2): the string ends at the next matching quote.
      const close = text.indexOf(char, index + 1);
      if (close === -1 || close >= end) throw new SyntaxProblem("unterminated string", index);
      tokens.push({ type: "string", value: text.slice(index + 1, close), at: index });
      index = close + 1;
    } else if (isDigit(code)) {
      const from = index;
      while (index < end && isDigit(text.charCodeAt(index))) index++;
      if (index < end && text[index] === ".") {
        index++;
        while (index < end && isDigit(text.charCodeAt(index))) index++;
      }
      const value = Number(text.slice(from, index));
      if (!Number.isFinite(value)) throw new SyntaxProblem("number out of range", from);
      tokens.push({ type: "number", value, at: from });
    } else if (isWordStart(code)) {
      const from = index;
      while (index < end && isWordPart(text.charCodeAt(index))) index++;
      tokens.push({ type: "word", value: text.slice(from, index), at: from });
    } else if (index + 1 < end && TWO_CHAR_OPERATORS.has(text.slice(index, index + 2))) {
      tokens.push({ type: "operator", value: text.slice(index, index + 2), at: index });
      index += 2;
    } else if (ONE_CHAR_OPERATORS.has(char)) {
      tokens.push({ type: "operator", value: char, at: index });
      index++;
    } else if (char === "{" || char === "}") {
      // B.2: braces inside an expression break it (null in lenient mode, an error for `when`).
      throw new SyntaxProblem("`{` and `}` are not allowed inside an expression", index);
    } else {
      const shown = char === "=" ? "`=` (comparison is `==`)" : `character \`${String.fromCodePoint(text.codePointAt(index) ?? code)}\``;
      throw new SyntaxProblem(`unexpected ${shown}`, index);
    }
  }
  tokens.push({ type: "end", at: end });
  return tokens;
}

const COMPARE_OPERATORS: ReadonlySet<string> = new Set(["==", "!=", ">", ">=", "<", "<="]);

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): Ast {
    const ast = this.ternary();
    const next = this.peek();
    if (next.type !== "end") throw this.unexpected(next);
    return ast;
  }

  private peek(): Token {
    return this.tokens[this.index] as Token;
  }

  private isOperator(value: string): boolean {
    const token = this.peek();
    return token.type === "operator" && token.value === value;
  }

  private expect(value: string, message: string) {
    if (!this.isOperator(value)) throw new SyntaxProblem(`${message}, found ${describeToken(this.peek())}`, this.peek().at);
    this.index++;
  }

  private unexpected(token: Token): SyntaxProblem {
    return new SyntaxProblem(`unexpected ${describeToken(token)}`, token.at);
  }

  /** Every nesting construct passes here, so hostile nesting stops long before the stack does. */
  private nested<T>(parse: () => T): T {
    if (++this.depth > EXPRESSION_LIMITS.depth) {
      throw new SyntaxProblem(`expression nests deeper than ${EXPRESSION_LIMITS.depth} levels`, this.peek().at);
    }
    const result = parse();
    this.depth--;
    return result;
  }

  /** `c ? a : b`, lowest precedence; the `:` is mandatory. Branches may nest (right-associative). */
  private ternary(): Ast {
    return this.nested(() => {
      const test = this.or();
      if (!this.isOperator("?")) return test;
      this.index++;
      const then = this.ternary();
      this.expect(":", "expected `:` after the `?` branch");
      const otherwise = this.ternary();
      return { kind: "conditional", test, then, otherwise };
    });
  }

  private or(): Ast {
    return this.logical("||", () => this.and());
  }

  private and(): Ast {
    return this.logical("&&", () => this.comparison());
  }

  private logical(operator: "&&" | "||", operand: () => Ast): Ast {
    const operands = [operand()];
    while (this.isOperator(operator)) {
      this.index++;
      operands.push(operand());
    }
    return operands.length === 1 ? (operands[0] as Ast) : { kind: "logical", operator, operands };
  }

  /** At most one comparison (B.2): `a == b == c` is a syntax error, not a chain. */
  private comparison(): Ast {
    const left = this.additive();
    const operator = comparisonOperator(this.peek());
    if (!operator) return left;
    this.index++;
    const right = this.additive();
    const next = this.peek();
    if (comparisonOperator(next)) throw new SyntaxProblem("only one comparison is allowed here (combine with && or ||)", next.at);
    return { kind: "compare", operator, left, right };
  }

  private additive(): Ast {
    return this.arithmetic(["+", "-"], () => this.multiplicative());
  }

  private multiplicative(): Ast {
    return this.arithmetic(["*", "/"], () => this.unary());
  }

  private arithmetic(operators: readonly ArithmeticOperator[], operand: () => Ast): Ast {
    const first = operand();
    const rest: { operator: ArithmeticOperator; operand: Ast }[] = [];
    for (let token = this.peek(); token.type === "operator" && (operators as readonly string[]).includes(token.value); token = this.peek()) {
      this.index++;
      rest.push({ operator: token.value as ArithmeticOperator, operand: operand() });
    }
    return rest.length === 0 ? first : { kind: "arithmetic", first, rest };
  }

  private unary(): Ast {
    if (this.isOperator("!") || this.isOperator("-")) {
      const kind = this.isOperator("!") ? "not" : "negate";
      this.index++;
      return this.nested(() => ({ kind, operand: this.unary() }));
    }
    return this.primary();
  }

  private primary(): Ast {
    const token = this.peek();
    switch (token.type) {
      case "number":
      case "string":
        this.index++;
        return { kind: "literal", value: token.value };
      case "word": {
        if (token.value === "in") throw this.unexpected(token);
        this.index++;
        if (token.value === "true") return { kind: "literal", value: true };
        if (token.value === "false") return { kind: "literal", value: false };
        if (token.value === "null") return { kind: "literal", value: null };
        if (!this.isOperator("(")) return { kind: "path", path: token.value };
        this.index++;
        return { kind: "call", name: token.value, args: this.list(")") };
      }
      case "operator":
        if (token.value === "(") {
          this.index++;
          const inner = this.ternary();
          this.expect(")", "expected `)`");
          return inner;
        }
        if (token.value === "[") {
          this.index++;
          return { kind: "array", items: this.list("]") };
        }
        throw this.unexpected(token);
      case "end":
        throw this.unexpected(token);
    }
  }

  /** Comma-separated expressions up to `close`; a trailing comma is accepted (as Orch8 does). */
  private list(close: ")" | "]"): Ast[] {
    const items: Ast[] = [];
    while (!this.isOperator(close)) {
      items.push(this.ternary());
      if (this.isOperator(",")) this.index++;
      else if (!this.isOperator(close)) throw new SyntaxProblem(`expected \`,\` or \`${close}\`, found ${describeToken(this.peek())}`, this.peek().at);
    }
    this.index++;
    return items;
  }
}

function comparisonOperator(token: Token): CompareOperator | undefined {
  if (token.type === "operator" && COMPARE_OPERATORS.has(token.value)) return token.value as CompareOperator;
  if (token.type === "word" && token.value === "in") return "in";
  return undefined;
}

function describeToken(token: Token): string {
  switch (token.type) {
    case "end":
      return "end of expression";
    case "string":
      return `string ${JSON.stringify(token.value.length > 40 ? `${token.value.slice(0, 40)}…` : token.value)}`;
    default:
      return `\`${String(token.value)}\``;
  }
}

/** Parsed ASTs (or the syntax error) by exact text; conditions are re-evaluated on every tick. */
const cache = new Map<string, Ast | ParseFailure>();

class ParseFailure {
  constructor(readonly message: string) {}
}

/**
 * Parses expression text into an AST; throws `AppError("invalid_argument", "expression error: …")`
 * on a syntax error. A wrapper `{{ … }}` around the entire text is stripped (B.2). Empty text
 * parses to `null` (falsy), as in Orch8.
 */
export function parseExpression(text: string): Ast {
  const hit = cache.get(text);
  if (hit !== undefined) {
    // Refresh recency: Map iteration order is insertion order, so the first key is the oldest.
    cache.delete(text);
    cache.set(text, hit);
    if (hit instanceof ParseFailure) throw new AppError("invalid_argument", hit.message);
    return hit;
  }
  let result: Ast | ParseFailure;
  try {
    result = parseUncached(text);
  } catch (error) {
    if (!(error instanceof SyntaxProblem)) throw error;
    result = new ParseFailure(`expression error: ${error.message} at position ${error.at} in \`${excerpt(text)}\``);
  }
  if (text.length <= EXPRESSION_LIMITS.length) {
    if (cache.size >= EXPRESSION_LIMITS.cacheEntries) cache.delete(cache.keys().next().value as string);
    cache.set(text, result);
  }
  if (result instanceof ParseFailure) throw new AppError("invalid_argument", result.message);
  return result;
}

function parseUncached(text: string): Ast {
  if (text.length > EXPRESSION_LIMITS.length) {
    throw new SyntaxProblem(`expression longer than ${EXPRESSION_LIMITS.length} characters`, EXPRESSION_LIMITS.length);
  }
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text[start] as string)) start++;
  while (end > start && isSpace(text[end - 1] as string)) end--;
  if (end - start >= 4 && text.startsWith("{{", start) && text.endsWith("}}", end)) {
    start += 2;
    end -= 2;
  }
  const tokens = tokenize(text, start, end);
  if (tokens.length === 1) return { kind: "literal", value: null };
  return new Parser(tokens).parse();
}

const isSpace = (char: string) => char === " " || char === "\t" || char === "\n" || char === "\r";

function excerpt(text: string): string {
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

// ---- evaluation ----

/** B.2 truthiness: null, false, 0, "" and [] are falsy; everything else, `{}` included, is truthy. */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

/**
 * Evaluates a parsed expression. The result may share structure with `scope`: read it, do not
 * mutate it.
 */
export function evaluate(ast: Ast, scope: Scope, options: EvaluateOptions): unknown {
  return new Evaluator(scope, options.outputsVisible, options.sources ?? systemSources).run(ast);
}

/**
 * A condition's truth (B.2). `strict` (step `when`) throws the AppError of a syntax error, which
 * fails the step; `lenient` (router, loop `condition`, `break_on`) reads a syntax error as false.
 */
export function evaluateCondition(
  text: string,
  scope: Scope,
  mode: "strict" | "lenient",
  outputsVisible: boolean,
  sources: ExpressionSources = systemSources,
): boolean {
  let ast: Ast;
  try {
    ast = parseExpression(text);
  } catch (error) {
    if (mode === "lenient" && error instanceof AppError) return false;
    throw error;
  }
  return isTruthy(evaluate(ast, scope, { outputsVisible, sources }));
}

class Evaluator {
  constructor(
    private readonly scope: Scope,
    private readonly outputsVisible: boolean,
    readonly sources: ExpressionSources,
  ) {}

  run(ast: Ast): unknown {
    switch (ast.kind) {
      case "literal":
        return ast.value;
      case "path":
        return resolveExpressionPath(ast.path, this.scope, this.outputsVisible);
      case "array":
        return ast.items.map((item) => this.run(item));
      case "call": {
        const fn = FUNCTIONS.get(ast.name);
        return fn ? fn(ast.args.map((arg) => this.run(arg)), this) : null;
      }
      case "not":
        return !isTruthy(this.run(ast.operand));
      case "negate": {
        const number = toNumber(this.run(ast.operand));
        return number === undefined ? null : finiteOrNull(-number);
      }
      case "logical":
        // Short-circuits; the result is a boolean either way (B.2).
        if (ast.operator === "&&") return ast.operands.every((operand) => isTruthy(this.run(operand)));
        return ast.operands.some((operand) => isTruthy(this.run(operand)));
      case "compare":
        return compare(ast.operator, this.run(ast.left), this.run(ast.right));
      case "arithmetic": {
        let value = this.run(ast.first);
        for (const { operator, operand } of ast.rest) value = arithmetic(operator, value, this.run(operand));
        return value;
      }
      case "conditional":
        return isTruthy(this.run(ast.test)) ? this.run(ast.then) : this.run(ast.otherwise);
    }
  }
}

function compare(operator: CompareOperator, left: unknown, right: unknown): boolean {
  switch (operator) {
    case "==":
      return jsonEquals(left, right);
    case "!=":
      return !jsonEquals(left, right);
    case "in":
      return Array.isArray(right) && right.some((item) => jsonEquals(left, item));
    default: {
      const order = ordering(left, right);
      if (order === undefined) return false;
      if (operator === ">") return order > 0;
      if (operator === ">=") return order >= 0;
      if (operator === "<") return order < 0;
      return order <= 0;
    }
  }
}

/** Only number/number and string/string pairs are ordered (B.2); anything else is undefined. */
function ordering(left: unknown, right: unknown): number | undefined {
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

/**
 * B.2 arithmetic: numeric strings and booleans coerce to numbers; `+` of two strings
 * concatenates; a non-numeric operand or a division by zero is null (and stays null down a chain).
 */
function arithmetic(operator: ArithmeticOperator, left: unknown, right: unknown): unknown {
  if (operator === "+" && typeof left === "string" && typeof right === "string") {
    return left.length + right.length > EXPRESSION_LIMITS.stringLength ? null : left + right;
  }
  const a = toNumber(left);
  const b = toNumber(right);
  if (a === undefined || b === undefined) return null;
  switch (operator) {
    case "+":
      return finiteOrNull(a + b);
    case "-":
      return finiteOrNull(a - b);
    case "*":
      return finiteOrNull(a * b);
    case "/":
      return b === 0 ? null : finiteOrNull(a / b);
  }
}

// ---- functions ----
//
// B.2 names the functions but not their semantics; these follow Orch8 where it is sensible.
// Missing arguments read as null. "Number" means the arithmetic coercion above (numbers, numeric
// strings, booleans). Array functions give null for arrays over EXPRESSION_LIMITS.arrayElements.
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

type Fn = (args: unknown[], evaluator: Evaluator) => unknown;

const FUNCTIONS: ReadonlyMap<string, Fn> = new Map<string, Fn>([
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

function randomUuid(): string {
  const crypto = globalThis.crypto;
  // Browsers expose randomUUID only in secure contexts; getRandomValues is always there.
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// ---- dates ----

interface Timestamp {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** Minutes east of UTC. */
  offset: number;
  /** Seconds since the Unix epoch. */
  epochSeconds: number;
  /** 0 = Sunday, in the timestamp's own offset. */
  weekday: number;
  /** 1-based day of the year. */
  yearDay: number;
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2}))?$/;

/** RFC 3339 (fractional seconds are accepted and ignored), or a bare date as midnight UTC. */
function parseTimestamp(text: string): Timestamp | undefined {
  if (text.length > 40) return undefined;
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const zone = match[7] ?? "Z";
  const zoned = zone !== "Z" && zone !== "z";
  const zoneHours = zoned ? Number(zone.slice(1, 3)) : 0;
  const zoneMinutes = zoned ? Number(zone.slice(4, 6)) : 0;
  if (hour > 23 || minute > 59 || second > 59 || zoneHours > 23 || zoneMinutes > 59) return undefined;
  const offset = (zone[0] === "-" ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
  // setUTCFullYear, because Date.UTC maps years 0–99 to 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined; // e.g. 02-30
  const startOfYear = new Date(0);
  startOfYear.setUTCFullYear(year, 0, 1);
  const yearDay = Math.round((date.getTime() - startOfYear.getTime()) / 86_400_000) + 1;
  const weekday = date.getUTCDay();
  date.setUTCHours(hour, minute, second, 0);
  return { year, month, day, hour, minute, second, offset, epochSeconds: (date.getTime() - offset * 60_000) / 1000, weekday, yearDay };
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const pad = (number: number, width = 2, fill = "0") => String(number).padStart(width, fill);

function formatTimestamp(t: Timestamp, format: string): string | null {
  if (format.length > 1000) return null;
  const offsetText = (colon: boolean) => {
    const sign = t.offset < 0 ? "-" : "+";
    const minutes = Math.abs(t.offset);
    return `${sign}${pad(Math.floor(minutes / 60))}${colon ? ":" : ""}${pad(minutes % 60)}`;
  };
  let out = "";
  for (let index = 0; index < format.length; index++) {
    const char = format[index];
    if (char !== "%") {
      out += char;
      continue;
    }
    let directive = format[++index];
    if (directive === ":" && format[index + 1] === "z") {
      directive = ":z";
      index++;
    }
    switch (directive) {
      case "Y": out += pad(t.year, 4); break;
      case "y": out += pad(t.year % 100); break;
      case "m": out += pad(t.month); break;
      case "d": out += pad(t.day); break;
      case "e": out += pad(t.day, 2, " "); break;
      case "H": out += pad(t.hour); break;
      case "I": out += pad(t.hour % 12 === 0 ? 12 : t.hour % 12); break;
      case "p": out += t.hour < 12 ? "AM" : "PM"; break;
      case "M": out += pad(t.minute); break;
      case "S": out += pad(t.second); break;
      case "j": out += pad(t.yearDay, 3); break;
      case "a": out += (DAYS[t.weekday] as string).slice(0, 3); break;
      case "A": out += DAYS[t.weekday] as string; break;
      case "b": out += (MONTHS[t.month - 1] as string).slice(0, 3); break;
      case "B": out += MONTHS[t.month - 1] as string; break;
      case "u": out += t.weekday === 0 ? 7 : t.weekday; break;
      case "w": out += t.weekday; break;
      case "F": out += `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}`; break;
      case "T": out += `${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`; break;
      case "z": out += offsetText(false); break;
      case ":z": out += offsetText(true); break;
      case "s": out += t.epochSeconds; break;
      case "%": out += "%"; break;
      default: return null;
    }
  }
  return out;
}
