// The execution-tree view (wire-format E.13): nodes for every block type with their parents and
// branch indexes, the state mapping from the cursor, stable ids, and the v1 cursor.
import { describe, expect, it } from "vitest";
import { Sequence, type SequenceInput } from "../../sequence/schema.ts";
import { executionNodeId, executionNodes, type ExecutionNode } from "./nodes.ts";
import type { NodeState } from "./state.ts";

const INSTANCE = { id: "0190f3a8-1c2d-7e4f-8a9b-0c1d2e3f4a5b", state: "running", createdAt: new Date(0), updatedAt: new Date(0) };
const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const step = (id: string) => ({ type: "step" as const, id, handler: "noop" });

function sequence(blocks: SequenceInput["blocks"]): Sequence {
  return Sequence.parse({
    id: "0190f3a8-0000-7000-8000-000000000001", tenant_id: "acme", namespace: "default", name: "s", version: 1,
    created_at: "2026-01-01T00:00:00Z", blocks,
  });
}

const cursor = (nodes: Record<string, NodeState>) => ({ v: 2, nodes });

/** block_id → [parent block_id, block_type, branch_index] for compact structural assertions. */
function shape(nodes: ExecutionNode[]) {
  const byId = new Map(nodes.map((n) => [n.id, n.block_id]));
  return nodes.map((n) => [n.block_id, n.parent_id === null ? null : byId.get(n.parent_id), n.block_type, n.branch_index]);
}

const stateOf = (nodes: ExecutionNode[], blockId: string) => nodes.find((n) => n.block_id === blockId)!.state;

// Every composite, each nested in the one before where that reads naturally.
const EVERYTHING = sequence([
  step("first"),
  { type: "parallel", id: "par", branches: [[step("p0a"), step("p0b")], [step("p1")]] },
  { type: "race", id: "race", branches: [[step("r0")], [step("r1")]] },
  { type: "loop", id: "loop", condition: "true", body: [step("l")] },
  { type: "for_each", id: "each", collection: "items", body: [step("e")] },
  { type: "router", id: "router", routes: [{ condition: "a", blocks: [step("ro0")] }, { condition: "b", blocks: [step("ro1")] }], default: [step("rd")] },
  { type: "try_catch", id: "tc", try_block: [step("t")], catch_block: [step("c")], finally_block: [step("f")] },
  { type: "ab_split", id: "ab", variants: [{ name: "x", weight: 1, blocks: [step("vx")] }, { name: "y", weight: 1, blocks: [step("vy")] }] },
  { type: "cancellation_scope", id: "scope", blocks: [step("sc")] },
  {
    type: "saga", id: "saga",
    steps: [{ id: "s0", action: step("a0"), compensation: step("u0") }, { id: "s1", action: step("a1") }, { id: "s2", action: step("a2"), compensation: step("u2") }],
  },
  { type: "sub_sequence", id: "sub", sequence_name: "child" },
]);

describe("executionNodes: structure", () => {
  it("has one node per block, depth-first in declaration order, with parent and branch_index per block type", () => {
    expect(shape(executionNodes(EVERYTHING, null, INSTANCE))).toEqual([
      ["first", null, "step", null],
      ["par", null, "parallel", null],
      ["p0a", "par", "step", 0],
      ["p0b", "par", "step", 0],
      ["p1", "par", "step", 1],
      ["race", null, "race", null],
      ["r0", "race", "step", 0],
      ["r1", "race", "step", 1],
      ["loop", null, "loop", null],
      ["l", "loop", "step", null],
      ["each", null, "for_each", null],
      ["e", "each", "step", null],
      ["router", null, "router", null],
      ["ro0", "router", "step", 0],
      ["ro1", "router", "step", 1],
      ["rd", "router", "step", 2], // default = routes.length
      ["tc", null, "try_catch", null],
      ["t", "tc", "step", 0],
      ["c", "tc", "step", 1],
      ["f", "tc", "step", 2],
      ["ab", null, "a_b_split", null], // `ab_split` reads as a_b_split
      ["vx", "ab", "step", 0],
      ["vy", "ab", "step", 1],
      ["scope", null, "cancellation_scope", null],
      ["sc", "scope", "step", null],
      ["saga", null, "saga", null],
      ["a0", "saga", "step", 0], // step i's action 2i, its compensation 2i+1
      ["u0", "saga", "step", 1],
      ["a1", "saga", "step", 2],
      ["a2", "saga", "step", 4],
      ["u2", "saga", "step", 5],
      ["sub", null, "sub_sequence", null],
    ]);
  });

  it("keeps deep nesting: a parent always comes before its children, whose branch_index is their own arm's", () => {
    const seq = sequence([
      {
        type: "try_catch", id: "outer",
        try_block: [{ type: "parallel", id: "p", branches: [[step("x")], [{ type: "loop", id: "lp", condition: "true", body: [step("y")] }]] }],
        catch_block: [step("c")],
      },
    ]);
    const nodes = executionNodes(seq, null, INSTANCE);
    expect(shape(nodes)).toEqual([
      ["outer", null, "try_catch", null],
      ["p", "outer", "parallel", 0],
      ["x", "p", "step", 0],
      ["lp", "p", "loop", 1],
      ["y", "lp", "step", null],
      ["c", "outer", "step", 1],
    ]);
    // No finally arm: no branch 2.
    expect(nodes.some((n) => n.branch_index === 2)).toBe(false);
  });

  it("omits the router's default and the try_catch finally when absent; steps and sub_sequences have no children", () => {
    const seq = sequence([
      { type: "router", id: "r", routes: [{ condition: "a", blocks: [step("only")] }] },
      { type: "try_catch", id: "tc", try_block: [step("t")], catch_block: [] },
    ]);
    expect(shape(executionNodes(seq, null, INSTANCE))).toEqual([
      ["r", null, "router", null],
      ["only", "r", "step", 0],
      ["tc", null, "try_catch", null],
      ["t", "tc", "step", 0],
    ]);
  });

  it("gives every node the wire fields, the instance id and null completed_at", () => {
    const [node] = executionNodes(sequence([step("one")]), null, INSTANCE);
    expect(node).toEqual({
      id: expect.stringMatching(UUID_V8),
      instance_id: INSTANCE.id,
      block_id: "one",
      parent_id: null,
      block_type: "step",
      branch_index: null,
      state: "pending",
      started_at: null,
      completed_at: null,
    });
  });

  it("is empty for an empty sequence", () => {
    expect(executionNodes({ blocks: [] }, null, INSTANCE)).toEqual([]);
  });
});

