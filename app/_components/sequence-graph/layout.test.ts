import { describe, expect, it } from "vitest";
import { layoutBlocks, type Layout, type LayoutNode } from "./layout.ts";

const step = (id: string) => ({ type: "step", id, handler: "log", params: null });
const parallel = (id: string, ...branches: unknown[][]) => ({ type: "parallel", id, branches });
const tryCatch = (id: string, tryBlock: unknown[], catchBlock: unknown[], finallyBlock: unknown[] | null = null) => ({
  type: "try_catch", id, try_block: tryBlock, catch_block: catchBlock, finally_block: finallyBlock,
});

/** The sample of issue 18: a step, a two-branch parallel, a try_catch without finally, a step. */
const sample = [
  step("start"),
  parallel("fan", [step("left")], [step("right")]),
  tryCatch("guard", [step("attempt")], [step("recover")]),
  step("end"),
];

const blockNode = (layout: Layout, id: string) => {
  const node = layout.nodes.find((n) => n.kind === "block" && n.block.id === id);
  if (!node) throw new Error(`no node for ${id}`);
  return node;
};
const joinOf = (layout: Layout, id: string) => {
  const node = layout.nodes.find((n) => n.kind === "join" && n.block.id === id);
  if (!node) throw new Error(`no join for ${id}`);
  return node;
};
const bottom = (node: LayoutNode) => node.y + node.height;
const right = (node: LayoutNode) => node.x + node.width;
const centerX = (node: LayoutNode) => node.x + node.width / 2;
const armLabels = (layout: Layout, of: string) =>
  layout.edges.filter((e) => e.kind === "arm" && e.source === blockNode(layout, of).id).sort((a, b) => a.labelAt!.x - b.labelAt!.x).map((e) => e.label);

/** No two nodes overlap (frames hold what is inside them, so they are left out). */
function expectNoOverlap(layout: Layout) {
  const boxes = layout.nodes.filter((n) => n.kind !== "frame");
  for (const a of boxes)
    for (const b of boxes) {
      if (a === b) continue;
      const apart = right(a) <= b.x || right(b) <= a.x || bottom(a) <= b.y || bottom(b) <= a.y;
      expect(apart, `${a.id} overlaps ${b.id}`).toBe(true);
    }
}

