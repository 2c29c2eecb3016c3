import { describe, expect, it } from "vitest";
import { checkSequence } from "../../../../../../engine/sequence/validate.ts";
import {
  addBlock, addBranch, allBlocks, blockPathOf, commit, getAt, indentBlock, insertBlock, moveBlock, moveBlockTo, newBlock, BLOCK_TYPES,
  outdentBlock, redo, removeBlock, removeBranch, startHistory, undo, uniqueId, updateBlock, type SequenceDoc,
  addSagaStep, moveAfter, placeAfter, removeSagaStep, setSagaPart, setSagaStepId, type Path,
} from "./model.ts";

const base = (blocks: SequenceDoc["blocks"] = []): SequenceDoc => ({
  id: "0190f8a4-0000-7000-8000-000000000001",
  tenant_id: "t",
  namespace: "default",
  name: "s",
  version: 1,
  blocks,
  created_at: "2026-01-01T00:00:00.000Z",
});
const step = (id: string, handler = "log") => ({ type: "step", id, handler, params: null });
const ids = (doc: SequenceDoc) => allBlocks(doc).map(({ block }) => block.id);

describe("adding blocks", () => {
  it("appends to a list, inserts after a block and gives unique ids", () => {
    let { doc } = addBlock(base(), "step", { into: ["blocks"] });
    ({ doc } = addBlock(doc, "step", { into: ["blocks"] }));
    const added = addBlock(doc, "parallel", { after: ["blocks", 0] });
    expect(ids(added.doc)).toEqual(["step_1", "parallel_1", "step_2"]);
    expect(added.path).toEqual(["blocks", 1]);
    expect(uniqueId(added.doc, "step")).toBe("step_3");
  });

  it("nests into a composite's branch", () => {
    const { doc } = addBlock(base([newBlock("parallel", "p")]), "step", { into: ["blocks", 0, "branches", 1] });
    expect(getAt(doc, ["blocks", 0, "branches", 1, 0, "id"])).toBe("step_1");
    expect(getAt(doc, ["blocks", 0, "branches", 0])).toEqual([]);
  });

  it("adds into a null default/finally list", () => {
    const { doc } = addBlock(base([newBlock("try_catch", "t")]), "step", { into: ["blocks", 0, "finally_block"] });
    expect(getAt(doc, ["blocks", 0, "finally_block", 0, "id"])).toBe("step_1");
  });

  it("makes every block type with a shape the engine accepts", () => {
    for (const type of BLOCK_TYPES) {
      const check = checkSequence(base([newBlock(type, "b")]));
      expect(check.problems.filter((p) => p.code === "unprocessable"), type).toEqual([]);
    }
  });

  it("insertBlock clamps the index", () => {
    const doc = insertBlock(base([step("a")]), ["blocks"], step("b"), 99);
    expect(ids(doc)).toEqual(["a", "b"]);
  });

  it("does not mutate the original", () => {
    const original = base([step("a")]);
    const frozen = JSON.stringify(original);
    addBlock(original, "step", { after: ["blocks", 0] });
    updateBlock(original, ["blocks", 0], { handler: "noop" });
    removeBlock(original, ["blocks", 0]);
    expect(JSON.stringify(original)).toBe(frozen);
  });
});

describe("deleting, moving, nesting", () => {
  it("removes a block with its children", () => {
    const doc = base([step("a"), { ...newBlock("parallel", "p"), branches: [[step("x")], []] }, step("b")]);
    expect(ids(removeBlock(doc, ["blocks", 1]))).toEqual(["a", "b"]);
  });

  it("moves up and down within a list and stops at its ends", () => {
    const doc = base([step("a"), step("b"), step("c")]);
    const down = moveBlock(doc, ["blocks", 0], 1);
    expect(ids(down.doc)).toEqual(["b", "a", "c"]);
    expect(down.path).toEqual(["blocks", 1]);
    expect(moveBlock(doc, ["blocks", 0], -1).doc).toBe(doc);
    expect(moveBlock(doc, ["blocks", 2], 1).doc).toBe(doc);
  });

  it("moves a block into a branch of a later composite (indexes shift after removal)", () => {
    const doc = base([step("a"), newBlock("parallel", "p")]);
    const moved = moveBlockTo(doc, ["blocks", 0], ["blocks", 1, "branches", 0], 0);
    expect(getAt(moved.doc, ["blocks", 0, "id"])).toBe("p");
    expect(getAt(moved.doc, ["blocks", 0, "branches", 0, 0, "id"])).toBe("a");
    expect(moved.path).toEqual(["blocks", 0, "branches", 0, 0]);
  });

  it("moves within the same list counting the index before the move", () => {
    const doc = base([step("a"), step("b"), step("c")]);
    expect(ids(moveBlockTo(doc, ["blocks", 0], ["blocks"], 3).doc)).toEqual(["b", "c", "a"]);
    expect(ids(moveBlockTo(doc, ["blocks", 2], ["blocks"], 0).doc)).toEqual(["c", "a", "b"]);
  });

  it("refuses to move a composite into itself", () => {
    const doc = base([newBlock("loop", "l")]);
    expect(moveBlockTo(doc, ["blocks", 0], ["blocks", 0, "body"], 0).doc).toBe(doc);
  });

  it("indents into the composite above and outdents after it", () => {
    const doc = base([newBlock("loop", "l"), step("a")]);
    const indented = indentBlock(doc, ["blocks", 1]);
    expect(indented.path).toEqual(["blocks", 0, "body", 0]);
    expect(getAt(indented.doc, indented.path.concat("id"))).toBe("a");
    const outdented = outdentBlock(indented.doc, indented.path);
    expect(outdented.path).toEqual(["blocks", 1]);
    expect(outdented.doc).toEqual(doc);
    // Nothing to indent into / out of.
    expect(indentBlock(base([step("a"), step("b")]), ["blocks", 1]).path).toEqual(["blocks", 1]);
    expect(outdentBlock(doc, ["blocks", 1]).doc).toBe(doc);
  });
});

