import { describe, expect, it } from "vitest";
import { AppError } from "../errors.ts";
import type { Scope } from "./paths.ts";
import { resolveTemplates, resolveTemplateString, sha256Hex, TEMPLATE_LIMITS } from "./template.ts";

const data = {
  thing: "x",
  count: 5,
  user: { name: "Alice", role: "admin", tags: ["a", "b"] },
  items: [10, 20, { id: 3 }],
  empty: "",
  nothing: null,
  flag: true,
  input: { email: "a@example.com" },
  price: -3.14159,
  text: "  Hello World  ",
  unicode: "héllo wörld",
  csv: "a,b,c",
  braces: "{x}}",
};

const scope = (overrides: Partial<Scope> = {}): Scope => ({
  context: { data, config: { api_key: "secret", retries: 3 } },
  outputs: { fetch: { status: 200, body: { ok: true } }, failing: { __error__: true, retryable: false, message: "boom" } },
  instanceId: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
  runtime: { attempt: 2, total_steps_executed: 7, dry_run: false },
  state: { counter: 41 },
  ...overrides,
});

const resolve = (template: string, at: Scope = scope()) => resolveTemplateString(template, at);

function rejection(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

/** Milliseconds `run` takes. */
function timed(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

describe("whole-string form keeps the JSON type", () => {
  it.each<[string, unknown]>([
    ["{{context.data.count}}", 5],
    ["{{ context.data.count }}", 5],
    ["{{context.data.flag}}", true],
    ["{{context.data.user}}", data.user],
    ["{{context.data.items}}", data.items],
    ["{{context.data.thing}}", "x"],
    ["{{context.data.nothing}}", null],
    ["{{context.data.missing}}", null],
    ["{{context.data.missing.deeper}}", null],
    ["{{outputs.fetch.body}}", { ok: true }],
  ])("%s → %j", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });

  it("returns a copy: mutating the result leaves the context alone", () => {
    const user = resolve("{{context.data.user}}") as { name: string; tags: string[] };
    user.name = "Mallory";
    user.tags.push("c");
    expect(data.user).toEqual({ name: "Alice", role: "admin", tags: ["a", "b"] });
  });

  it("is only the whole string: a space outside the braces makes it inline", () => {
    expect(resolve(" {{context.data.count}}")).toBe(" 5");
  });
});

describe("inline form stringifies", () => {
  it.each<[string, string]>([
    ["t={{context.data.thing}}", "t=x"],
    ["n={{context.data.count}}", "n=5"],
    ["a {{context.data.missing}} b", "a null b"],
    ["a {{context.data.nothing}} b", "a null b"],
    ["flag={{context.data.flag}}", "flag=true"],
    ["user={{context.data.user}}", 'user={"name":"Alice","role":"admin","tags":["a","b"]}'],
    ["items={{context.data.items}}", 'items=[10,20,{"id":3}]'],
    ["{{context.data.count}}{{context.data.thing}}", "5x"],
    ["{{ data.thing }} and {{ data.count }}", "x and 5"],
    ["no templates here", "no templates here"],
    ["single { braces } stay", "single { braces } stay"],
  ])("%s → %j", (template, expected) => {
    expect(resolve(template)).toBe(expected);
  });

  it("for_each items are reached through the context (example: item_var thing)", () => {
    const withItem = scope({ context: { data: { ...data, thing: "x" }, config: {} } });
    expect(resolveTemplates({ message: "t={{context.data.thing}}" }, withItem)).toEqual({ message: "t=x" });
  });
});

describe("unclosed {{ is left literally", () => {
  it.each<[string, string]>([
    ["hello {{ data.thing", "hello {{ data.thing"],
    ["{{ data.thing }} and {{ oops", "x and {{ oops"],
    ["{{", "{{"],
    ["}} {{", "}} {{"],
    // An unterminated quote keeps the piece open to the end.
    ["{{ data.thing | 'lit }}", "{{ data.thing | 'lit }}"],
  ])("%s → %j", (template, expected) => {
    expect(resolve(template)).toBe(expected);
  });

  it("a }} inside a quoted filter argument does not close the piece", () => {
    expect(resolve("{{ data.braces | replace('}}', ')') }}")).toBe("{x)");
  });
});

describe("roots", () => {
  it.each<[string, unknown]>([
    ["{{context.data.thing}}", "x"],
    ["{{context.config.api_key}}", "secret"],
    ["{{data.thing}}", "x"],
    ["{{config.retries}}", 3],
    ["{{outputs.fetch.status}}", 200],
    ["{{steps.fetch.status}}", 200],
    ["{{outputs.failing.__error__}}", true],
    ["{{outputs.never_ran}}", null],
    ["{{input.email}}", "a@example.com"],
    ["{{instance_id}}", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"],
    ["{{runtime.attempt}}", 2],
    ["{{runtime.dry_run}}", false],
    ["{{state.counter}}", 41],
    ["{{state.absent}}", null],
  ])("%s → %j", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });

  it.each([
    ["{{item}}", "unknown template root `item`"],
    ["{{ thing }}", "unknown template root `thing`"],
    ["{{ item.name }}", "unknown template root `item`"],
    ["{{ 'literal' }}", "unknown template root `'literal'`"],
    ["{{ 42 }}", "unknown template root `42`"],
    ["{{}}", "empty {{ }}"],
    ["{{ upper }}", "unknown template root `upper`"],
    ["{{ context.other.x }}", "unknown context section `other`"],
    ["{{ context }}", "unknown context section ``"],
    ["{{ json(item) }}", "unknown template root `item`"],
    ["{{ foo(data.thing) }}", "unknown filter or function `foo`"],
    ["prefix {{item}} suffix", "unknown template root `item`"],
  ])("%s fails the step: %s", (template, message) => {
    const error = rejection(() => resolve(template));
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toMatch(/^template error: /);
    expect(error.message).toContain(message);
  });

  it("names the failing param in the message and the error path", () => {
    const error = rejection(() => resolveTemplates({ body: { lines: ["ok", "{{item}}"] } }, scope()));
    expect(error.path).toEqual(["body", "lines", 1]);
    expect(error.message).toBe("template error at body.lines[1]: unknown template root `item` in `{{item}}`");
  });
});

describe("path navigation", () => {
  it.each<[string, unknown]>([
    ["{{data.items.0}}", 10],
    ["{{data.items.2.id}}", 3],
    ["{{data.items.5}}", null],
    ["{{data.user.tags.1}}", "b"],
    ["{{data.items[0]}}", null],
    ["{{data.user.tags[1]}}", null],
    ["{{data.items.x}}", null],
    ["{{data.count.x}}", null],
    ["{{data.user.name.0}}", null],
  ])("%s → %j", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });

  it("a numeric segment on an object is an ordinary key", () => {
    expect(resolve("{{data.map.0}}", scope({ context: { data: { map: { "0": "zero" } }, config: {} } }))).toBe("zero");
  });
});

