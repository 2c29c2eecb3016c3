import { describe, expect, it } from "vitest";
import { buildFlow, INSERT_SIZE, insertPoint, whereOf } from "./flow.ts";

const doc = {
  blocks: [
    { type: "step", id: "start", handler: "noop" },
    { type: "parallel", id: "fan", branches: [[{ type: "step", id: "left", handler: "noop" }], []] },
    { type: "step", id: "end", handler: "noop" },
  ],
};

describe("whereOf", () => {
  it("names an insertion point by its neighbours, or an empty arm as the outline does", () => {
    expect(whereOf(doc, { list: ["blocks"], index: 1 })).toBe("before fan");
    expect(whereOf(doc, { list: ["blocks"], index: 3 })).toBe("after end");
    expect(whereOf(doc, { list: ["blocks", 1, "branches", 0], index: 1 })).toBe("after left");
    expect(whereOf(doc, { list: ["blocks", 1, "branches", 1], index: 0 })).toBe("into branch 2 of fan");
  });
});

describe("buildFlow", () => {
  it("gives the edges where a block can go a + (type insert) that says where, and marks the selected one", () => {
    const { edges } = buildFlow(doc, new Map(), { kind: "insert", list: ["blocks"], index: 1 });
    const inserts = edges.filter((edge) => edge.type === "insert").map((edge) => edge.data as { where: string; selected: boolean });
    expect(inserts).toContainEqual(expect.objectContaining({ where: "before fan", selected: true }));
    expect(inserts).toContainEqual(expect.objectContaining({ where: "before left", selected: false }));
    expect(inserts.filter((data) => data.selected)).toHaveLength(1);
  });
});

describe("insertPoint", () => {
  /** An arm label's box: one line of 0.72rem text at 1.4, bordered (`.seq-edge-label`); its width is generous. */
  const LABEL_HEIGHT = 18;
  const labelBox = (at: { x: number; y: number }, text: string) => ({ x: at.x - text.length * 4 - 8, y: at.y - LABEL_HEIGHT / 2, right: at.x + text.length * 4 + 8, bottom: at.y + LABEL_HEIGHT / 2 });
  const apart = (a: { x: number; y: number; right: number; bottom: number }, b: { x: number; y: number; right: number; bottom: number }) =>
    a.right <= b.x || b.right <= a.x || a.bottom <= b.y || b.bottom <= a.y;

  it("puts every + clear of every node and every arm label, for every kind of arm", () => {
    const step = (id: string) => ({ type: "step", id, handler: "noop" });
    const every = {
      blocks: [
        step("start"),
        { type: "parallel", id: "fan", branches: [[step("left")], [step("right"), step("right_2")], []] },
        { type: "try_catch", id: "guard", try_block: [step("attempt")], catch_block: [step("recover")], finally_block: [step("tidy")] },
        { type: "router", id: "route", routes: [{ condition: "data.vip", blocks: [step("vip")] }], default: [step("other")] },
        { type: "loop", id: "poll", condition: "true", body: [step("check")] },
        { type: "cancellation_scope", id: "scope", blocks: [step("pay")] },
        step("end"),
      ],
    };
    const { nodes, edges } = buildFlow(every, new Map(), null);
    const boxes = nodes
      .filter((node) => node.type !== "frame")
      .map((node) => ({ id: node.id, x: node.position.x, y: node.position.y, right: node.position.x + node.width!, bottom: node.position.y + node.height! }));
    const labels = edges.flatMap((edge) => (edge.data?.label && edge.data.labelAt ? [{ id: edge.data.label, ...labelBox(edge.data.labelAt, edge.data.label) }] : []));
    const pluses = edges.filter((edge) => edge.type === "insert");
    expect(pluses.length).toBeGreaterThan(20);
    for (const edge of pluses) {
      const at = insertPoint(edge.data!.kind, edge.data!.points);
      const plus = { x: at.x - INSERT_SIZE / 2, y: at.y - INSERT_SIZE / 2, right: at.x + INSERT_SIZE / 2, bottom: at.y + INSERT_SIZE / 2 };
      for (const other of [...boxes, ...labels]) expect(apart(plus, other), `the + of ${edge.id} lies on ${other.id}`).toBe(true);
    }
  });
});