describe("fields and branches", () => {
  it("sets and removes fields", () => {
    const doc = updateBlock(base([step("a")]), ["blocks", 0], { timeout: 1000, params: undefined });
    expect(getAt(doc, ["blocks", 0])).toEqual({ type: "step", id: "a", handler: "log", timeout: 1000 });
  });

  it("adds and removes branches, routes and variants", () => {
    let doc = base([newBlock("parallel", "p"), newBlock("router", "r"), newBlock("a_b_split", "ab")]);
    doc = addBranch(addBranch(addBranch(doc, ["blocks", 0]), ["blocks", 1]), ["blocks", 2]);
    expect((getAt(doc, ["blocks", 0, "branches"]) as unknown[]).length).toBe(3);
    expect((getAt(doc, ["blocks", 1, "routes"]) as unknown[]).length).toBe(2);
    expect((getAt(doc, ["blocks", 2, "variants"]) as unknown[]).length).toBe(3);
    doc = removeBranch(doc, ["blocks", 1], 0);
    expect(getAt(doc, ["blocks", 1, "routes"])).toEqual([{ condition: "", blocks: [] }]);
  });
});

describe("problems pinned to blocks", () => {
  it("maps the validator's paths to the deepest block", () => {
    const doc = base([{ ...newBlock("parallel", "p"), branches: [[step("a")], [step("b", "")]] }, { ...newBlock("loop", "l"), condition: "" }]);
    const { problems } = checkSequence(doc);
    const pinned = problems.map((problem) => blockPathOf(doc, problem.path));
    expect(pinned).toContainEqual(["blocks", 0, "branches", 1, 0]);
    expect(pinned).toContainEqual(["blocks", 1]);
  });

  it("pins shape problems too, and sequence-level ones to nothing", () => {
    const doc = base([{ type: "step", id: "a" } as never]);
    const { problems } = checkSequence(doc);
    expect(problems[0]!.code).toBe("unprocessable");
    expect(blockPathOf(doc, problems[0]!.path)).toEqual(["blocks", 0]);
    expect(blockPathOf(base(), ["blocks"])).toBeNull();
    expect(blockPathOf(base(), ["name"])).toBeNull();
  });
});

describe("history", () => {
  it("undoes and redoes, and a new change drops the redo stack", () => {
    const a = base([step("a")]);
    const b = base([step("b")]);
    const c = base([step("c")]);
    let history = commit(commit(startHistory(a), b), c);
    history = undo(history);
    expect(history.present).toBe(b);
    history = undo(history);
    expect(history.present).toBe(a);
    expect(undo(history)).toBe(history);
    history = redo(history);
    expect(history.present).toBe(b);
    history = commit(history, a);
    expect(history.future).toEqual([]);
    expect(redo(history)).toBe(history);
    expect(commit(history, history.present)).toBe(history);
  });
});

