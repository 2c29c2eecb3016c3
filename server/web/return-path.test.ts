import { describe, expect, it } from "vitest";
import { safeReturnPath } from "./return-path.ts";

describe("safeReturnPath", () => {
  it.each([
    ["/t/acme", "/t/acme"],
    ["/ops?x=1", "/ops?x=1"],
    ["//evil.example", "/"],
    ["/\\evil.example", "/"],
    ["https://evil.example/", "/"],
    [undefined, "/"],
    [42, "/"],
  ])("%j -> %j", (input, expected) => {
    expect(safeReturnPath(input)).toBe(expected);
  });
});
