import { describe, expect, it } from "vitest";
import { convert, freshKey, kindOf, renameKey } from "./value-kinds.ts";

describe("JSON values as controls", () => {
  it("tells every JSON value's kind", () => {
    expect([" ", 0, false, null, {}, []].map(kindOf)).toEqual(["text", "number", "boolean", "null", "object", "list"]);
  });

  it("converts between kinds keeping what carries over", () => {
    expect(convert("42", "number")).toBe(42);
    expect(convert("x", "number")).toBe(0);
    expect(convert(" ", "number")).toBe(0);
    expect(convert(42, "text")).toBe("42");
    expect(convert({ a: 1 }, "text")).toBe("");
    expect(convert("true", "boolean")).toBe(true);
    expect(convert("", "list")).toEqual([]);
    expect(convert(undefined, "list")).toEqual([]);
    expect(convert([1], "object")).toEqual({});
    const same = { a: 1 };
    expect(convert(same, "object")).toBe(same);
  });

  it("renames an entry in place, and never onto another entry", () => {
    const object = { a: 1, b: 2, c: 3 };
    expect(Object.keys(renameKey(object, "b", "z"))).toEqual(["a", "z", "c"]);
    expect(renameKey(object, "b", "z").z).toBe(2);
    expect(renameKey(object, "b", "a")).toBe(object);
    expect(freshKey({ key1: 1, key3: 3 })).toBe("key2");
  });
});