describe("the execution-order layout", () => {
  const layout = layoutBlocks(sample);

  it("puts each top-level block below the previous one, and after a composite below its join", () => {
    const [start, fan, guard, end] = ["start", "fan", "guard", "end"].map((id) => blockNode(layout, id));
    expect(fan!.y).toBeGreaterThan(bottom(start!));
    expect(guard!.y).toBeGreaterThan(bottom(joinOf(layout, "fan")));
    expect(end!.y).toBeGreaterThan(bottom(joinOf(layout, "guard")));
    // All on one spine.
    for (const node of [fan!, guard!, end!]) expect(centerX(node)).toBe(centerX(start!));
  });

  it("puts the try_catch below the parallel's branches, not beside them", () => {
    const guard = blockNode(layout, "guard");
    for (const id of ["left", "right"]) expect(guard.y).toBeGreaterThan(bottom(blockNode(layout, id)));
    // The parallel's fork has exactly its two branches: the try_catch is not a third.
    const fromFork = layout.edges.filter((e) => e.source === blockNode(layout, "fan").id);
    expect(fromFork.map((e) => e.kind)).toEqual(["arm", "arm"]);
    // The try_catch is entered from the parallel's join.
    expect(layout.edges).toContainEqual(expect.objectContaining({ kind: "next", source: joinOf(layout, "fan").id, target: guard.id }));
  });

  it("lays branches out left to right in order, each labelled", () => {
    expect(right(blockNode(layout, "left"))).toBeLessThan(blockNode(layout, "right").x);
    expect(armLabels(layout, "fan")).toEqual(["branch 1", "branch 2"]);
    // Both branches start on the same row, below the fork, and merge into the join.
    expect(blockNode(layout, "left").y).toBe(blockNode(layout, "right").y);
    const join = joinOf(layout, "fan");
    expect(layout.edges.filter((e) => e.kind === "merge" && e.target === join.id).map((e) => e.source)).toEqual([
      blockNode(layout, "left").id,
      blockNode(layout, "right").id,
    ]);
  });

  it("orders try left of catch, and draws no finally when there is none", () => {
    expect(right(blockNode(layout, "attempt"))).toBeLessThan(blockNode(layout, "recover").x);
    expect(armLabels(layout, "guard")).toEqual(["try", "catch"]);
    expect(layout.nodes.some((n) => n.kind === "slot")).toBe(false);
    const editable = layoutBlocks(sample, { editable: true });
    expect(editable.nodes.filter((n) => n.kind === "slot")).toEqual([]);
    expect(editable.edges.some((e) => e.label === "finally")).toBe(false);
  });

  it("draws try, catch, finally in that order when there is a finally; an empty one as one slot", () => {
    const withFinally = layoutBlocks([tryCatch("t", [step("a")], [step("b")], [step("c")])]);
    const [a, b, c] = ["a", "b", "c"].map((id) => blockNode(withFinally, id));
    expect(right(a!)).toBeLessThan(b!.x);
    expect(right(b!)).toBeLessThan(c!.x);
    expect(armLabels(withFinally, "t")).toEqual(["try", "catch", "finally"]);
    const emptyFinally = layoutBlocks([tryCatch("t", [step("a")], [], [])], { editable: true });
    expect(emptyFinally.nodes.filter((n) => n.kind === "slot").map((n) => n.kind === "slot" && n.label)).toEqual(["catch", "finally"]);
  });

  it("keeps a nested parallel inside its branch's column", () => {
    const nested = layoutBlocks([parallel("outer", [parallel("inner", [step("i1")], [step("i2")]), step("after_inner")], [step("other")]), step("z")]);
    const other = blockNode(nested, "other");
    const columnRight = Math.max(...["inner", "i1", "i2", "after_inner"].map((id) => right(blockNode(nested, id))), right(joinOf(nested, "inner")));
    expect(columnRight).toBeLessThan(other.x);
    expect(right(blockNode(nested, "i1"))).toBeLessThan(blockNode(nested, "i2").x);
    // Inside the branch the next block is below the inner join; after the outer join comes z.
    expect(blockNode(nested, "after_inner").y).toBeGreaterThan(bottom(joinOf(nested, "inner")));
    expect(joinOf(nested, "outer").y).toBeGreaterThan(bottom(blockNode(nested, "after_inner")));
    expect(blockNode(nested, "z").y).toBeGreaterThan(bottom(joinOf(nested, "outer")));
    expectNoOverlap(nested);
  });

  it("orders a router's routes as written, the default last", () => {
    const router = {
      type: "router",
      id: "r",
      routes: [
        { condition: "x > 1", blocks: [step("one")] },
        { condition: "x > 0", blocks: [step("two")] },
      ],
      default: [step("fallback")],
    };
    const routed = layoutBlocks([router]);
    const xs = ["one", "two", "fallback"].map((id) => blockNode(routed, id).x);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(xs).size).toBe(3);
    expect(armLabels(routed, "r")).toEqual(["route 1: x > 1", "route 2: x > 0", "default"]);
    // No default: no default arm.
    expect(armLabels(layoutBlocks([{ ...router, default: null }]), "r")).toEqual(["route 1: x > 1", "route 2: x > 0"]);
  });

  it("runs a race of three left to right, an empty branch as a labelled line in its place", () => {
    const race = layoutBlocks([{ type: "race", id: "r", branches: [[step("a")], [], [step("c")]] }]);
    expect(armLabels(race, "r")).toEqual(["branch 1", "branch 2", "branch 3"]);
    const empty = race.edges.find((e) => e.label === "branch 2")!;
    expect(empty.target).toBe(joinOf(race, "r").id);
    expect(empty.labelAt!.x).toBeGreaterThan(right(blockNode(race, "a")));
    expect(empty.labelAt!.x).toBeLessThan(blockNode(race, "c").x);
  });

  it("draws a loop as a frame holding its body, with a way back from its join to its head", () => {
    const body = tryCatch("tc", [step("a")], [step("b")]);
    const looped = layoutBlocks([{ type: "for_each", id: "each", collection: "items", item_var: "item", body: [body] }, step("z")]);
    const frame = looped.nodes.find((n) => n.kind === "frame")!;
    const each = blockNode(looped, "each");
    for (const node of looped.nodes.filter((n) => n.kind !== "frame" && !(n.kind === "block" && n.block.id === "z"))) {
      expect(node.x).toBeGreaterThanOrEqual(frame.x);
      expect(right(node)).toBeLessThanOrEqual(right(frame));
      expect(node.y).toBeGreaterThanOrEqual(frame.y);
      expect(bottom(node)).toBeLessThanOrEqual(bottom(frame));
    }
    expect(blockNode(looped, "tc").y).toBeGreaterThan(bottom(each));
    expect(right(blockNode(looped, "a"))).toBeLessThan(blockNode(looped, "b").x);
    const back = looped.edges.find((e) => e.kind === "loop")!;
    expect([back.source, back.target]).toEqual([joinOf(looped, "each").id, each.id]);
    expect(Math.max(...back.points.map((p) => p.x))).toBeGreaterThan(Math.max(right(blockNode(looped, "b")), right(each)));
    expect(blockNode(looped, "z").y).toBeGreaterThan(bottom(frame));
    expectNoOverlap(looped);
  });

  it("draws a saga's actions in order with each compensation to its right", () => {
    const saga = {
      type: "saga",
      id: "s",
      steps: [
        { id: "book", action: step("reserve"), compensation: step("release") },
        { id: "pay", action: step("charge") },
      ],
    };
    const drawn = layoutBlocks([saga]);
    const [reserve, release, charge] = ["reserve", "release", "charge"].map((id) => blockNode(drawn, id));
    expect(charge!.y).toBeGreaterThan(bottom(reserve!));
    expect(release!.x).toBeGreaterThan(right(reserve!));
    expect(release!.y).toBe(reserve!.y);
    expect(drawn.edges.find((e) => e.kind === "compensation")).toMatchObject({ source: reserve!.id, target: release!.id, label: "compensation" });
    expect(drawn.edges.filter((e) => e.kind === "next" && e.label).map((e) => e.label)).toEqual(["book", "pay"]);
    expectNoOverlap(drawn);
  });

  it("in the editor, adds a slot after each composite, below its join, and a slot for each empty list", () => {
    const editable = layoutBlocks([parallel("p", [step("a")], []), step("z")], { editable: true });
    const after = editable.nodes.find((n) => n.kind === "after")!;
    expect(after.y).toBeGreaterThan(bottom(joinOf(editable, "p")));
    expect(blockNode(editable, "z").y).toBeGreaterThan(bottom(after));
    expect(editable.nodes.filter((n) => n.kind === "slot").map((n) => n.kind === "slot" && n.list)).toEqual([["blocks", 0, "branches", 1]]);
    expect(layoutBlocks([], { editable: true }).nodes.map((n) => n.kind)).toEqual(["slot"]);
    expectNoOverlap(editable);
  });

  it("handles every block type, nested deep, without overlaps", () => {
    let inner: unknown = step("leaf");
    for (let depth = 0; depth < 12; depth++) {
      inner = depth % 3 === 0
        ? parallel(`p${depth}`, [inner as never], [step(`s${depth}`)])
        : depth % 3 === 1
          ? { type: "loop", id: `l${depth}`, condition: "true", body: [inner] }
          : { type: "a_b_split", id: `ab${depth}`, variants: [{ name: "a", weight: 1, blocks: [inner] }, { name: "b", weight: 1, blocks: [] }] };
    }
    const deep = layoutBlocks([
      inner,
      { type: "cancellation_scope", id: "scope", blocks: [{ type: "sub_sequence", id: "child", sequence_name: "x", input: null }] },
    ]);
    expect(deep.nodes.filter((n) => n.kind === "block")).toHaveLength(12 + 4 + 1 + 2);
    expectNoOverlap(deep);
    expect(blockNode(deep, "scope").y).toBeGreaterThan(bottom(joinOf(deep, "p9")));
  });
});

