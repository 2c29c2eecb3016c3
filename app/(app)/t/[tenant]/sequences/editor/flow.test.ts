import { describe, expect, it } from "vitest";
import { buildFlow, whereOf } from "./flow.ts";

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