describe("prototype safety: only own properties resolve", () => {
  it.each([
    "{{data.__proto__}}",
    "{{data.constructor}}",
    "{{data.constructor.name}}",
    "{{data.toString}}",
    "{{data.hasOwnProperty}}",
    "{{data.user.__proto__.polluted}}",
    "{{data.thing.length}}",
    "{{data.items.length}}",
    "{{data.items.constructor}}",
    "{{outputs.__proto__}}",
    "{{outputs.constructor}}",
    "{{steps.toString}}",
    "{{state.constructor}}",
    "{{runtime.__proto__}}",
    "{{config.valueOf}}",
    "{{instance_id.length}}",
  ])("%s → null", (template) => {
    expect(resolve(template)).toBeNull();
  });

  it("an own `__proto__` key (from JSON.parse) is ordinary data", () => {
    const parsed = JSON.parse('{"__proto__": {"x": 1}}') as unknown;
    expect(resolve("{{data.__proto__.x}}", scope({ context: { data: parsed, config: {} } }))).toBe(1);
  });

  it("resolving params with a `__proto__` key keeps it a key and pollutes nothing", () => {
    const params = JSON.parse('{"__proto__": {"polluted": "{{data.thing}}"}, "a": "{{data.count}}"}') as unknown;
    const out = resolveTemplates(params, scope()) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(out["__proto__"]).toEqual({ polluted: "x" });
    expect(out.a).toBe(5);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("fallback chain", () => {
  it.each<[string, unknown]>([
    ["{{ data.missing | data.thing }}", "x"],
    ["{{ data.missing | data.other | 'lit' }}", "lit"],
    ['{{ data.missing | "double" }}', "double"],
    ["{{ data.missing | 42 }}", 42],
    ["{{ data.missing | 1.5 }}", 1.5],
    ["{{ data.missing | true }}", true],
    ["{{ data.missing | false }}", false],
    ["{{ data.missing | null }}", null],
    ["{{ data.missing | fallback_value }}", "fallback_value"],
    ["{{ data.thing | 'lit' }}", "x"],
    ["{{ data.nothing | 'lit' }}", "lit"],
    // "" is not null: the chain stops at it (the `default` filter is the one that also skips "").
    ["{{ data.empty | 'lit' }}", ""],
    ["{{ data.missing | 'a|b' }}", "a|b"],
    ["{{ data.missing | 'first' | 'second' }}", "first"],
    ["{{ data.missing | other.word }}", "other.word"],
    // Alternatives after a hit are not evaluated, so a broken one there does no harm.
    ["{{ data.thing | context.bogus.x }}", "x"],
    ["Hello {{ data.missing | 'stranger' }}!", "Hello stranger!"],
  ])("%s → %j", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });

  it("a broken path that is reached still fails", () => {
    expect(rejection(() => resolve("{{ data.missing | context.bogus.x }}")).message).toContain("unknown context section `bogus`");
  });
});

describe("filters", () => {
  it.each<[string, unknown]>([
    ["{{ data.thing | upper }}", "X"],
    ["{{ data.unicode | upper }}", "HÉLLO WÖRLD"],
    ["{{ data.text | lower }}", "  hello world  "],
    ["{{ data.text | trim }}", "Hello World"],
    ["{{ data.missing | upper }}", ""],
    ["{{ data.count | upper }}", "5"],
    ["{{ data.price | abs }}", 3.14159],
    ["{{ data.missing | '-2.5' | abs }}", 2.5],
    ["{{ data.thing | abs }}", null],
    ["{{ data.missing | 'a b&c/é~-_.!*()' | url_encode }}", "a%20b%26c%2F%C3%A9~-_.%21%2A%28%29"],
    ["{{ data.unicode | base64 }}", "aMOpbGxvIHfDtnJsZA=="],
    ["{{ data.missing | 'aMOpbGxvIHfDtnJsZA==' | base64_decode }}", "héllo wörld"],
    ["{{ data.missing | 'aGk' | base64_decode }}", "hi"],
    ["{{ data.missing | '' | base64 }}", ""],
    ["{{ data.text | replace('World', 'There') }}", "  Hello There  "],
    ["{{ data.csv | replace(',', ' ; ') }}", "a ; b ; c"],
    ["{{ data.csv | replace(',', data.thing) }}", "axbxc"],
    ["{{ data.csv | replace(',', data.missing) }}", "abc"],
    ["{{ data.missing | default('none') }}", "none"],
    ["{{ data.empty | default('none') }}", "none"],
    ["{{ data.thing | default('none') }}", "x"],
    ["{{ data.missing | default(0) }}", 0],
    ["{{ data.missing | default(data.thing) }}", "x"],
    ["{{ data.text | trim | truncate(5, '...') }}", "Hello..."],
    ["{{ data.thing | truncate(5, '...') }}", "x"],
    ["{{ data.unicode | truncate(4) }}", "héll"],
    ["{{ data.items | join('-') }}", '10-20-{"id":3}'],
    ["{{ data.user.tags | join(', ') }}", "a, b"],
    ["{{ data.thing | join(',') }}", ""],
    ["{{ data.csv | split(',') }}", ["a", "b", "c"]],
    ["{{ data.missing | 'héllo' | split('') }}", ["h", "é", "l", "l", "o"]],
    ["{{ data.missing | 'abc' | hash('sha256') }}", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    ["{{ data.empty | hash('sha256') }}", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["{{ data.price | round(2) }}", -3.14],
    ["{{ data.missing | 2.5 | round(0) }}", 3],
    ["{{ data.missing | -2.5 | round(0) }}", -3],
    ["{{ data.missing | '2.345' | round(1) }}", 2.3],
    ["{{ data.missing | round(2) }}", null],
    ["{{ data.text | trim | lower | replace(' ', '_') }}", "hello_world"],
    ["{{ data.missing | 'abc' | upper }}", "ABC"],
    ["{{ data.csv | split(',') | join('+') }}", "a+b+c"],
    ["csv={{ data.csv | split(',') }}", 'csv=["a","b","c"]'],
    ["{{ data.thing | upper() }}", "X"],
  ])("%s → %j", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });

  it.each([
    ["{{ data.thing | upper | capitalize }}", "unknown filter `capitalize`"],
    ["{{ data.thing | upper | data.other }}", "unknown filter `data.other`"],
    ["{{ data.thing | nope(1) }}", "unknown filter or function `nope`"],
    ["{{ data.thing | upper('x') }}", "filter `upper` takes 0 arguments, got 1"],
    ["{{ data.thing | replace('x') }}", "filter `replace` takes 2 arguments, got 1"],
    ["{{ data.thing | replace('', 'y') }}", "must not be empty"],
    ["{{ data.thing | truncate('x') }}", "non-negative integer"],
    ["{{ data.thing | truncate(-1) }}", "non-negative integer"],
    ["{{ data.thing | truncate() }}", "takes 1 to 2 arguments"],
    ["{{ data.thing | hash('md5') }}", "unsupported algorithm `md5`"],
    ["{{ data.count | round(-1) }}", "integer from 0 to 15"],
    ["{{ data.count | upper | round }}", "unknown filter `round`"],
    ["{{ data.thing | default() }}", "takes 1 argument, got 0"],
    ["{{ data.thing | base64_decode }}", "not valid base64"],
    ["{{ data.missing | 'a b' | base64_decode }}", "not valid base64"],
  ])("%s is an error: %s", (template, message) => {
    const error = rejection(() => resolve(template));
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain(message);
  });

  it("a bare word right after the path is a literal fallback, not a filter (B.1)", () => {
    expect(resolve("{{ data.missing | capitalize }}")).toBe("capitalize");
    // `round` without its argument is such a word too: skipped when the path has a value.
    expect(resolve("{{ data.count | round }}")).toBe(5);
  });
});

describe("json(path) and len(path)", () => {
  it.each<[string, unknown]>([
    ["{{ json(data.user) }}", '{"name":"Alice","role":"admin","tags":["a","b"]}'],
    ["{{ json(data.count) }}", "5"],
    ["{{ json(data.thing) }}", '"x"'],
    ["{{ json(data.missing) }}", "null"],
    ["{{ json(outputs.fetch) }}", '{"status":200,"body":{"ok":true}}'],
    ["{{ len(data.items) }}", 3],
    ["{{ len(data.user) }}", 3],
    ["{{ len(data.unicode) }}", 11],
    ["{{ len(data.missing) }}", 0],
    ["{{ len(data.count) }}", 0],
    ["n={{ len(data.items) }}", "n=3"],
    ["body={{ json(data.user.tags) }}", 'body=["a","b"]'],
    ["{{ data.missing | len(data.items) }}", 3],
    ["{{ json(data.user.tags) | upper }}", '["A","B"]'],
  ])("%s → %j", (template, expected) => {
    expect(resolve(template)).toEqual(expected);
  });
});

describe("the 4 MiB filter result cap", () => {
  const big = "a".repeat(3.5 * 1024 * 1024);
  const spaces = " ".repeat(2 * 1024 * 1024);
  const list = Array.from({ length: 400_000 }, () => "0123456789");
  const bigScope = scope({ context: { data: { big, spaces, list }, config: {} } });

  it.each([
    ["{{ data.big | replace('a', 'aa') }}", "result of `replace` exceeds 4194304 bytes"],
    ["{{ data.big | base64 }}", "result of `base64` exceeds 4194304 bytes"],
    ["{{ data.spaces | url_encode | upper }}", "result of `url_encode` exceeds"],
    ["{{ data.list | join(', ') }}", "result of `join` exceeds"],
    ["{{ data.big | split('') }}", "result of `split` exceeds"],
    ["{{ json(data.list) }}", "result of `json` exceeds"],
  ])("%s", (template, message) => {
    expect(rejection(() => resolve(template, bigScope)).message).toContain(message);
  });

  it("counts UTF-8 bytes: 1.5 Mi two-byte characters are 3 MiB and pass, 2.5 Mi are over", () => {
    const under = scope({ context: { data: { s: "é".repeat(1.5 * 1024 * 1024) }, config: {} } });
    expect((resolve("{{ data.s | upper }}", under) as string).length).toBe(1.5 * 1024 * 1024);
    const over = scope({ context: { data: { s: "é".repeat(2.5 * 1024 * 1024) }, config: {} } });
    expect(rejection(() => resolve("{{ data.s | upper }}", over)).message).toContain("result of `upper` exceeds");
  });

  it("results under the cap pass", () => {
    expect((resolve("{{ data.big | upper }}", bigScope) as string).length).toBe(big.length);
  });
});

describe("resolveTemplates walks params", () => {
  it("resolves every string value at any depth; keys are not templated; other values pass through", () => {
    const params = {
      "{{data.thing}}": "{{data.thing}}",
      nested: { list: ["{{data.count}}", 1, true, null, { deep: "n={{data.count}}" }] },
      number: 7,
      flag: false,
      none: null,
    };
    expect(resolveTemplates(params, scope())).toEqual({
      "{{data.thing}}": "x",
      nested: { list: [5, 1, true, null, { deep: "n=5" }] },
      number: 7,
      flag: false,
      none: null,
    });
    expect(params.nested.list[0]).toBe("{{data.count}}");
  });

  it.each([null, 3, true, "plain"])("passes %j through unchanged", (value) => {
    expect(resolveTemplates(value, scope())).toBe(value);
  });

  it("rejects params nested deeper than the limit instead of recursing without end", () => {
    let deep: unknown = "{{data.thing}}";
    for (let level = 0; level <= TEMPLATE_LIMITS.depth + 1; level++) deep = [deep];
    expect(rejection(() => resolveTemplates(deep, scope())).message).toContain("nested deeper than 512 levels");
  });
});

describe("bounded work on hostile templates", () => {
  it.each<[string, () => string]>([
    ["half a million unclosed {{", () => "{{".repeat(500_000)],
    ["{{' repeated (every piece opens a quote)", () => "{{'".repeat(300_000)],
    ["one piece with 100k quotes", () => `{{ data.thing | '${"'".repeat(100_000)} }}`],
    ["alternating braces", () => "{{}".repeat(300_000)],
  ])("%s finishes fast and literally", (_, make) => {
    const template = make();
    let out: unknown;
    expect(timed(() => (out = resolve(template)))).toBeLessThan(1000);
    expect(typeof out).toBe("string");
  });

  it("caps the number of placeholders", () => {
    const template = "{{data.thing}}".repeat(TEMPLATE_LIMITS.pieces + 1);
    let error: AppError | undefined;
    expect(timed(() => (error = rejection(() => resolve(template))))).toBeLessThan(1000);
    expect(error?.message).toContain(`more than ${TEMPLATE_LIMITS.pieces} {{ }} placeholders`);
    expect(resolve("{{data.thing}}".repeat(TEMPLATE_LIMITS.pieces))).toBe("x".repeat(TEMPLATE_LIMITS.pieces));
  });

  it("caps the template length", () => {
    const template = `{{data.thing}}${" ".repeat(TEMPLATE_LIMITS.templateLength)}`;
    expect(rejection(() => resolve(template)).message).toContain("template longer than");
    // A long string without templates is not a template and is left alone.
    const plain = "x".repeat(TEMPLATE_LIMITS.templateLength + 1);
    expect(resolve(plain)).toBe(plain);
  });

  it("caps the length of a fallback/filter chain", () => {
    const chain = `{{ data.thing${" | upper".repeat(TEMPLATE_LIMITS.segments)} }}`;
    expect(rejection(() => resolve(chain)).message).toContain(`more than ${TEMPLATE_LIMITS.segments} | segments`);
    expect(resolve(`{{ data.thing${" | upper".repeat(TEMPLATE_LIMITS.segments - 1)} }}`)).toBe("X");
  });

  it("caps what one call may copy, so a large value referenced thousands of times does not multiply memory", () => {
    const large = { blob: "z".repeat(100_000) };
    const at = scope({ context: { data: { large }, config: {} } });
    const params = Array.from({ length: 500 }, () => "{{context.data.large}}");
    let error: AppError | undefined;
    expect(timed(() => (error = rejection(() => resolveTemplates(params, at))))).toBeLessThan(2000);
    expect(error?.message).toContain("resolved templates exceed");
    expect(resolveTemplates(params.slice(0, 100), at)).toHaveLength(100);
  });
});

// Known answers from outside Node (FIPS 180-2 examples; coreutils `sha256sum` and `base64` for the
// UTF-8 text), so they check the platform code rather than restate it.
const NON_ASCII = "日本語 ✓ 😀 ñ";

describe("sha256Hex and base64 against known vectors", () => {
  it.each<[string, Uint8Array, string]>([
    ["empty", new Uint8Array(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", new TextEncoder().encode("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    [
      "448-bit message",
      new TextEncoder().encode("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ],
    ["one million a", new Uint8Array(1_000_000).fill(0x61), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
    ["non-ASCII UTF-8", new TextEncoder().encode(NON_ASCII), "4e53aad3efcefea84c7d09508a97c43a5cf3439cd885f78082cc392c9e1bc885"],
  ])("sha256Hex(%s)", (_, bytes, hex) => {
    expect(sha256Hex(bytes)).toBe(hex);
  });

  it("hashes only the bytes a view covers", () => {
    const framed = new TextEncoder().encode("xxabcxx");
    expect(sha256Hex(framed.subarray(2, 5))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("filters hash and encode the UTF-8 bytes of the text", () => {
    const at = scope({ context: { data: { text: NON_ASCII, hello: "héllo wörld" }, config: {} } });
    expect(resolve("{{ context.data.text | hash('sha256') }}", at)).toBe("4e53aad3efcefea84c7d09508a97c43a5cf3439cd885f78082cc392c9e1bc885");
    expect(resolve("{{ context.data.hello | hash('SHA256') }}", at)).toBe("a1003f7d04a4115711d0b48a2eaf1359ce565d2d2a6fd65098dfcffadeeef59f");
    expect(resolve("{{ context.data.text | base64 }}", at)).toBe("5pel5pys6KqeIOKckyDwn5iAIMOx");
    expect(resolve("{{ context.data.text | base64 | base64_decode }}", at)).toBe(NON_ASCII);
    expect(resolve("{{ context.data.missing | '5pel5pys6KqeIOKckyDwn5iAIMOx' | base64_decode }}", at)).toBe(NON_ASCII);
  });

  it.each<[string, string]>([
    ["aGk=", "hi"],
    ["aGk", "hi"],
    ["aA==", "h"],
    ["aA", "h"],
    ["", ""],
    ["77u/aGk=", "hi"], // TextDecoder drops a leading byte order mark
  ])("base64_decode(%j) → %j", (encoded, text) => {
    expect(resolve(`{{ data.missing | '${encoded}' | base64_decode }}`)).toBe(text);
  });

  // Buffer's own decoder would accept every one of these; the filter must not.
  it.each(["aGk-", "aGk_", "aG k", "aG\tk", "a=Gk", "aGk==", "aA=", "=", "==", "====", "aGk=aGk=", "aGké"])(
    "base64_decode(%j) is an error",
    (encoded) => {
      expect(rejection(() => resolve(`{{ data.missing | '${encoded}' | base64_decode }}`)).message).toContain("not valid base64");
    },
  );
});