describe("the flow graph", () => {
  it("draws blocks in execution order with labelled branches, empty-list and after-composite slots and pinned problems", async () => {
    const { buildFlow } = await import("./flow.ts");
    const doc = base([{ ...newBlock("parallel", "p"), branches: [[step("a")], []] }, step("z", "")]);
    const problems = new Map([[JSON.stringify(["blocks", 1]), ["block `z`: handler name must not be empty"]]]);
    const { nodes, edges } = buildFlow(doc, problems, { kind: "block", path: ["blocks", 0] });
    expect(nodes.map((n) => n.id)).toEqual([
      'start:["blocks"]',
      '["blocks",0]',
      '["blocks",0,"branches",0,0]',
      'slot:["blocks",0,"branches",1]',
      'join:["blocks",0]',
      'after:["blocks",0]',
      '["blocks",1]',
    ]);
    expect(edges.map((e) => [e.source, e.target, e.data?.label ?? null])).toEqual([
      ['["blocks",0]', '["blocks",0,"branches",0,0]', "branch 1"],
      ['["blocks",0,"branches",0,0]', 'join:["blocks",0]', null],
      ['["blocks",0]', 'slot:["blocks",0,"branches",1]', "branch 2"],
      ['slot:["blocks",0,"branches",1]', 'join:["blocks",0]', null],
      ['join:["blocks",0]', 'after:["blocks",0]', null],
      ['after:["blocks",0]', '["blocks",1]', null],
      // The "+" before the first block.
      ['start:["blocks"]', '["blocks",0]', null],
    ]);
    const byId = new Map(nodes.map((n) => [n.id, n]));
    expect(byId.get('["blocks",0]')!.data).toMatchObject({ selected: true });
    expect(byId.get('["blocks",1]')!.data).toMatchObject({ problems: ["block `z`: handler name must not be empty"] });
    // A block with a problem gets the room to show it.
    expect(byId.get('["blocks",1]')!.height).toBeGreaterThan(byId.get('["blocks",0]')!.height!);
    expect(byId.get('["blocks",1]')!.position.y).toBeGreaterThan(byId.get('after:["blocks",0]')!.position.y);
  });

  it("lists a saga's action under its saga, and draws no absent finally", async () => {
    const { buildFlow, listedPath } = await import("./flow.ts");
    expect(listedPath(["blocks", 0, "steps", 1, "action"])).toEqual(["blocks", 0]);
    expect(listedPath(["blocks", 2, "steps", 0, "compensation", "steps", 1, "action"])).toEqual(["blocks", 2]);
    expect(listedPath(["blocks", 0, "branches", 1, 0])).toEqual(["blocks", 0, "branches", 1, 0]);
    const { nodes } = buildFlow(base([{ ...newBlock("try_catch", "t"), try_block: [step("a")] }]), new Map(), null);
    expect(nodes.filter((n) => n.type === "slot").map((n) => n.data.kind === "slot" && n.data.label)).toEqual(["catch"]);
  });

  it("draws a cleanup tree on its own, from its own start", async () => {
    const { buildFlow } = await import("./flow.ts");
    const doc = { ...base([step("main")]), on_failure: [step("undo")] };
    const { nodes, edges } = buildFlow(doc, new Map(), null, "on_failure");
    expect(nodes.map((n) => n.id)).toEqual(['start:["on_failure"]', '["on_failure",0]']);
    expect(edges.map((e) => (e.type === "insert" ? e.data?.insert : null))).toEqual([{ list: ["on_failure"], index: 0 }]);
    expect(buildFlow({ ...doc, on_failure: undefined }, new Map(), null, "on_failure").nodes.map((n) => n.id)).toEqual(['slot:["on_failure"]']);
  });
});

describe("dropping on a block", () => {
  const tree = () => base([step("a"), { ...newBlock("parallel", "p"), branches: [[step("b")], [step("c")]] }, step("z")]);

  it("a palette block dropped on a block goes right after it, in that block's list", () => {
    const at = placeAfter(["blocks", 1, "branches", 0, 0]);
    expect(at).toEqual({ list: ["blocks", 1, "branches", 0], index: 1 });
    const { doc } = addBlock(tree(), "step", { into: at.list, index: at.index });
    expect(ids(doc)).toEqual(["a", "p", "b", "step_1", "c", "z"]);
    // On a composite: after the whole composite, not into it.
    expect(placeAfter(["blocks", 1])).toEqual({ list: ["blocks"], index: 2 });
    // On a saga's action or compensation: after the saga.
    expect(placeAfter(["blocks", 3, "steps", 0, "compensation"])).toEqual({ list: ["blocks"], index: 4 });
  });

  it("a block dragged onto another moves to right after it, across lists", () => {
    expect(ids(moveAfter(tree(), ["blocks", 0], ["blocks", 1, "branches", 1, 0]).doc)).toEqual(["p", "b", "c", "a", "z"]);
    const up = moveAfter(tree(), ["blocks", 2], ["blocks", 0]);
    expect(ids(up.doc)).toEqual(["a", "z", "p", "b", "c"]);
    expect(up.path).toEqual(["blocks", 1]);
    // Out of a branch, after the block that follows the parallel (indexes counted before the move).
    const out = moveAfter(tree(), ["blocks", 1, "branches", 0, 0], ["blocks", 2]);
    expect(ids(out.doc)).toEqual(["a", "p", "c", "z", "b"]);
    expect(getAt(out.doc, ["blocks", 1, "branches", 0])).toEqual([]);
  });

  it("refuses what moveBlockTo refuses: onto itself, into its own descendants, a saga part", () => {
    const doc = tree();
    expect(moveAfter(doc, ["blocks", 0], ["blocks", 0]).doc).toBe(doc);
    expect(moveAfter(doc, ["blocks", 1], ["blocks", 1, "branches", 0, 0]).doc).toBe(doc);
    const saga = base([{ type: "saga", id: "s", steps: [{ id: "one", action: step("x") }] }, step("y")]);
    expect(moveAfter(saga, ["blocks", 0, "steps", 0, "action"], ["blocks", 1]).doc).toBe(saga);
  });
});

