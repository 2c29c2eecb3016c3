import { describe, expect, it } from "vitest";
import { AppError } from "../errors.ts";
import {
  compareStrings, evaluate, evaluateCondition, EXPRESSION_LIMITS, isTruthy, jsonEquals, parseExpression, type ExpressionSources,
} from "./expression.ts";
import type { Scope } from "./paths.ts";

const data: Record<string, unknown> = {
  keep_going: true,
  mode: "fast",
  count: 5,
  threshold: 8,
  user: { name: "Alice", role: "admin", age: 30 },
  same_user: { age: 30, role: "admin", name: "Alice" },
  items: [10, 20, 30],
  tags: ["a", "b"],
  numeric_text: "3",
  empty: "",
  nothing: null,
  input: { email: "a@example.com" },
  "my-key": "unreachable",
  "my": 7,
};

const sources: ExpressionSources = {
  now: () => new Date("2025-05-01T12:00:00Z"),
  random: () => 0.5,
  uuid: () => "00000000-0000-4000-8000-000000000000",
};

const scope = (overrides: Partial<Scope> = {}): Scope => ({
  context: { data, config: { limit: 100 } },
  outputs: { fetch: { status: 200, body: { ok: true } } },
  instanceId: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
  runtime: { attempt: 2, dry_run: false },
  state: { counter: 41 },
  ...overrides,
});

const run = (text: string, at: Scope = scope(), outputsVisible = true) => evaluate(parseExpression(text), at, { outputsVisible, sources });
const withData = (extra: Record<string, unknown>) => scope({ context: { data: { ...data, ...extra }, config: {} } });

