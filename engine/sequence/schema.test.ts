import { describe, expect, it } from "vitest";
import { AppError } from "../errors.ts";
import { durationMs } from "./duration.ts";
import type { Block } from "./schema.ts";
import { checkSequence, parseSequence, validateBlocks } from "./validate.ts";
import { walkBlocks, type Path } from "./walk.ts";

type Json = Record<string, unknown>;

const sequence = (blocks: unknown[], extra: Json = {}): Json => ({
  id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
  tenant_id: "acme",
  namespace: "default",
  name: "onboarding",
  version: 1,
  created_at: "2025-05-01T12:00:00Z",
  blocks,
  ...extra,
});
const step = (id: string, extra: Json = {}): Json => ({ type: "step", id, handler: "noop", ...extra });
const loop = (id: string, body: unknown[], extra: Json = {}): Json => ({ type: "loop", id, condition: "true", body, ...extra });
const forEach = (id: string, body: unknown[], extra: Json = {}): Json => ({ type: "for_each", id, collection: "items", body, ...extra });
const variant = (name: string, weight: number, blocks: unknown[] = []) => ({ name, weight, blocks });
/** A step inside `levels` nested loops: the step sits at depth `levels`. */
const nested = (levels: number): Json => {
  let block = step("leaf");
  for (let level = levels - 1; level >= 0; level--) block = loop(`l${level}`, [block]);
  return block;
};
const steps = (count: number, prefix = "s") => Array.from({ length: count }, (_, index) => step(`${prefix}${index}`));

/** The one block of a parsed single-block sequence. */
const parseBlock = (block: Json): Json => parseSequence(sequence([block])).sequence.blocks[0] as Json;