describe("saga steps", () => {
  it("adds steps with unique ids, gives and takes compensations, retypes and removes", () => {
    let doc = base([newBlock("saga", "s")]);
    doc = addSagaStep(doc, ["blocks", 0]);
    doc = addSagaStep(doc, ["blocks", 0]);
    expect(getAt(doc, ["blocks", 0, "steps"])).toEqual([
      { id: "saga_step_1", action: { type: "step", id: "step_1", handler: "", params: null } },
      { id: "saga_step_2", action: { type: "step", id: "step_2", handler: "", params: null } },
    ]);
    doc = setSagaPart(doc, ["blocks", 0], 0, "compensation", "step");
    expect(getAt(doc, ["blocks", 0, "steps", 0, "compensation", "id"])).toBe("step_3");
    doc = setSagaPart(doc, ["blocks", 0], 1, "action", "sub_sequence");
    expect(getAt(doc, ["blocks", 0, "steps", 1, "action"])).toEqual({ type: "sub_sequence", id: "step_2", sequence_name: "", input: null });
    doc = setSagaStepId(doc, ["blocks", 0], 0, "charge");
    expect(ids(doc)).toEqual(["s", "step_1", "step_3", "step_2"]);
    // Deleting a compensation removes it alone; deleting an action removes its saga step.
    const noUndo = removeBlock(doc, ["blocks", 0, "steps", 0, "compensation"]);
    expect(getAt(noUndo, ["blocks", 0, "steps", 0])).toEqual({ id: "charge", action: getAt(doc, ["blocks", 0, "steps", 0, "action"]) });
    expect(getAt(removeBlock(doc, ["blocks", 0, "steps", 0, "action"]), ["blocks", 0, "steps", 0, "id"])).toBe("saga_step_2");
    expect(setSagaPart(doc, ["blocks", 0], 0, "compensation", null)).toEqual(noUndo);
    expect(getAt(removeSagaStep(doc, ["blocks", 0], 1), ["blocks", 0, "steps"])).toHaveLength(1);
  });

  it("adds a block picked while a saga part is selected after the saga", () => {
    const doc = base([{ type: "saga", id: "s", steps: [{ id: "one", action: step("x"), compensation: step("y") }] }, step("z")]);
    const added = addBlock(doc, "step", { after: ["blocks", 0, "steps", 0, "compensation"] });
    expect(added.path).toEqual(["blocks", 1]);
    expect(ids(added.doc)).toEqual(["s", "x", "y", "step_1", "z"]);
  });

  it("moves nothing that is a saga part", () => {
    const doc = base([{ type: "saga", id: "s", steps: [{ id: "one", action: step("x") }] }]);
    for (const op of [(d: SequenceDoc, p: Path) => moveBlock(d, p, 1), indentBlock, outdentBlock]) {
      expect(op(doc, ["blocks", 0, "steps", 0, "action"]).doc).toBe(doc);
    }
  });
});

describe("cleanup trees", () => {
  it("are added to, listed and counted apart from the main tree", () => {
    let { doc } = addBlock(base([step("step_1")]), "step", { into: ["on_failure"] });
    expect(getAt(doc, ["on_failure"])).toEqual([{ type: "step", id: "step_2", handler: "", params: null }]);
    ({ doc } = addBlock(doc, "step", { into: ["on_cancel"], index: 0 }));
    expect(allBlocks(doc, "on_failure").map(({ path }) => path)).toEqual([["on_failure", 0]]);
    expect(allBlocks(doc, "on_cancel").map(({ block }) => block.id)).toEqual(["step_3"]);
    expect(ids(doc)).toEqual(["step_1"]);
  });
});