describe("where a block added on an edge goes (editable layouts)", () => {
  /** Each edge with an insertion point as "source -> target: list@index", block ids for nodes. */
  const inserts = (layout: Layout) => {
    const name = (id: string) => {
      const node = layout.nodes.find((n) => n.id === id)!;
      return node.kind === "block" ? node.block.id : `${node.kind}:${"block" in node ? node.block.id : node.label}`;
    };
    return layout.edges.filter((e) => e.insert).map((e) => `${name(e.source)} -> ${name(e.target)}: ${e.insert!.list.join(".")}@${e.insert!.index}`).sort();
  };

  it("between blocks of a list, at the head and the end of each arm, and after a composite's join", () => {
    expect(inserts(layoutBlocks(sample, { editable: true }))).toEqual([
      "after:fan -> guard: blocks@2",
      "after:guard -> end: blocks@3",
      "attempt -> join:guard: blocks.2.try_block@1",
      "fan -> left: blocks.1.branches.0@0",
      "fan -> right: blocks.1.branches.1@0",
      "guard -> attempt: blocks.2.try_block@0",
      "guard -> recover: blocks.2.catch_block@0",
      "left -> join:fan: blocks.1.branches.0@1",
      "recover -> join:guard: blocks.2.catch_block@1",
      "right -> join:fan: blocks.1.branches.1@1",
      "start -> fan: blocks@1",
      "start:blocks -> start: blocks@0",
    ]);
  });

  it("before the first block of every list: the tree (from its start), each arm, each body", () => {
    const tree = [
      parallel("fan", [step("left")], [tryCatch("guard", [step("attempt")], [step("recover")], [step("tidy")])]),
      { type: "router", id: "pick", routes: [{ condition: "x", blocks: [step("r1")] }], default: [step("d1")] },
      { type: "cancellation_scope", id: "scope", blocks: [step("s1")] },
      { type: "a_b_split", id: "ab", variants: [{ name: "a", weight: 1, blocks: [step("va")] }, { name: "b", weight: 1, blocks: [step("vb")] }] },
      { type: "loop", id: "again", condition: "true", body: [step("l1")] },
    ];
    const layout = layoutBlocks(tree, { editable: true });
    const heads = new Set(layout.edges.filter((e) => e.insert?.index === 0).map((e) => e.insert!.list.join(".")));
    expect([...heads].sort()).toEqual([
      "blocks",
      "blocks.0.branches.0",
      "blocks.0.branches.1",
      "blocks.0.branches.1.0.catch_block",
      "blocks.0.branches.1.0.finally_block",
      "blocks.0.branches.1.0.try_block",
      "blocks.1.default",
      "blocks.1.routes.0.blocks",
      "blocks.2.blocks",
      "blocks.3.variants.0.blocks",
      "blocks.3.variants.1.blocks",
      "blocks.4.body",
    ]);
    // The start sits above the first block, on its spine.
    const start = layout.nodes.find((n) => n.kind === "start")!;
    expect(blockNode(layout, "fan").y).toBeGreaterThan(bottom(start));
    expect(centerX(start)).toBe(centerX(blockNode(layout, "fan")));
    expectNoOverlap(layout);
  });

  it("at both ends of a loop's body", () => {
    const loop = { type: "for_each", id: "each", collection: "{{ context.data.xs }}", body: [step("inner")] };
    expect(inserts(layoutBlocks([loop], { editable: true }))).toEqual([
      "each -> inner: blocks.0.body@0", "inner -> join:each: blocks.0.body@1", "start:blocks -> each: blocks@0",
    ]);
  });

  it("nowhere in a read-only layout", () => {
    expect(layoutBlocks(sample).edges.filter((e) => e.insert)).toEqual([]);
  });
});
