// The schema-to-form mapping: which control each field of a handler's params and of a block gets.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { blockSpec, fieldHint, fits, initialValue, paramsSpec, sequenceField, specOf, specOfZod, type FieldEntry, type FieldSpec } from "./form-spec.ts";

const fieldsOf = (spec: FieldSpec | null): Record<string, FieldEntry> => {
  if (spec?.kind !== "object") throw new Error(`not an object form: ${JSON.stringify(spec)}`);
  return Object.fromEntries(spec.fields.map((field) => [field.name, field]));
};

describe("specOf: JSON Schema to field kinds", () => {
  it.each([
    [{ type: "string" }, { kind: "text" }],
    [{ type: ["string", "null"] }, { kind: "text" }],
    [{ type: "integer", minimum: 0, maximum: 9007199254740991 }, { kind: "number", integer: true, min: 0 }],
    [{ anyOf: [{ type: "number", exclusiveMinimum: 0, maximum: 100 }, { type: "null" }] }, { kind: "number", integer: false, min: 0, max: 100 }],
    [{ type: "boolean", default: false }, { kind: "boolean" }],
    [{ type: "string", enum: ["a", "b"] }, { kind: "enum", options: ["a", "b"] }],
    [{ type: "array", items: { type: "string" } }, { kind: "array", items: { kind: "text" } }],
    [{ type: "array", items: { $ref: "#/$defs/b" } }, { kind: "blocks" }],
    [{ type: "array", items: { type: "array", items: { $ref: "#/$defs/b" } } }, { kind: "blocks" }],
    [{ type: "object", additionalProperties: { type: "string" } }, { kind: "record", values: { kind: "text" } }],
    [{ type: "object", additionalProperties: {} }, { kind: "json" }],
    [{}, { kind: "json" }],
    [{ type: ["string", "number"] }, { kind: "union", variants: [{ kind: "text" }, { kind: "number", integer: false }] }],
  ])("%j", (schema, spec) => {
    expect(specOf(schema)).toEqual(spec);
  });

  it("reads an object's fields: required unless defaulted, nullable, described", () => {
    const fields = fieldsOf(specOfZod(z.object({ a: z.string().describe("the a"), b: z.number().default(1), c: z.boolean().nullish() })));
    expect(fields.a).toEqual({ name: "a", spec: { kind: "text" }, required: true, nullable: false, description: "the a" });
    expect(fields.b).toMatchObject({ required: false, default: 1 });
    expect(fields.c).toMatchObject({ required: false, nullable: true, spec: { kind: "boolean" } });
  });
});

describe("paramsSpec: built-in handlers get forms, workers get none", () => {
  it("http_request: url text, method a select, headers name/value rows, body and timeout", () => {
    const fields = fieldsOf(paramsSpec("http_request"));
    expect(fields.url).toMatchObject({ required: true, spec: { kind: "text" } });
    expect(fields.method).toMatchObject({ required: false, spec: { kind: "enum", options: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] } });
    expect(fields.headers!.spec).toMatchObject({ kind: "record" });
    expect(fields.body!.spec).toEqual({ kind: "json" });
    expect(fields.timeout_ms).toMatchObject({ required: false, spec: { kind: "number", min: 0 } });
  });

  it("log, sleep, fail: every field optional (they never refuse params)", () => {
    for (const name of ["log", "sleep", "fail"]) expect(Object.values(fieldsOf(paramsSpec(name))).every((field) => !field.required)).toBe(true);
    expect(fieldsOf(paramsSpec("log")).level!.spec).toEqual({ kind: "enum", options: ["debug", "info", "warn"] });
    expect(fieldsOf(paramsSpec("sleep")).duration_ms).toMatchObject({ default: 100, spec: { kind: "number", integer: true, min: 0 } });
  });

  it("send_signal: signal_type is a built-in name or {custom}", () => {
    expect(fieldsOf(paramsSpec("send_signal")).signal_type!.spec).toEqual({
      kind: "union",
      variants: [{ kind: "enum", options: ["pause", "resume", "cancel", "update_context"] }, { kind: "object", fields: [{ name: "custom", spec: { kind: "text" }, required: true, nullable: false }] }],
    });
  });

  it("llm_call: messages a list of free objects", () => {
    expect(fieldsOf(paramsSpec("llm_call")).messages!.spec).toEqual({ kind: "array", items: { kind: "json" } });
  });

  it("a worker's handler has no form", () => {
    expect(paramsSpec("charge_card")).toBeNull();
  });
});

