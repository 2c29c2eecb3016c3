// One vocabulary for arms: the editor's slots, its outline and the run view's branch_index all
// read "branch 1", "try", "catch", "finally", "route 1", "default" the same way.
import { describe, expect, it } from "vitest";
import { armLabelOf, armOfPath, armsOf, type JsonBlock } from "./arms.ts";

const step = (id: string) => ({ type: "step", id, handler: "noop" });
const parallel: JsonBlock = { type: "parallel", id: "p", branches: [[step("a")], [step("b")]] };
const tryCatch: JsonBlock = { type: "try_catch", id: "t", try_block: [step("x")], catch_block: [step("y")], finally_block: [step("z")] };
const router: JsonBlock = { type: "router", id: "r", routes: [{ condition: "a == 1", blocks: [step("r1")] }], default: [step("d")] };
const saga: JsonBlock = { type: "saga", id: "s", steps: [{ id: "charge", action: step("c"), compensation: step("refund") }] };
const split: JsonBlock = { type: "a_b_split", id: "ab", variants: [{ name: "control", weight: 1, blocks: [] }, { name: "new", weight: 1, blocks: [] }] };

describe("armLabelOf: the run view's branch_index in the editor's words", () => {
  it.each([
    [parallel, 0, "branch 1"],
    [parallel, 1, "branch 2"],
    [tryCatch, 0, "try"],
    [tryCatch, 1, "catch"],
    [tryCatch, 2, "finally"],
    [router, 0, "route 1: a == 1"],
    [router, 1, "default"],
    [split, 1, "variant new"],
    [saga, 0, "step charge action"],
    [saga, 1, "step charge compensation"],
    [parallel, null, null],
  ] as const)("%j arm %s is %j", (parent, index, label) => {
    expect(armLabelOf(parent, index)).toBe(label);
  });

  it("labels agree with the editor's slots", () => {
    for (const block of [parallel, tryCatch, router, split]) {
      expect(armsOf(block).map((_, index) => armLabelOf(block, index))).toEqual(armsOf(block).map((arm) => arm.label));
    }
  });
});

describe("armOfPath: which arm an editor path sits in", () => {
  const doc = { blocks: [step("first"), parallel, tryCatch, router, saga] };
  it.each([
    [["blocks", 0], null],
    [["blocks", 1, "branches", 1, 0], "branch 2"],
    [["blocks", 2, "try_block", 0], "try"],
    [["blocks", 2, "catch_block", 0], "catch"],
    [["blocks", 2, "finally_block", 0], "finally"],
    [["blocks", 3, "default", 0], "default"],
    [["blocks", 3, "routes", 0, "blocks", 0], "route 1: a == 1"],
    [["blocks", 4, "steps", 0, "action"], "step charge action"],
    [["blocks", 4, "steps", 0, "compensation"], "step charge compensation"],
  ] as const)("%j: %j", (path, label) => {
    expect(armOfPath(doc, [...path])).toBe(label);
  });
});
