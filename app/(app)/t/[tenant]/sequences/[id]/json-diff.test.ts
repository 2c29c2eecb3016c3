import { describe, expect, it } from "vitest";
import { sideBySide } from "./json-diff.ts";

describe("sideBySide", () => {
  it("keeps equal lines on both sides and pairs a changed line with its replacement", () => {
    const rows = sideBySide({ name: "a", handler: "noop" }, { name: "a", handler: "log" });
    expect(rows).toEqual([
      { left: "{", right: "{", kind: "same" },
      { left: '  "name": "a",', right: '  "name": "a",', kind: "same" },
      { left: '  "handler": "noop"', right: '  "handler": "log"', kind: "changed" },
      { left: "}", right: "}", kind: "same" },
    ]);
  });

  it("puts an added field on the right only and a removed one on the left only", () => {
    const added = sideBySide({ a: 1, c: 3 }, { a: 1, b: 2, c: 3 });
    expect(added.filter((row) => row.kind !== "same")).toEqual([{ left: null, right: '  "b": 2,', kind: "added" }]);
    const removed = sideBySide({ a: 1, b: 2, c: 3 }, { a: 1, c: 3 });
    expect(removed.filter((row) => row.kind !== "same")).toEqual([{ left: '  "b": 2,', right: null, kind: "removed" }]);
  });

  it("pads the shorter side when a run of lines is replaced by more lines", () => {
    const rows = sideBySide({ list: [1] }, { list: [2, 3] }).filter((row) => row.kind !== "same");
    expect(rows).toEqual([
      { left: "    1", right: "    2,", kind: "changed" },
      { left: null, right: "    3", kind: "added" },
    ]);
  });

  it("finds nothing to mark in equal values", () => {
    expect(sideBySide({ x: [1, { y: 2 }] }, { x: [1, { y: 2 }] }).every((row) => row.kind === "same")).toBe(true);
  });
});