function rejection(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

describe("durationMs", () => {
  it.each([
    [2500, 2500],
    [0, 0],
    [1.5, 1500],
    [0.25, 250],
    [1.005, 1005],
  ])("reads %j as %j ms (integer = ms, fraction = seconds)", (input, ms) => {
    expect(durationMs.parse(input)).toBe(ms);
  });

  it("reads 3000.0 as 3000 ms: after JSON.parse it is the integer 3000 (the documented limitation)", () => {
    expect(durationMs.parse(JSON.parse("3000.0"))).toBe(3000);
  });

  it.each([-1, -0.5, "100", null])("rejects %j", (input) => {
    expect(durationMs.safeParse(input).success).toBe(false);
  });

  it("converts every duration field of a sequence", () => {
    const parsed = parseBlock(
      step("s", {
        timeout: 1.5,
        deadline: 60000,
        delay: { duration: 0.5, jitter: 2 },
        retry: { max_attempts: 3, initial_backoff: 0.1, max_backoff: 2.5 },
        wait_for_input: { timeout: 3 },
      }),
    );
    expect(parsed).toMatchObject({
      timeout: 1500,
      deadline: 60000,
      delay: { duration: 500, jitter: 2 },
      retry: { initial_backoff: 100, max_backoff: 2500 },
      wait_for_input: { timeout: 3 },
    });
    const { sequence: seq } = parseSequence(sequence([step("s")], { sla: { max_runtime: 1.25, max_step_runtime: 10 } }));
    expect(seq.sla).toEqual({ max_runtime: 1250, max_step_runtime: 10 });
  });

  it("rejects a negative duration as a body-shape error", () => {
    const error = rejection(() => parseSequence(sequence([step("s", { timeout: -5 })])));
    expect(error.code).toBe("unprocessable");
    expect(error.path).toEqual(["blocks", 0, "timeout"]);
    expect(error.message).toContain("duration must be non-negative");
  });
});

describe("parseSequence: shape and defaults", () => {
  it("applies the documented defaults", () => {
    const { sequence: seq } = parseSequence(
      sequence([
        step("s", {
          retry: { max_attempts: 2, initial_backoff: 10, max_backoff: 100 },
          send_window: {},
          context_access: {},
          wait_for_input: {},
          compensation: { handler: "refund" },
          delay: { duration: 10 },
        }),
        loop("l", [step("l.s")]),
        forEach("f", [step("f.s")]),
        { type: "race", id: "r", branches: [[step("r.a")], [step("r.b")]] },
        { type: "router", id: "ro", routes: [{ condition: "true", blocks: [] }] },
        { type: "try_catch", id: "tc", try_block: [step("tc.s")], catch_block: [] },
        { type: "sub_sequence", id: "sub", sequence_name: "child" },
      ]),
    );
    expect(seq).toMatchObject({ status: "production", deprecated: false });
    const [s, l, f, r, ro, tc, sub] = seq.blocks;
    expect(s).toMatchObject({
      cancellable: true,
      params: null,
      retry: { backoff_multiplier: 2.0 },
      send_window: { start_hour: 9, end_hour: 17, days: [] },
      context_access: { data: true, config: true, audit: false, runtime: false },
      wait_for_input: { prompt: "", allow_comment: false },
      compensation: { params: null, depends_on: [], verification: "handler_result" },
      delay: { business_days_only: false, holidays: [] },
    });
    expect(l).toMatchObject({ max_iterations: 1000, continue_on_error: false });
    expect(f).toMatchObject({ max_iterations: 1000, item_var: "item" });
    expect(r).toMatchObject({ semantics: "first_to_resolve" });
    expect(ro).toMatchObject({ default: null });
    expect(tc).toMatchObject({ finally_block: null });
    expect(sub).toMatchObject({ input: null });
    expect((sub as Json).version).toBeUndefined();
  });

  it("leaves absent options out, with no defaults invented (retry, delay null; timeout absent)", () => {
    const parsed = parseBlock(step("s"));
    expect(parsed).toMatchObject({ retry: null, delay: null });
    expect(parsed.timeout).toBeUndefined();
    expect(parsed.send_window).toBeUndefined();
  });

  it("reads null like an absent optional field", () => {
    const parsed = parseBlock(step("s", { timeout: null, send_window: null, when: null, retry: null }));
    expect(parsed.timeout).toBeUndefined();
    expect(parsed.send_window).toBeUndefined();
    expect(parsed.when).toBeUndefined();
    expect(parsed.retry).toBeNull();
  });

  it.each(["ab_split", "a_b_split"])("accepts an A/B split tagged %s and emits a_b_split", (type) => {
    const parsed = parseBlock({ type, id: "ab", variants: [variant("a", 1), variant("b", 1, [step("b.s")])] });
    expect(parsed.type).toBe("a_b_split");
    expect(JSON.stringify(parsed)).not.toContain('"ab_split"');
  });

  it("ignores unknown fields at every level", () => {
    const { sequence: seq } = parseSequence(
      sequence([loop("l", [step("s", { colour: "red", retry: { max_attempts: 1, initial_backoff: 1, max_backoff: 1, x: 1 } })], { extra: true })], {
        owner: "someone",
      }),
    );
    expect(seq).not.toHaveProperty("owner");
    const outer = seq.blocks[0] as Json;
    expect(outer).not.toHaveProperty("extra");
    const inner = (outer.body as Json[])[0]!;
    expect(inner).not.toHaveProperty("colour");
    expect(inner.retry).not.toHaveProperty("x");
  });

  it("parses its own output to the same value (the stored form is canonical)", () => {
    const input = sequence([
      step("s", { timeout: 1.5, retry: { max_attempts: 2, initial_backoff: 0.5, max_backoff: 2.5 } }),
      { type: "ab_split", id: "ab", variants: [variant("a", 1), variant("b", 2)] },
      { type: "saga", id: "sg", steps: [{ id: "sg.1", action: step("sg.a"), compensation: step("sg.c") }] },
    ]);
    const once = parseSequence(input).sequence;
    const twice = parseSequence(JSON.parse(JSON.stringify(once))).sequence;
    expect(twice).toEqual(once);
  });

  it.each<[string, Json, Path, RegExp?]>([
    ["a non-object body", "nope" as unknown as Json, [], /expected object/],
    ["a missing id", { ...sequence([step("s")]), id: undefined }, ["id"]],
    ["an id that is not a UUID", sequence([step("s")], { id: "seq-1" }), ["id"]],
    ["a missing tenant_id", { ...sequence([step("s")]), tenant_id: undefined }, ["tenant_id"]],
    ["a blank tenant_id", sequence([step("s")], { tenant_id: "  " }), ["tenant_id"], /tenant_id must not be blank/],
    ["a missing namespace", { ...sequence([step("s")]), namespace: undefined }, ["namespace"]],
    ["a version that is a string", sequence([step("s")], { version: "1" }), ["version"]],
    ["a version beyond int32", sequence([step("s")], { version: 2 ** 31 }), ["version"]],
    ["a created_at that is not RFC 3339", sequence([step("s")], { created_at: "yesterday" }), ["created_at"]],
    ["missing blocks", { ...sequence([]), blocks: undefined }, ["blocks"]],
    ["an unknown status", sequence([step("s")], { status: "live" }), ["status"]],
    ["an unknown block type", sequence([{ type: "wait", id: "w" }]), ["blocks", 0, "type"], /unknown block type "wait"/],
    ["a block without type", sequence([{ id: "w" }]), ["blocks", 0, "type"], /missing block type/],
    ["a step without handler", sequence([{ type: "step", id: "s" }]), ["blocks", 0, "handler"], /^blocks\[0\]\.handler: /],
    ["a block id that is a number", sequence([step("s", { id: 7 })]), ["blocks", 0, "id"]],
    ["a nested block of the wrong shape", sequence([loop("l", [{ type: "step", id: "s", handler: 1 }])]), ["blocks", 0, "body", 0, "handler"]],
    ["a negative max_iterations (u32)", sequence([loop("l", [step("s")], { max_iterations: -1 })]), ["blocks", 0, "max_iterations"]],
    ["a fractional variant weight", sequence([{ type: "a_b_split", id: "ab", variants: [variant("a", 0.5), variant("b", 1)] }]), ["blocks", 0, "variants", 0, "weight"]],
    ["a try_catch without catch_block", sequence([{ type: "try_catch", id: "t", try_block: [step("s")] }]), ["blocks", 0, "catch_block"]],
    ["parallel branches that are not lists", sequence([{ type: "parallel", id: "p", branches: [step("s")] }]), ["blocks", 0, "branches", 0]],
    ["a saga step without action", sequence([{ type: "saga", id: "sg", steps: [{ id: "x" }] }]), ["blocks", 0, "steps", 0, "action"]],
    ["an unknown race semantics", sequence([{ type: "race", id: "r", branches: [[]], semantics: "fastest" }]), ["blocks", 0, "semantics"]],
    ["an unknown context_access.data keyword", sequence([step("s", { context_access: { data: "some" } })]), ["blocks", 0, "context_access", "data"]],
  ])("rejects %s as unprocessable", (_name, json, path, message) => {
    const error = rejection(() => parseSequence(json));
    expect(error.code).toBe("unprocessable");
    expect(error.path).toEqual(path);
    if (message) expect(error.message).toMatch(message);
  });
});

describe("parseSequence: create-time rules (A.14)", () => {
  const withWindow = (window: Json) => sequence([step("s", { send_window: window })]);
  const withRetry = (retry: Json) => sequence([step("s", { retry: { max_attempts: 3, initial_backoff: 100, max_backoff: 1000, ...retry } })]);
  const withInput = (input: Json) => sequence([step("s", { wait_for_input: input })]);
  const split = (...variants: unknown[]) => sequence([{ type: "a_b_split", id: "ab", variants }]);
  const branches = (count: number) => Array.from({ length: count }, (_, index) => [step(`b${index}`)]);

  it.each<[string, Json, string, Path]>([
    ["no blocks", sequence([]), "sequence must have at least one block", ["blocks"]],
    ["a duplicate top-level id", sequence([step("a"), step("a")]), "duplicate block id: a", ["blocks", 1, "id"]],
    ["an id duplicated in a nested block", sequence([step("a"), loop("l", [step("a")])]), "duplicate block id: a", ["blocks", 1, "body", 0, "id"]],
    [
      "an id shared by a saga step and a nested block",
      sequence([{ type: "saga", id: "sg", steps: [{ id: "charge", action: step("charge.a") }] }, loop("l", [step("charge")])]),
      "duplicate block id: charge",
      ["blocks", 1, "body", 0, "id"],
    ],
    ["an empty block id", sequence([step("")]), "block `(empty)`: block id must not be empty", ["blocks", 0, "id"]],
    ["an empty handler", sequence([step("s", { handler: "" })]), "block `s`: handler name must not be empty", ["blocks", 0, "handler"]],
    ["a blank compensation handler", sequence([step("s", { compensation: { handler: " " } })]), "block `s`: compensation.handler must not be empty", ["blocks", 0, "compensation", "handler"]],
    ["retry.max_attempts 0", withRetry({ max_attempts: 0 }), "block `s`: retry.max_attempts must be > 0", ["blocks", 0, "retry", "max_attempts"]],
    ["max_backoff below initial_backoff", withRetry({ initial_backoff: 500, max_backoff: 100 }), "block `s`: retry.initial_backoff must be <= retry.max_backoff", ["blocks", 0, "retry", "max_backoff"]],
    ["backoff_multiplier 0", withRetry({ backoff_multiplier: 0 }), "block `s`: retry.backoff_multiplier must be > 0", ["blocks", 0, "retry", "backoff_multiplier"]],
    ["a negative backoff_multiplier", withRetry({ backoff_multiplier: -1.5 }), "block `s`: retry.backoff_multiplier must be > 0", ["blocks", 0, "retry", "backoff_multiplier"]],
    ["send_window.start_hour 24", withWindow({ start_hour: 24 }), "block `s`: send_window.start_hour must be 0-23", ["blocks", 0, "send_window", "start_hour"]],
    ["send_window.end_hour 30", withWindow({ end_hour: 30 }), "block `s`: send_window.end_hour must be 0-23", ["blocks", 0, "send_window", "end_hour"]],
    ["start_hour equal to end_hour", withWindow({ start_hour: 17 }), "block `s`: send_window.start_hour must differ from end_hour", ["blocks", 0, "send_window", "end_hour"]],
    ["a send_window day beyond 6", withWindow({ days: [0, 7] }), "block `s`: send_window.days value 7 out of range 0-6", ["blocks", 0, "send_window", "days", 1]],
    ["a parallel with no branch", sequence([{ type: "parallel", id: "p", branches: [] }]), "block `p`: parallel must have at least one branch", ["blocks", 0, "branches"]],
    ["a parallel with 257 branches", sequence([{ type: "parallel", id: "p", branches: branches(257) }]), "block `p`: parallel must not have more than 256 branches", ["blocks", 0, "branches"]],
    ["a race with no branch", sequence([{ type: "race", id: "r", branches: [] }]), "block `r`: race must have at least one branch", ["blocks", 0, "branches"]],
    ["a race with 257 branches", sequence([{ type: "race", id: "r", branches: branches(257) }]), "block `r`: race must not have more than 256 branches", ["blocks", 0, "branches"]],
    ["a blank loop condition", sequence([loop("l1", [step("s")], { condition: "  " })]), "block `l1`: loop condition must not be empty", ["blocks", 0, "condition"]],
    ["an empty loop body", sequence([loop("l1", [])]), "block `l1`: loop body must not be empty", ["blocks", 0, "body"]],
    ["loop max_iterations 0", sequence([loop("l1", [step("s")], { max_iterations: 0 })]), "block `l1`: loop max_iterations must be > 0", ["blocks", 0, "max_iterations"]],
    ["loop max_iterations 100001", sequence([loop("l1", [step("s")], { max_iterations: 100_001 })]), "block `l1`: loop max_iterations must not exceed 100000", ["blocks", 0, "max_iterations"]],
    ["an empty for_each collection", sequence([forEach("f", [step("s")], { collection: "" })]), "block `f`: for_each collection must not be empty", ["blocks", 0, "collection"]],
    ["a blank for_each item_var", sequence([forEach("f", [step("s")], { item_var: " " })]), "block `f`: for_each item_var must not be empty", ["blocks", 0, "item_var"]],
    ["an empty for_each body", sequence([forEach("f", [])]), "block `f`: for_each body must not be empty", ["blocks", 0, "body"]],
    ["for_each max_iterations 0", sequence([forEach("f", [step("s")], { max_iterations: 0 })]), "block `f`: for_each max_iterations must be > 0", ["blocks", 0, "max_iterations"]],
    ["for_each max_iterations 100001", sequence([forEach("f", [step("s")], { max_iterations: 100_001 })]), "block `f`: for_each max_iterations must not exceed 100000", ["blocks", 0, "max_iterations"]],
    ["a router with no route and no default", sequence([{ type: "router", id: "ro", routes: [] }]), "block `ro`: router must have at least one route or a default", ["blocks", 0, "routes"]],
    ["a router with a null default", sequence([{ type: "router", id: "ro", routes: [], default: null }]), "block `ro`: router must have at least one route or a default", ["blocks", 0, "routes"]],
    ["a blank route condition", sequence([{ type: "router", id: "ro", routes: [{ condition: " ", blocks: [] }] }]), "block `ro`: router route condition must not be empty", ["blocks", 0, "routes", 0, "condition"]],
    ["an empty try_block", sequence([{ type: "try_catch", id: "tc", try_block: [], catch_block: [step("c")] }]), "block `tc`: try_catch try_block must not be empty", ["blocks", 0, "try_block"]],
    ["a blank sequence_name", sequence([{ type: "sub_sequence", id: "sub", sequence_name: " " }]), "block `sub`: sub_sequence sequence_name must not be empty", ["blocks", 0, "sequence_name"]],
    ["an A/B split with one variant", split(variant("a", 1)), "block `ab`: a_b_split must have at least 2 variants", ["blocks", 0, "variants"]],
    ["an A/B split with a blank name", split(variant("a", 1), variant(" ", 1)), "block `ab`: a_b_split variant name must not be empty", ["blocks", 0, "variants", 1, "name"]],
    ["an A/B split with duplicate names", split(variant("a", 1), variant("a", 1)), "block `ab`: a_b_split duplicate variant name `a`", ["blocks", 0, "variants", 1, "name"]],
    ["an A/B split with total weight 0", split(variant("a", 0), variant("b", 0)), "block `ab`: a_b_split total weight must be > 0", ["blocks", 0, "variants"]],
    ["an empty cancellation_scope", sequence([{ type: "cancellation_scope", id: "cs", blocks: [] }]), "block `cs`: cancellation_scope must have at least one block", ["blocks", 0, "blocks"]],
    ["empty wait_for_input choices", withInput({ choices: [] }), "block `s`: wait_for_input.choices must not be empty when given", ["blocks", 0, "wait_for_input", "choices"]],
    [
      "duplicate wait_for_input choice values",
      withInput({ choices: [{ label: "Yes", value: "y" }, { label: "Sure", value: "y" }] }),
      "block `s`: wait_for_input has a duplicate choice value `y`",
      ["blocks", 0, "wait_for_input", "choices", 1, "value"],
    ],
    ["an empty wait_for_input store_as", withInput({ store_as: "" }), "block `s`: wait_for_input.store_as must not be empty", ["blocks", 0, "wait_for_input", "store_as"]],
    ["a block inside 65 enclosing blocks", sequence([nested(65)]), "block `leaf`: block nesting exceeds the maximum depth of 64", ["blocks", 0, ...Array(65).fill(["body", 0]).flat()]],
    ["5001 blocks", sequence(steps(5001)), "sequence has 5001 blocks, exceeding the maximum of 5000", ["blocks"]],
    ["5001 blocks counting a cleanup tree", sequence(steps(4000), { on_failure: steps(1001) }), "sequence has 5001 blocks, exceeding the maximum of 5000", ["blocks"]],
    ["an input_schema that is a string", sequence([step("s")], { input_schema: "object" }), "input_schema is not a valid JSON Schema: /: a schema must be an object or a boolean", ["input_schema"]],
    [
      "an input_schema with an unknown type name",
      sequence([step("s")], { input_schema: { type: "object", properties: { age: { type: "int" } } } }),
      'input_schema is not a valid JSON Schema: /properties/age/type: "int" is not a JSON Schema type (null, boolean, object, array, number, integer, string)',
      ["input_schema"],
    ],
    ["an input_schema whose required is not a list", sequence([step("s")], { input_schema: { required: "email" } }), "input_schema is not a valid JSON Schema: /required: must be an array of strings", ["input_schema"]],
    ["an output_schema that is a number", sequence([step("s", { output_schema: 5 })]), "block `s`: output_schema is not a valid JSON Schema: /: a schema must be an object or a boolean", ["blocks", 0, "output_schema"]],
    [
      "an output_schema with a bad nested type",
      sequence([step("s", { output_schema: { anyOf: [{ type: ["string", "strung"] }] } })]),
      'block `s`: output_schema is not a valid JSON Schema: /anyOf/0/type: "strung" is not a JSON Schema type (null, boolean, object, array, number, integer, string)',
      ["blocks", 0, "output_schema"],
    ],
    [
      "an output_schema with a regular expression",
      sequence([step("s", { output_schema: { properties: { email: { type: "string", pattern: "^.+@.+$" } } } })]),
      "block `s`: output_schema is not a valid JSON Schema: /properties/email/pattern: is not supported: a regular expression from a sequence would run in the engine all tenants share; use enum, const, minLength or maxLength instead",
      ["blocks", 0, "output_schema"],
    ],
    ["a rule broken inside on_failure", sequence([step("s")], { on_failure: [loop("cleanup", [step("c")], { max_iterations: 0 })] }), "block `cleanup`: loop max_iterations must be > 0", ["on_failure", 0, "max_iterations"]],
    ["a duplicate id inside on_cancel", sequence([step("s")], { on_cancel: [step("c"), step("c")] }), "duplicate block id: c", ["on_cancel", 1, "id"]],
  ])("rejects %s", (_name, json, message, path) => {
    const error = rejection(() => parseSequence(json));
    expect(error).toMatchObject({ code: "invalid_argument", message, path });
  });

  it("answers loop max_iterations 0 with the message clients match on", () => {
    const error = rejection(() => parseSequence(sequence([loop("l1", [step("s")], { max_iterations: 0 })])));
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain("loop max_iterations must be > 0");
  });

  it("rejects absurdly deep JSON before walking it, without overflowing the stack", () => {
    const error = rejection(() => parseSequence(sequence([nested(5000)])));
    expect(error).toMatchObject({ code: "invalid_argument", message: "JSON nesting exceeds the maximum depth of 512", path: [] });
  });

  it.each<[string, Json]>([
    ["a block inside 64 enclosing blocks", sequence([nested(64)])],
    ["5000 blocks", sequence(steps(5000))],
    ["a router with no route but a default", sequence([{ type: "router", id: "ro", routes: [], default: [] }])],
    ["a try_catch with an empty catch_block", sequence([{ type: "try_catch", id: "tc", try_block: [step("s")], catch_block: [] }])],
    ["an empty saga", sequence([{ type: "saga", id: "sg", steps: [] }])],
    ["a parallel with an empty branch", sequence([{ type: "parallel", id: "p", branches: [[]] }])],
    ["variants where only one has weight", sequence([{ type: "a_b_split", id: "ab", variants: [variant("a", 0), variant("b", 1)] }])],
    ["ids reused across the main and cleanup trees", sequence([step("s")], { on_failure: [step("s")], on_cancel: [step("s")] })],
    ["send_window hours 0 and 23, days 0-6", sequence([step("s", { send_window: { start_hour: 23, end_hour: 0, days: [0, 6] } })])],
    ["loop max_iterations 100000", sequence([loop("l", [step("s")], { max_iterations: 100_000 })])],
    ["max_backoff equal to initial_backoff", sequence([step("s", { retry: { max_attempts: 1, initial_backoff: 5, max_backoff: 5 } })])],
    ["wait_for_input with distinct choices", sequence([step("s", { wait_for_input: { choices: [{ label: "A", value: "a" }, { label: "B", value: "b" }], store_as: "answer" } })])],
    ["a boolean input_schema", sequence([step("s")], { input_schema: true })],
    [
      "a well-formed input_schema",
      sequence([step("s")], {
        input_schema: { type: "object", required: ["email"], properties: { email: { type: "string", format: "email", maxLength: 254 }, tags: { type: ["array", "null"], items: { type: "string" } } } },
      }),
    ],
  ])("accepts %s", (_name, json) => {
    expect(() => parseSequence(json)).not.toThrow();
  });

  it("reports every problem to the editor, not only the first", () => {
    const { problems, sequence: seq } = checkSequence(sequence([step("a", { handler: "" }), step("a"), loop("l", [])]));
    expect(seq).toBeDefined();
    expect(problems.map((problem) => problem.message)).toEqual([
      "block `a`: handler name must not be empty",
      "duplicate block id: a",
      "block `l`: loop body must not be empty",
    ]);
  });

  it("reports every shape problem, and no rule problem while the shape is wrong", () => {
    const { problems, sequence: seq } = checkSequence(sequence([step("s", { handler: 1 }), loop("l", [], { condition: 2 })]));
    expect(seq).toBeUndefined();
    expect(problems.map((problem) => [problem.code, problem.path])).toEqual([
      ["unprocessable", ["blocks", 0, "handler"]],
      ["unprocessable", ["blocks", 1, "condition"]],
    ]);
  });
});

describe("parseSequence: warnings", () => {
  it("warns, without failing, about handlers that will run as external worker tasks", () => {
    const { warnings } = parseSequence(sequence([step("a", { handler: "my_worker" }), loop("l", [step("b", { handler: "sleep" }), step("c", { handler: "charge_card" })])]));
    expect(warnings).toEqual([
      'block `a`: handler "my_worker" is not built in; it will run as an external worker task',
      'block `c`: handler "charge_card" is not built in; it will run as an external worker task',
    ]);
  });

  it.each(["noop", "log", "sleep", "fail", "http_request", "llm_call", "self_modify", "emit_event", "send_signal", "query_instance", "human_review"])(
    "has no warning for the built-in %s",
    (handler) => {
      expect(parseSequence(sequence([step("s", { handler })])).warnings).toEqual([]);
    },
  );
});

describe("validateBlocks", () => {
  it("accepts blocks for a running tree and returns them parsed", () => {
    const { blocks, warnings } = validateBlocks([{ type: "ab_split", id: "new", variants: [variant("a", 1), variant("b", 1, [step("x", { handler: "w" })])] }], { ids: ["s"] });
    expect(blocks[0]?.type).toBe("a_b_split");
    expect(warnings).toEqual(['block `x`: handler "w" is not built in; it will run as an external worker task']);
  });

  it("rejects an id already used in the tree", () => {
    const error = rejection(() => validateBlocks([step("s")], { ids: ["s"], path: ["params", "blocks"] }));
    expect(error).toMatchObject({ code: "invalid_argument", message: "duplicate block id: s", path: ["params", "blocks", 0, "id"] });
  });

  it("counts depth from where the blocks are inserted", () => {
    expect(() => validateBlocks([nested(4)], { depth: 60 })).not.toThrow();
    const error = rejection(() => validateBlocks([nested(5)], { depth: 60 }));
    expect(error.message).toBe("block `leaf`: block nesting exceeds the maximum depth of 64");
  });

  it("counts the blocks already in the sequence toward the limit", () => {
    const error = rejection(() => validateBlocks(steps(2), { blockCount: 4999 }));
    expect(error.message).toBe("sequence has 5001 blocks, exceeding the maximum of 5000");
  });

  it("answers a malformed block as unprocessable", () => {
    const error = rejection(() => validateBlocks([{ type: "teleport", id: "t" }]));
    expect(error).toMatchObject({ code: "unprocessable", path: [0, "type"] });
  });
});

describe("walkBlocks", () => {
  const tree = parseSequence(
    sequence([
      { type: "parallel", id: "p", branches: [[step("p.a")], [loop("p.l", [step("p.l.s")])]] },
      { type: "router", id: "r", routes: [{ condition: "x", blocks: [step("r.1")] }], default: [step("r.d")] },
      { type: "try_catch", id: "tc", try_block: [step("t")], catch_block: [step("c")], finally_block: [step("f")] },
      { type: "ab_split", id: "ab", variants: [variant("a", 1, [step("ab.a")]), variant("b", 1)] },
      { type: "saga", id: "sg", steps: [{ id: "sg.1", action: step("sg.a"), compensation: step("sg.c") }] },
      { type: "cancellation_scope", id: "cs", blocks: [forEach("fe", [step("fe.s")])] },
    ]),
  ).sequence.blocks;

  it("visits every block, parents first, with its depth and path", () => {
    const visits: [string, number, Path][] = [];
    walkBlocks(tree, (block, depth, path) => {
      visits.push([block.id, depth, path]);
    });
    expect(visits).toEqual([
      ["p", 0, [0]],
      ["p.a", 1, [0, "branches", 0, 0]],
      ["p.l", 1, [0, "branches", 1, 0]],
      ["p.l.s", 2, [0, "branches", 1, 0, "body", 0]],
      ["r", 0, [1]],
      ["r.1", 1, [1, "routes", 0, "blocks", 0]],
      ["r.d", 1, [1, "default", 0]],
      ["tc", 0, [2]],
      ["t", 1, [2, "try_block", 0]],
      ["c", 1, [2, "catch_block", 0]],
      ["f", 1, [2, "finally_block", 0]],
      ["ab", 0, [3]],
      ["ab.a", 1, [3, "variants", 0, "blocks", 0]],
      ["sg", 0, [4]],
      ["sg.a", 1, [4, "steps", 0, "action"]],
      ["sg.c", 1, [4, "steps", 0, "compensation"]],
      ["cs", 0, [5]],
      ["fe", 1, [5, "blocks", 0]],
      ["fe.s", 2, [5, "blocks", 0, "body", 0]],
    ]);
  });

  it("skips a block's children when the visitor returns false", () => {
    const seen: string[] = [];
    walkBlocks(tree, (block: Block) => {
      seen.push(block.id);
      return block.type !== "parallel" && block.type !== "cancellation_scope";
    });
    expect(seen).not.toContain("p.a");
    expect(seen).not.toContain("fe");
    expect(seen).toContain("r.1");
  });
});