describe("blockSpec: every field of wire-format A", () => {
  it("step: the A.3 fields with their sub-forms", () => {
    const fields = fieldsOf(blockSpec("step"));
    expect(Object.keys(fields)).toEqual([
      "type", "id", "handler", "params", "delay", "retry", "timeout", "rate_limit_key", "send_window", "context_access", "cancellable",
      "wait_for_input", "queue_name", "deadline", "on_deadline_breach", "fallback_handler", "cache_key", "output_schema", "when", "compensation",
    ]);
    expect(Object.keys(fieldsOf(fields.retry!.spec))).toEqual(["max_attempts", "initial_backoff", "max_backoff", "backoff_multiplier", "retry_if", "non_retryable_codes"]);
    expect(fields.retry).toMatchObject({ nullable: true, required: false });
    expect(Object.keys(fieldsOf(fields.delay!.spec))).toEqual(["duration", "business_days_only", "jitter", "holidays", "fire_at_local", "timezone"]);
    expect(Object.keys(fieldsOf(fields.wait_for_input!.spec))).toEqual(["prompt", "timeout", "escalation_handler", "choices", "store_as", "allow_comment"]);
    expect(fieldsOf(fields.compensation!.spec).verification!.spec).toEqual({ kind: "enum", options: ["handler_result", "provider_receipt", "manual"] });
    expect(fieldsOf(fields.context_access!.spec).data!.spec).toMatchObject({ kind: "union" });
    expect(fields.cancellable).toMatchObject({ default: true, spec: { kind: "boolean" } });
    expect(fields.when!.spec).toEqual({ kind: "text" });
  });

  it("durations say they are milliseconds, a loop's poll_interval seconds; a handler's params say their own", () => {
    const step = fieldsOf(blockSpec("step"));
    expect(fieldHint(step.timeout!, false)).toBe("in milliseconds");
    expect(fieldHint(step.deadline!, false)).toBe("in milliseconds");
    expect(fieldHint(fieldsOf(step.retry!.spec).initial_backoff!, false)).toBe("in milliseconds");
    expect(fieldHint(fieldsOf(step.delay!.spec).duration!, false)).toBe("in milliseconds");
    expect(fieldHint(fieldsOf(step.wait_for_input!.spec).timeout!, false)).toBe("in milliseconds");
    expect(fieldHint(fieldsOf(sequenceField("sla")!.spec).max_runtime!, false)).toBe("in milliseconds");
    const loop = fieldsOf(blockSpec("loop"));
    expect(fieldHint(loop.poll_interval!, false)).toBe("in seconds");
    expect(fieldHint(loop.max_iterations!, false)).toBe("default 1000");
    // A built-in's params field is described by the handler; a worker's field named timeout is not assumed to be ms.
    expect(fieldHint(fieldsOf(paramsSpec("http_request")).timeout_ms!, true)).toMatch(/ms/);
    expect(fieldHint({ name: "timeout", spec: { kind: "number", integer: false }, required: false, nullable: false }, true)).toBeUndefined();
  });

  it("composites: block lists are left to the canvas", () => {
    expect(fieldsOf(blockSpec("parallel")).branches!.spec).toEqual({ kind: "blocks" });
    expect(fieldsOf(blockSpec("loop")).body!.spec).toEqual({ kind: "blocks" });
    const route = fieldsOf(blockSpec("router")).routes!.spec;
    expect(route.kind === "array" && fieldsOf(route.items).blocks!.spec).toEqual({ kind: "blocks" });
    expect(fieldsOf(blockSpec("try_catch")).finally_block).toMatchObject({ nullable: true, spec: { kind: "blocks" } });
    expect(Object.keys(fieldsOf(blockSpec("loop")))).toEqual(["type", "id", "condition", "body", "max_iterations", "break_on", "continue_on_error", "poll_interval", "retain_iterations"]);
  });

  it("initial values: presets for switched-on sub-objects, required fields for the rest", () => {
    const fields = fieldsOf(blockSpec("step"));
    expect(initialValue(fields.retry!.spec, "retry")).toEqual({ max_attempts: 3, initial_backoff: 1000, max_backoff: 60000, backoff_multiplier: 2 });
    const route = fieldsOf(blockSpec("router")).routes!.spec;
    expect(route.kind === "array" && initialValue(route.items)).toEqual({ condition: "", blocks: [] });
  });

  it("fits picks a union's variant by the value's shape", () => {
    const data = fieldsOf(fieldsOf(blockSpec("step")).context_access!.spec).data!.spec;
    if (data.kind !== "union") throw new Error("not a union");
    expect([true, "none", { fields: ["a"] }].map((value) => data.variants.findIndex((variant) => fits(variant, value)))).toEqual([0, 1, 2]);
  });
});
