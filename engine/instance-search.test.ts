// The search box's text as a search, and the schema every door checks it with.
import { describe, expect, it } from "vitest";
import { InstanceSearchSchema, parseInstanceSearch } from "./instance-search.ts";
import { shortId } from "./short-id.ts";

const ID = "01930f4e-2b7c-7d1a-8e3f-1b2c3d4e5f60";

describe("shortId", () => {
  it("is the id's random last group, lower case", () => {
    expect(shortId(ID)).toBe("1b2c3d4e5f60");
    expect(shortId(ID.toUpperCase())).toBe("1b2c3d4e5f60");
  });
});

describe("parseInstanceSearch", () => {
  it.each<[string, unknown]>([
    [ID, { kind: "id", id: ID }],
    [`  ${ID.toUpperCase()} `, { kind: "id", id: ID }],
    [ID.replaceAll("-", ""), { kind: "id", id: ID }],
    ["1b2c", { kind: "shortId", prefix: "1b2c" }],
    ["1B2C3D4E5F60", { kind: "shortId", prefix: "1b2c3d4e5f60" }],
    ['data.order = "A-102"', { kind: "context", path: "data.order", value: "A-102" }],
    ["data.order=A-102", { kind: "context", path: "data.order", value: "A-102" }],
    ['data.order = "12"', { kind: "context", path: "data.order", value: "12" }],
    ["data.customer.id = 12", { kind: "context", path: "data.customer.id", value: 12 }],
    ["data.amount = -1.5e2", { kind: "context", path: "data.amount", value: -150 }],
    ["data.paid = true", { kind: "context", path: "data.paid", value: true }],
    ["data.note = a = b", { kind: "context", path: "data.note", value: "a = b" }],
    ['data.quote = "unclosed', { kind: "context", path: "data.quote", value: '"unclosed' }],
    ["data.größe = XL", { kind: "context", path: "data.größe", value: "XL" }],
  ])("%s", (text, search) => {
    expect(parseInstanceSearch(text)).toEqual({ search });
  });

  it("is null for an empty box", () => {
    expect(parseInstanceSearch("   ")).toBeNull();
  });

  it.each<[string, RegExp]>([
    ["1b2", /at least 4 characters/],
    ["1b2c3d4e5f601", /Search by a whole id, the start of a short id/],
    ["order 12", /Search by a whole id, the start of a short id/],
    ["data.order =", /Give data.order a value/],
    ["order = 12", /“order” is not a path under context.data/],
    ["data = 12", /“data” is not a path under context.data/],
    ["data..order = 12", /is not a path under context.data/],
    ["data.a b = 12", /is not a path under context.data/],
    [`data.${"k".repeat(65)} = 1`, /is not a path under context.data/],
    [`data${".k".repeat(9)} = 1`, /is not a path under context.data/],
    [`data.order = ${"x".repeat(1025)}`, /at most 1024 characters/],
  ])("refuses %s", (text, error) => {
    const parsed = parseInstanceSearch(text);
    expect(parsed).toEqual({ error: expect.stringMatching(error) });
  });
});

describe("InstanceSearchSchema", () => {
  it("names the field it refuses", () => {
    const issue = (input: unknown) => {
      const parsed = InstanceSearchSchema.safeParse(input);
      return parsed.success ? null : { path: parsed.error.issues[0]!.path, message: parsed.error.issues[0]!.message };
    };
    expect(issue({ kind: "context", path: "data.a b", value: 1 })).toEqual({ path: ["path"], message: expect.stringMatching(/^search\.path must be a path under context\.data/) });
    expect(issue({ kind: "context", path: "data.a", value: null })).toEqual({ path: ["value"], message: expect.stringMatching(/^search\.value must be/) });
    expect(issue({ kind: "context", path: "data.a", value: Number.NaN })?.path).toEqual(["value"]);
    expect(issue({ kind: "shortId", prefix: "xyz1" })).toEqual({ path: ["prefix"], message: expect.stringMatching(/^search\.prefix must be 4 to 12 hex digits/) });
    expect(issue({ kind: "id", id: "1b2c" })).toEqual({ path: ["id"], message: "search.id must be a whole instance id (a UUID)" });
    expect(issue({ kind: "id", id: ID, extra: 1 })?.path).toEqual([]);
  });
});
