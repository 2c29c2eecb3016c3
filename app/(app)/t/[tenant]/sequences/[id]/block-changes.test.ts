import { describe, expect, it } from "vitest";
import { blockChanges } from "./block-changes.ts";

const step = (id: string, handler = "noop") => ({ type: "step", id, handler });

describe("blockChanges", () => {
  it("marks added, removed and changed blocks on their side, the rest same", () => {
    const left = [step("a"), step("b"), step("gone")];
    const right = [step("a"), step("b", "log"), step("new")];
    const { left: l, right: r } = blockChanges(left, right);
    expect(Object.fromEntries(l)).toEqual({ a: "same", b: "changed", gone: "removed" });
    expect(Object.fromEntries(r)).toEqual({ a: "same", b: "changed", new: "added" });
  });

  it("pins a change inside an arm on the block that changed, not on its composite", () => {
    const left = [{ type: "parallel", id: "fan", branches: [[step("x")], [step("y")]] }];
    const right = [{ type: "parallel", id: "fan", branches: [[step("x", "log")], [step("y")]] }];
    expect(Object.fromEntries(blockChanges(left, right).right)).toEqual({ fan: "same", x: "changed", y: "same" });
  });

  it("does not depend on key order", () => {
    const { right } = blockChanges([{ type: "step", id: "a", handler: "noop" }], [{ handler: "noop", id: "a", type: "step" }]);
    expect(right.get("a")).toBe("same");
  });
});