function rejection(action: () => unknown): AppError {
  try {
    action();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

function timed(action: () => void): number {
  const start = performance.now();
  action();
  return performance.now() - start;
}

describe("the examples of B.2", () => {
  it.each<[string, boolean]>([
    ["true", true],
    ["false", false],
    ["context.data.keep_going", true],
    ['context.data.mode == "B"', false],
    ['context.data.mode == "fast"', true],
    ['context.data.user.role == "admin"', true],
    ['mode == "fast"', true],
    ["mode == nonexistent", false],
    ['maybe == "x"', false],
    ["count * 2 > threshold", true],
  ])("%s → %s", (text, expected) => {
    expect(evaluateCondition(text, scope(), "strict", true, sources)).toBe(expected);
    expect(evaluateCondition(text, scope(), "lenient", false, sources)).toBe(expected);
  });
});

describe("literals", () => {
  it.each<[string, unknown]>([
    ['"double"', "double"],
    ["'single'", "single"],
    ["'a\\'", "a\\"], // no escape sequences: the backslash is text
    ['"it\'s"', "it's"],
    ["42", 42],
    ["3.25", 3.25],
    ["007", 7],
    ["true", true],
    ["false", false],
    ["null", null],
    ["[1, 'two', null, [3]]", [1, "two", null, [3]]],
    ["[]", []],
    ["[1, 2,]", [1, 2]],
    ["", null],
    ["   ", null],
  ])("%s → %j", (text, expected) => {
    expect(run(text)).toEqual(expected);
  });
});

describe("paths", () => {
  it.each<[string, unknown]>([
    ["context.data.count", 5],
    ["context.config.limit", 100],
    ["context.other.x", null],
    ["context", null],
    ["data.count", 5],
    ["config.limit", 100],
    ["input.email", "a@example.com"],
    ["runtime.attempt", 2],
    ["instance_id", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"],
    ["outputs.fetch.status", 200],
    ["steps.fetch.body.ok", true],
    ["outputs.never_ran.x", null],
    ["count", 5],
    ["user.name", "Alice"],
    ["items.1", 20],
    ["items.9", null],
    ["nonexistent", null],
    // `state` is not a B.2 root, so it is a bare identifier under context.data.
    ["state.counter", null],
    // `-` is always an operator: `my-key` is `my - key` = 7 - null = null.
    ["my-key", null],
    ["my - 2", 5],
  ])("%s → %j", (text, expected) => {
    expect(run(text)).toEqual(expected);
  });

  it("state under context.data is what a bare `state` reads", () => {
    expect(run("state.counter", withData({ state: { counter: 1 } }))).toBe(1);
  });

  it("bracket syntax is not supported", () => {
    expect(evaluateCondition("items[0] == 10", scope(), "lenient", true)).toBe(false);
    expect(() => parseExpression("items[0]")).toThrow(AppError);
  });
});

describe("prototype safety", () => {
  it.each([
    "constructor",
    "__proto__",
    "toString",
    "hasOwnProperty",
    "user.constructor",
    "user.__proto__",
    "mode.length",
    "items.length",
    "context.data.constructor.name",
    "outputs.constructor",
    "outputs.__proto__",
    "runtime.toString",
    "config.valueOf",
  ])("%s → null", (text) => {
    expect(run(text)).toBeNull();
  });

  it.each(["constructor(1)", "toString()", "__proto__(1)", "hasOwnProperty('x')", "valueOf()"])("%s is an unknown function → null", (text) => {
    expect(run(text)).toBeNull();
  });
});

describe("precedence and associativity", () => {
  it.each<[string, unknown]>([
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["10 - 2 - 3", 5],
    ["12 / 2 / 3", 2],
    ["-2 * 3", -6],
    ["- 2", -2],
    ["--2", 2],
    ["2 - -2", 4],
    ["true || false && false", true],
    ["(true || false) && false", false],
    ["!false && false", false],
    ["!(false && false)", true],
    ["1 + 1 == 2 && 2 > 1", true],
    ["2 * 3 in [6, 7]", true],
    ["count > 3 ? 'big' : 'small'", "big"],
    ["count > 9 ? 'big' : 'small'", "small"],
    ["count > 9 ? 'big' : count > 4 ? 'medium' : 'small'", "medium"],
    ["true ? false ? 1 : 2 : 3", 2],
    ["false || count == 5 ? 'yes' : 'no'", "yes"],
  ])("%s → %j", (text, expected) => {
    expect(run(text)).toEqual(expected);
  });

  it("a long chain of one precedence level adds no nesting depth", () => {
    const sum = Array.from({ length: 2000 }, () => "1").join("+");
    expect(run(sum)).toBe(2000);
    const ors = Array.from({ length: 500 }, (_, index) => `count == ${index + 10}`).join(" || ");
    expect(run(ors)).toBe(false);
  });
});

describe("==: numbers numerically, everything else exact JSON equality", () => {
  it.each<[string, boolean]>([
    ["5 == 5.0", true],
    ["count == 5", true],
    ['"5" == 5', false],
    ['numeric_text == 3', false],
    ['"x" == null', false],
    ["null == null", true],
    ["nonexistent == null", true],
    ["nothing == null", true],
    ["true == 1", false],
    ["0 == false", false],
    ['"" == null', false],
    ["[1, 2] == [1, 2]", true],
    ["[1, 2] == [2, 1]", false],
    ["items == [10, 20, 30]", true],
    ["user == same_user", true],
    ["user == items", false],
    ["1 != 2", true],
    ["mode != 'fast'", false],
  ])("%s → %s", (text, expected) => {
    expect(run(text)).toBe(expected);
  });

  it("compares deep data iteratively (no stack overflow)", () => {
    const nest = () => {
      let value: unknown = 1;
      for (let level = 0; level < 100_000; level++) value = [value];
      return value;
    };
    expect(jsonEquals(nest(), nest())).toBe(true);
  });
});

describe("ordering only for number/number and string/string", () => {
  it.each<[string, boolean]>([
    ["2 > 1", true],
    ["2 >= 2", true],
    ["1 < 2", true],
    ["2 <= 1", false],
    ['"b" > "a"', true],
    ['"abc" < "abd"', true],
    ['"10" < "9"', true],
    ['"2" > 1', false],
    ['"2" < 1', false],
    ["null < 1", false],
    ["nonexistent >= 0", false],
    ["true > false", false],
    ["[2] > [1]", false],
  ])("%s → %s", (text, expected) => {
    expect(run(text)).toBe(expected);
  });

  it("orders strings by code point, not by UTF-16 unit", () => {
    // U+FF5E is below U+1F600; as UTF-16 units 0xFF5E is above the surrogate 0xD83D.
    expect(run('"\uFF5E" < "😀"')).toBe(true);
    expect(compareStrings("😀", "\uFF5E")).toBeGreaterThan(0);
  });

  it("allows one comparison only", () => {
    expect(rejection(() => parseExpression("1 < 2 < 3")).message).toContain("only one comparison");
  });
});

describe("arithmetic", () => {
  it.each<[string, unknown]>([
    ["numeric_text + 2", 5],
    ['"3" * "4"', 12],
    ["true + 1", 2],
    ["false * 5", 0],
    ['"a" + "b"', "ab"],
    ['"5" + "3"', "53"],
    ['"a" + 1', null],
    ['" 3" + 1', null],
    ['"0x10" * 1', null],
    ['"1e2" * 1', 100],
    ['"" + 1', null],
    ["null + 1", null],
    ["nonexistent - 1", null],
    ["[1] + 1", null],
    ["user * 2", null],
    ["10 / 4", 2.5],
    ["10 / 0", null],
    ["10 / (3 - 3)", null],
    ["(10 / 0) + 1", null],
    ['-"3"', -3],
    ['-"x"', null],
    ["-nothing", null],
  ])("%s → %j", (text, expected) => {
    expect(run(text)).toEqual(expected);
  });

  it("a result that is not a finite number is null", () => {
    expect(run("1" + "0".repeat(308) + " * 10")).toBeNull();
  });
});

describe("truthiness", () => {
  it.each<[unknown, boolean]>([
    [null, false],
    [false, false],
    [0, false],
    ["", false],
    [[], false],
    [{}, true],
    [true, true],
    [1, true],
    [-1, true],
    [0.5, true],
    ["0", true],
    ["false", true],
    [" ", true],
    [[0], true],
    [{ a: null }, true],
  ])("%j → %s", (value, expected) => {
    expect(isTruthy(value)).toBe(expected);
    expect(evaluateCondition("value", withData({ value }), "strict", true)).toBe(expected);
  });

  it.each<[string, boolean]>([
    ["1 && 'a'", true],
    ["0 || ''", false],
    ["[] || user", true],
    ["!1", false],
    ["!''", true],
    ["!nonexistent", true],
  ])("&&, || and ! give booleans: %s → %s", (text, expected) => {
    expect(run(text)).toBe(expected);
  });
});

describe("in", () => {
  it.each<[string, boolean]>([
    ['mode in ["fast", "slow"]', true],
    ['mode in ["slow"]', false],
    ["3 in [1, 2]", false],
    ["1 in [1.0]", true],
    ['"1" in [1]', false],
    ["20 in items", true],
    ['"a" in "abc"', false],
    ["null in [null]", true],
    ["[1] in [[1], [2]]", true],
  ])("%s → %s", (text, expected) => {
    expect(run(text)).toBe(expected);
  });
});

describe("functions", () => {
  const big = Array.from({ length: EXPRESSION_LIMITS.arrayElements + 1 }, (_, index) => index);
  const at = withData({
    nums: [3, "10", 2, true, "x", null],
    mixed: [3, "b", 1, "a", true, null],
    dupes: [1, 1.0, "1", 2, 1, [1], [1], { a: 1, b: 2 }, { b: 2, a: 1 }],
    big,
    when: "2024-03-05T10:20:30+02:00",
  });

  it.each<[string, unknown]>([
    ["abs(-3)", 3],
    ["abs('-2.5')", 2.5],
    ["abs('x')", null],
    ["len(items)", 3],
    ["len(user)", 3],
    ["len('héllo')", 5],
    ["len('😀')", 1],
    ["len(nothing)", 0],
    ["len(5)", 0],
    ["json([1, 'a', null])", '[1,"a",null]'],
    ["json(user)", '{"name":"Alice","role":"admin","age":30}'],
    ["json(nonexistent)", "null"],
    ["json('x')", '"x"'],
    ["now()", "2025-05-01T12:00:00.000Z"],
    ["uuid()", "00000000-0000-4000-8000-000000000000"],
    ["random(1, 7)", 4],
    ["random()", 50],
    ["random(5, 5)", 5],
    ["random(9, 2)", 9],
    ["format_date(when)", "2024-03-05"],
    ["format_date(when, '%Y/%m/%d %H:%M:%S')", "2024/03/05 10:20:30"],
    ["format_date(when, '%a %b %e %I%p, %A %B')", "Tue Mar  5 10AM, Tuesday March"],
    ["format_date(when, '%F %T %z %:z')", "2024-03-05 10:20:30 +0200 +02:00"],
    ["format_date(when, '%j %u %w %y %s %%')", "065 2 2 24 1709626830 %"],
    ["format_date('2024-12-31T23:59:59.999Z', '%j %H')", "366 23"],
    ["format_date('2024-03-05', '%F %T')", "2024-03-05 00:00:00"],
    ["format_date(now(), '%Y')", "2025"],
    ["format_date(when, '%Q')", null],
    ["format_date(when, 5)", null],
    ["format_date('2024-02-30T00:00:00Z')", null],
    ["format_date('2024-03-05T25:00:00Z')", null],
    ["format_date('yesterday')", null],
    ["format_date(12345)", null],
    ["day_of_week('2024-03-04T00:00:00Z')", 0],
    ["day_of_week('2024-03-10T12:00:00Z')", 6],
    // Sunday evening in New York is already Monday in UTC: the timestamp's own offset counts.
    ["day_of_week('2024-03-10T23:30:00-05:00')", 6],
    ["day_of_week('nope')", null],
    ["keys(same_user)", ["age", "name", "role"]],
    ["values(same_user)", [30, "Alice", "admin"]],
    ["keys(items)", []],
    ["values(5)", []],
    ["contains(items, 20)", true],
    ["contains(items, '20')", false],
    ["contains(tags, 'b')", true],
    ["contains('hello', 'ell')", true],
    ["contains('hello', 1)", false],
    ["contains(nothing, 1)", false],
    ["starts_with('hello', 'he')", true],
    ["starts_with('hello', 'lo')", false],
    ["ends_with('hello', 'lo')", true],
    ["starts_with(5, '5')", false],
    ["sum(nums)", 16],
    ["sum([])", 0],
    ["sum('x')", null],
    ["avg([1, 2, 3, 'x'])", 2],
    ["avg([])", null],
    ["min(nums)", 1],
    ["max(nums)", 10],
    ["min(3, 1, 2)", 1],
    ["max(count, 10)", 10],
    ["max([])", null],
    ["min('x')", null],
    ["first(items)", 10],
    ["last(items)", 30],
    ["first([])", null],
    ["first('ab')", null],
    ["slice([1, 2, 3, 4], 1, 3)", [2, 3]],
    ["slice([1, 2, 3], -2)", [2, 3]],
    ["slice([1, 2, 3])", [1, 2, 3]],
    ["slice('héllo', 1, 3)", "él"],
    ["slice(5, 1)", null],
    ["sort(mixed)", [1, 3, "a", "b", true, null]],
    ["sort([3, 1, 2], 'desc')", [3, 2, 1]],
    ["sort(['b', 'a', 'C'])", ["C", "a", "b"]],
    ["sort(5)", null],
    ["unique(dupes)", [1, "1", 2, [1], { a: 1, b: 2 }]],
    ["unique([])", []],
    ["count([1, 2, 1], 1)", 2],
    ["count(items)", 3],
    ["count('banana', 'an')", 2],
    ["count(5, 1)", 0],
    ["change_pct(50, 75)", 50],
    ["change_pct('100', 50)", -50],
    ["change_pct(0, 5)", null],
    ["change_pct('x', 5)", null],
    ["clamp(15, 0, 10)", 10],
    ["clamp(-1, 0, 10)", 0],
    ["clamp(5, 0, 10)", 5],
    ["clamp(5, 10, 0)", null],
    ["clamp('x', 0, 1)", null],
    ["no_such_function(1)", null],
    ["sum(big)", null],
    ["sort(big)", null],
    ["unique(big)", null],
    ["contains(big, 1)", null],
    ["len(big)", EXPRESSION_LIMITS.arrayElements + 1],
  ])("%s → %j", (text, expected) => {
    expect(run(text, at)).toEqual(expected);
  });

  it("sort copies: the context array keeps its order", () => {
    const list = [3, 1, 2];
    expect(run("sort(list)", withData({ list }))).toEqual([1, 2, 3]);
    expect(list).toEqual([3, 1, 2]);
  });

  it("functions compose with operators", () => {
    expect(evaluateCondition("len(items) > 2 && contains(tags, 'a')", scope(), "strict", true)).toBe(true);
    expect(run("sum(items) / len(items)")).toBe(20);
  });

  it("the default sources are real: uuid() is a v4 UUID and now() is close to the clock", () => {
    const ast = parseExpression("[uuid(), now(), random(0, 10)]");
    const [uuid, now, random] = evaluate(ast, scope(), { outputsVisible: true }) as [string, string, number];
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Math.abs(Date.parse(now) - Date.now())).toBeLessThan(5000);
    expect(Number.isInteger(random) && random >= 0 && random < 10).toBe(true);
  });
});

describe("strict (when) and lenient (router, loop, break_on) parse errors", () => {
  it.each([
    ["count ==", "unexpected end of expression"],
    ["(1 + 2", "expected `)`"],
    ['"unterminated', "unterminated string"],
    ["count = 5", "unexpected `=` (comparison is `==`)"],
    ["a & b", "unexpected character `&`"],
    ["a | b", "unexpected character `|`"],
    ["true ? 1", "expected `:`"],
    ["1 2", "unexpected `2`"],
    ["f(1 2)", "expected `,` or `)`"],
    ["items[0]", "unexpected `[`"],
    ["in", "unexpected `in`"],
    ["count > {{ threshold }}", "`{` and `}` are not allowed"],
    ["{{a}} == {{b}}", "`{` and `}` are not allowed"],
    ["x {{ y }}", "`{` and `}` are not allowed"],
    ["#", "unexpected character `#`"],
    ["count € 2", "unexpected character `€`"],
  ])("%s", (text, message) => {
    const error = rejection(() => evaluateCondition(text, scope(), "strict", true));
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toMatch(/^expression error: /);
    expect(error.message).toContain(message);
    expect(evaluateCondition(text, scope(), "lenient", true)).toBe(false);
    expect(evaluateCondition(text, scope(), "lenient", false)).toBe(false);
  });

  it("reports the position in the original text", () => {
    expect(rejection(() => parseExpression("  {{ count > }}  ")).message).toContain("at position 13");
  });

  it("evaluation oddities are not parse errors: strict still evaluates them to false", () => {
    for (const text of ["no_such_function(1)", "'a' * 2", "10 / 0", "missing.path"]) {
      expect(evaluateCondition(text, scope(), "strict", true)).toBe(false);
    }
  });

  it("an empty condition is null (false), not a syntax error, in both modes", () => {
    expect(evaluateCondition("", scope(), "strict", true)).toBe(false);
    expect(evaluateCondition("{{ }}", scope(), "strict", true)).toBe(false);
  });
});

describe("a {{ }} wrapper around the entire text is stripped", () => {
  it.each<[string, boolean]>([
    ["{{ count > 3 }}", true],
    ["{{count > 3}}", true],
    ["  {{ mode == 'fast' }}  ", true],
    ["{{ mode == 'slow' }}", false],
  ])("%s → %s", (text, expected) => {
    expect(evaluateCondition(text, scope(), "strict", true)).toBe(expected);
  });
});

describe("visibility of outputs", () => {
  it.each(["outputs.fetch.status == 200", "steps.fetch.status == 200", "outputs.fetch.body.ok", "len(outputs) == 1"])(
    "%s: router and when see outputs, loop condition and break_on do not",
    (text) => {
      expect(evaluateCondition(text, scope(), "strict", true)).toBe(true); // router / when
      expect(evaluateCondition(text, scope(), "lenient", false)).toBe(false); // loop condition / break_on
    },
  );

  it("loop conditions still read the instance context", () => {
    expect(evaluateCondition("count < threshold && context.config.limit == 100", scope(), "lenient", false)).toBe(true);
  });

  it("hidden outputs are an empty object, as Orch8 hands loops `{}`", () => {
    expect(run("outputs", scope(), false)).toEqual({});
    expect(run("len(outputs)", scope(), false)).toBe(0);
  });
});

describe("bounded work", () => {
  it("100,000 nested parentheses are a clean error, not a stack overflow", () => {
    const text = `${"(".repeat(100_000)}1${")".repeat(100_000)}`;
    let error: AppError | undefined;
    expect(timed(() => (error = rejection(() => evaluateCondition(text, scope(), "strict", true))))).toBeLessThan(1000);
    expect(error?.message).toContain(`expression longer than ${EXPRESSION_LIMITS.length} characters`);
    expect(evaluateCondition(text, scope(), "lenient", true)).toBe(false);
  });

  it.each<[string, string]>([
    ["parentheses", `${"(".repeat(4000)}1${")".repeat(4000)}`],
    ["unary operators", `${"!".repeat(5000)}true`],
    ["negations", `${"- ".repeat(3000)}1`],
    ["arrays", `${"[".repeat(4000)}${"]".repeat(4000)}`],
    ["calls", `${"abs(".repeat(1500)}1${")".repeat(1500)}`],
    ["ternaries", `${"true ? ".repeat(800)}1${" : 0".repeat(800)}`],
  ])("nesting of %s stops at the depth limit", (_, text) => {
    expect(text.length).toBeLessThanOrEqual(EXPRESSION_LIMITS.length);
    expect(rejection(() => parseExpression(text)).message).toContain(`nests deeper than ${EXPRESSION_LIMITS.depth} levels`);
  });

  it("nesting within the limit works", () => {
    expect(run(`${"(".repeat(60)}1 + 1${")".repeat(60)}`)).toBe(2);
    expect(run(`${"!".repeat(60)}true`)).toBe(true);
  });

  it("string concatenation stops at the size limit", () => {
    const half = "x".repeat(EXPRESSION_LIMITS.stringLength / 2 + 1);
    expect(run("s + s", withData({ s: half }))).toBeNull();
    expect(run("s + 'y'", withData({ s: "x" }))).toBe("xy");
  });
});

describe("parse cache", () => {
  it("returns the same AST for the same text", () => {
    expect(parseExpression("count + 1 > 2")).toBe(parseExpression("count + 1 > 2"));
  });

  it("keeps throwing for a cached syntax error", () => {
    expect(() => parseExpression("count >")).toThrow(AppError);
    expect(() => parseExpression("count >")).toThrow(/unexpected end of expression/);
  });

  it("is bounded: the least recently used entry is dropped", () => {
    const first = parseExpression("1 + 1 == 2");
    for (let index = 0; index < EXPRESSION_LIMITS.cacheEntries; index++) parseExpression(`count == ${index}`);
    expect(parseExpression("1 + 1 == 2")).not.toBe(first);
    expect(parseExpression("1 + 1 == 2")).toEqual(first);
  });
});
