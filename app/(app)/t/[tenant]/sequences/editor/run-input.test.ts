import { describe, expect, it } from "vitest";
import { runFields, runInputProblem } from "./run-input.ts";

const schema = {
  type: "object",
  required: ["customer"],
  properties: { customer: { type: "string" }, count: { type: "integer", minimum: 1 } },
};

describe("runFields", () => {
  it("is a form for an object schema, with its required fields marked", () => {
    expect(runFields(schema)?.map((f) => [f.name, f.spec.kind, f.required])).toEqual([["customer", "text", true], ["count", "number", false]]);
  });

  it("is JSON (null) without a schema or for a schema that is not an object one", () => {
    expect(runFields(undefined)).toBeNull();
    expect(runFields({ type: "array" })).toBeNull();
  });
});

describe("runInputProblem", () => {
  const fields = runFields(schema);
  it("refuses a required field left empty, absent or as empty text", () => {
    expect(runInputProblem(schema, fields, {})).toBe("Fill in customer: required by the input schema.");
    expect(runInputProblem(schema, fields, { customer: "" })).toBe("Fill in customer: required by the input schema.");
  });

  it("refuses what the engine would refuse, with the engine's words", () => {
    expect(runInputProblem(schema, fields, { customer: "Ada", count: 0 })).toMatch(/^context\.data does not match the sequence's input_schema: \/count/);
  });

  it("accepts a filled form, and anything when there is no schema", () => {
    expect(runInputProblem(schema, fields, { customer: "Ada", count: 2 })).toBeUndefined();
    expect(runInputProblem(undefined, null, { any: ["thing"] })).toBeUndefined();
  });
});