describe("executionNodes: ids", () => {
  it("are stable across calls and cursors, distinct per block and per instance", () => {
    const a = executionNodes(EVERYTHING, null, INSTANCE);
    const b = executionNodes(EVERYTHING, cursor({ first: { status: "completed" }, par: { status: "active" } }), { ...INSTANCE, state: "waiting" });
    expect(b.map((n) => n.id)).toEqual(a.map((n) => n.id));
    expect(new Set(a.map((n) => n.id)).size).toBe(a.length);
    for (const node of a) expect(node.id).toMatch(UUID_V8);

    const other = executionNodes(EVERYTHING, null, { ...INSTANCE, id: "0190f3a8-1c2d-7e4f-8a9b-0c1d2e3f4a5c" });
    expect(other.map((n) => n.id).filter((id) => a.some((n) => n.id === id))).toEqual([]);
  });

  it("do not depend on the case of the instance id, and are what executionNodeId says", () => {
    const lower = executionNodes(EVERYTHING, null, INSTANCE);
    const upper = executionNodes(EVERYTHING, null, { ...INSTANCE, id: INSTANCE.id.toUpperCase() });
    expect(upper).toEqual(lower);
    expect(lower[0]!.id).toBe(executionNodeId(INSTANCE.id, "first"));
    // Pinned: a change of derivation would change every id clients may have kept.
    expect(executionNodeId("00000000-0000-0000-0000-000000000000", "a")).toBe("0e19ec7b-5ee5-81ee-8eae-aee22b6ea470");
    expect(executionNodeId(INSTANCE.id, "a")).not.toBe(executionNodeId(INSTANCE.id, "b"));
  });

  it("chain parents by id", () => {
    const nodes = executionNodes(EVERYTHING, null, INSTANCE);
    const par = nodes.find((n) => n.block_id === "par")!;
    expect(nodes.filter((n) => n.parent_id === par.id).map((n) => n.block_id)).toEqual(["p0a", "p0b", "p1"]);
  });
});

