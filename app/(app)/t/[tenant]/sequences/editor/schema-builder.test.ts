import { describe, expect, it } from "vitest";
import { freshPropertyName, propertiesOf, propertyProblems, schemaOf, type SchemaProperty } from "./schema-builder.ts";

const rows: SchemaProperty[] = [
  { name: "email", type: "string", required: true },
  { name: "count", type: "integer", required: false },
  { name: "tags", type: "array", required: true },
];

describe("the schema builder", () => {
  it("writes an object schema and reads the same rows back", () => {
    const schema = schemaOf(rows);
    expect(schema).toEqual({
      type: "object",
      properties: { email: { type: "string" }, count: { type: "integer" }, tags: { type: "array" } },
      required: ["email", "tags"],
    });
    expect(propertiesOf(schema)).toEqual(rows);
    expect(schemaOf([])).toEqual({ type: "object", properties: {} });
    expect(propertiesOf({ type: "object" })).toEqual([]);
  });

  it("leaves out unnamed rows and counts a repeated name once, and says so", () => {
    const typed = [...rows, { name: "", type: "string", required: true } as const, { name: "email", type: "number", required: false } as const];
    expect(schemaOf(typed).properties).toEqual({ email: { type: "number" }, count: { type: "integer" }, tags: { type: "array" } });
    expect(propertyProblems(typed)).toEqual(["property 4 has no name", "property email is listed twice"]);
    expect(propertyProblems(rows)).toEqual([]);
    expect(freshPropertyName([{ name: "field1", type: "string", required: false }])).toBe("field2");
  });

  it("hands whatever it cannot say back to JSON", () => {
    for (const schema of [
      true,
      { type: "array", items: { type: "string" } },
      { type: "object", properties: { email: { type: "string", format: "email" } } },
      { type: "object", properties: { mode: { enum: ["a", "b"] } } },
      { type: "object", properties: { a: { type: "string" } }, additionalProperties: false },
      { type: "object", properties: { a: { type: "string" } }, required: ["b"] },
      { type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["b", "a"] },
      { type: "object", properties: { at: { type: ["string", "null"] } } },
    ]) {
      expect(propertiesOf(schema), JSON.stringify(schema)).toBeNull();
    }
  });
});