describe("executionNodes: states", () => {
  const seq = sequence([
    step("none"),
    step("empty"),
    step("active"),
    step("worker"),
    step("done"),
    step("failed"),
    step("cancelled"),
    step("skipped"),
    step("cancel-requested"),
    { type: "parallel", id: "par", branches: [[step("inner")]] },
    { type: "sub_sequence", id: "sub-starting", sequence_name: "child" },
    { type: "sub_sequence", id: "sub-child", sequence_name: "child" },
  ]);
  const nodes = cursor({
    empty: {},
    active: { status: "active", attempt: 0, reachedAt: "2026-03-01T10:00:00.000Z" },
    worker: { status: "active", attempt: 1, reachedAt: "2026-03-01T10:00:00Z", startedAt: "2026-03-01T10:00:05Z", taskId: "0190f3a8-0000-7000-8000-0000000000aa" },
    done: { status: "completed", reachedAt: "2026-03-01T09:00:00+01:00", startedAt: "2026-03-01T08:00:01Z" },
    failed: { status: "failed", failure: { message: "boom", retryable: false } },
    cancelled: { status: "cancelled" },
    skipped: { status: "skipped" },
    "cancel-requested": { cancelRequested: true },
    par: { status: "active" },
    inner: { status: "active", reachedAt: "2026-03-01T10:00:00Z" },
    "sub-starting": { status: "active", reachedAt: "2026-03-01T11:00:00Z" },
    "sub-child": { status: "active", reachedAt: "2026-03-01T11:00:00Z", childId: "0190f3a8-0000-7000-8000-0000000000bb" },
  });

  it("maps each cursor status; a step handed to a worker, or a sub_sequence to its child, waits", () => {
    const view = executionNodes(seq, nodes, INSTANCE);
    expect(Object.fromEntries(view.map((n) => [n.block_id, n.state]))).toEqual({
      none: "pending",
      empty: "pending",
      active: "running",
      worker: "waiting",
      done: "completed",
      failed: "failed",
      cancelled: "cancelled",
      skipped: "skipped",
      "cancel-requested": "pending",
      par: "running",
      inner: "running",
      "sub-starting": "running",
      "sub-child": "waiting",
    });
  });

  it("reads every active block as waiting while the instance waits; settled ones keep their state", () => {
    const view = executionNodes(seq, nodes, { ...INSTANCE, state: "waiting" });
    expect(["active", "worker", "par", "inner"].map((id) => stateOf(view, id))).toEqual(["waiting", "waiting", "waiting", "waiting"]);
    expect(["none", "done", "failed", "skipped"].map((id) => stateOf(view, id))).toEqual(["pending", "completed", "failed", "skipped"]);
  });

  it("takes started_at from when a leaf was reached (else first ran), in UTC; composites have none", () => {
    const view = executionNodes(seq, nodes, INSTANCE);
    const at = (id: string) => view.find((n) => n.block_id === id)!.started_at;
    expect(at("active")).toBe("2026-03-01T10:00:00.000Z");
    expect(at("worker")).toBe("2026-03-01T10:00:00.000Z");
    expect(at("done")).toBe("2026-03-01T08:00:00.000Z");
    expect(at("none")).toBeNull();
    expect(at("failed")).toBeNull();
    expect(at("par")).toBeNull();
    expect(at("sub-child")).toBe("2026-03-01T11:00:00.000Z");
    expect(view.every((n) => n.completed_at === null)).toBe(true);

    const onlyStarted = executionNodes(sequence([step("s")]), cursor({ s: { status: "active", startedAt: "2026-03-01T10:00:05Z" } }), INSTANCE);
    expect(onlyStarted[0]!.started_at).toBe("2026-03-01T10:00:05.000Z");
  });

  it("reads an unreadable cursor, or parts of one, as not started", () => {
    const one = sequence([step("a"), step("b")]);
    for (const bad of [null, undefined, "x", 42, [], { v: 2 }, { v: 2, nodes: "x" }, { v: 7 }]) {
      expect(executionNodes(one, bad, INSTANCE).map((n) => n.state), JSON.stringify(bad)).toEqual(["pending", "pending"]);
    }
    const partly = executionNodes(one, cursor({ a: "x" as unknown as NodeState, b: { status: "completed", reachedAt: "not a date" } }), INSTANCE);
    expect(partly.map((n) => [n.state, n.started_at])).toEqual([["pending", null], ["completed", null]]);
    // A block id that names an Object.prototype member is still just a block id.
    expect(executionNodes(sequence([step("constructor")]), cursor({}), INSTANCE)[0]!.state).toBe("pending");
  });

  it("shows a composite's arms as the cursor has them: the route taken runs, the others read pending", () => {
    const view = executionNodes(
      EVERYTHING,
      cursor({
        first: { status: "completed" },
        par: { status: "completed" }, p0a: { status: "completed" }, p0b: { status: "completed" }, p1: { status: "completed" },
        race: { status: "completed" }, r0: { status: "completed" }, r1: { status: "cancelled" },
        loop: { status: "completed", iteration: 3 },
        each: { status: "completed" },
        router: { status: "active", route: 1 }, ro1: { status: "active", reachedAt: "2026-03-01T10:00:00Z" },
      }),
      INSTANCE,
    );
    expect(["par", "p1", "r0", "r1", "loop", "l", "router", "ro0", "ro1", "rd", "tc"].map((id) => stateOf(view, id))).toEqual([
      "completed", "completed", "completed", "cancelled", "completed", "pending", "running", "pending", "running", "pending", "pending",
    ]);
  });
});

describe("executionNodes: v1 cursor", () => {
  it("converts the flat cursor: blocks before the index completed, the one at it running, the rest pending", () => {
    const seq = sequence([step("a"), step("b"), step("c")]);
    const view = executionNodes(seq, { v: 1, index: 1, attempt: 2, reachedAt: "2026-02-01T00:00:00Z", startedAt: "2026-02-01T00:00:01Z" }, INSTANCE);
    expect(view.map((n) => [n.block_id, n.state, n.started_at])).toEqual([
      ["a", "completed", null],
      ["b", "running", "2026-02-01T00:00:00.000Z"],
      ["c", "pending", null],
    ]);
  });

  it("past the last block, everything completed", () => {
    const seq = sequence([step("a"), step("b")]);
    const view = executionNodes(seq, { v: 1, index: 2, attempt: 0, reachedAt: "2026-02-01T00:00:00Z", startedAt: null }, INSTANCE);
    expect(view.map((n) => n.state)).toEqual(["completed", "completed"]);
  });
});
