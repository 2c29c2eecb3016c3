// The editor's block tree as @xyflow/react nodes and edges, placed by the shared execution-order
// layout (app/_components/sequence-graph/layout.ts): blocks, their slots (empty lists and the
// place after each composite), joins and frames, with selection and validation problems.
import type { Node } from "@xyflow/react";
import { armOfPath } from "../../../../../_components/sequence-graph/arms.ts";
import type { EdgeKind, Insert, Point } from "../../../../../_components/sequence-graph/layout.ts";
import type { InsertEdge } from "./insert-edge";
import { flowEdges, geometry, sharedNode, type FrameNodeData, type JoinNodeData, type RouteEdge } from "../../../../../_components/sequence-graph/flow-parts";
import { layoutBlocks, NODE_HEIGHT } from "../../../../../_components/sequence-graph/layout.ts";
import { getAt, isBlock, isSagaPart, pathKey, type JsonBlock, type Path, type SequenceDoc, type Tree } from "./model.ts";

export { isSagaPart, listedPath } from "./model.ts";

/** A block showing a validation message gets the room for two lines of it. */
const PROBLEM_HEIGHT = 96;

export type BlockNodeData = { kind: "block"; block: JsonBlock; path: Path; composite: boolean; problems: string[]; selected: boolean };
export type SlotNodeData = { kind: "slot"; list: Path; label: string; selected: boolean };
export type AfterNodeData = { kind: "after"; path: Path; blockId: string; selected: boolean };
export type StartNodeData = { kind: "start"; label: string };
export type FlowNode =
  | Node<BlockNodeData, "block">
  | Node<SlotNodeData, "slot">
  | Node<AfterNodeData, "after">
  | Node<StartNodeData, "start">
  | Node<JoinNodeData, "join">
  | Node<FrameNodeData, "frame">;

/** What is selected: a block, an empty list (add into it), the place after a composite, or a "+" on an edge. */
export type Selection =
  | { kind: "block"; path: Path }
  | { kind: "slot"; list: Path }
  | { kind: "after"; path: Path }
  | ({ kind: "insert" } & Insert)
  | null;

export function selectionKey(selection: Selection): string | null {
  if (!selection) return null;
  if (selection.kind === "slot") return `slot:${pathKey(selection.list)}`;
  if (selection.kind === "after") return `after:${pathKey(selection.path)}`;
  if (selection.kind === "insert") return `insert:${pathKey(selection.list)}@${selection.index}`;
  return pathKey(selection.path);
}

/** Where an insertion point is, in words: "before step_2", "after step_1", "into branch 1 of parallel_1". */
export function whereOf(doc: SequenceDoc, insert: Insert): string {
  const list = getAt(doc, insert.list);
  const items = Array.isArray(list) ? list : [];
  const [before, after] = [items[insert.index], items[insert.index - 1]];
  if (isBlock(before)) return `before ${before.id}`;
  if (isBlock(after)) return `after ${after.id}`;
  // An empty arm: named as the outline names it ("into branch 2 of parallel_1").
  const arm = armOfPath(doc, [...insert.list, 0]);
  const owner = [...Array(insert.list.length).keys()].map((length) => getAt(doc, insert.list.slice(0, insert.list.length - length))).find(isBlock);
  return arm && owner ? `into ${arm} of ${owner.id}` : "here";
}

/** The "+" button's diameter (`.seq-insert` in app/globals.css). */
export const INSERT_SIZE = 20;
/** Between an arm's "+" and the arm's first block. */
const INSERT_CLEARANCE = 3;

/**
 * Where an edge's "+" is centred: into an arm, just above the arm's first block (below the arm's
 * label); out of an arm, mid-way down its first segment; elsewhere mid-way along the last segment.
 */
export function insertPoint(kind: EdgeKind, points: readonly Point[]): Point {
  const end = points[points.length - 1]!;
  if (kind === "arm") return { x: end.x, y: end.y - INSERT_SIZE / 2 - INSERT_CLEARANCE };
  const [a, b] = kind === "merge" ? [points[0]!, points[1] ?? points[0]!] : [points[points.length - 2] ?? end, end];
  return { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
}

/** The nodes and edges of one tree of `doc` (the main one unless a cleanup tree is asked for). */
export function buildFlow(
  doc: SequenceDoc,
  problems: ReadonlyMap<string, string[]>,
  selection: Selection,
  tree: Tree = "blocks",
): { nodes: FlowNode[]; edges: (RouteEdge | InsertEdge)[] } {
  const options = { editable: true, heightOf: (_: JsonBlock, path: Path) => (problems.get(pathKey(path))?.length ? PROBLEM_HEIGHT : NODE_HEIGHT) };
  const layout = layoutBlocks(doc[tree], options, [tree]);
  const selected = selectionKey(selection);
  const nodes = layout.nodes.map((node): FlowNode => {
    switch (node.kind) {
      case "block": {
        const data: BlockNodeData = { kind: "block", block: node.block, path: node.path, composite: node.composite, problems: problems.get(node.id) ?? [], selected: selected === node.id };
        return { id: node.id, type: "block", ...geometry(node), draggable: !isSagaPart(node.path), data };
      }
      case "slot":
        return { id: node.id, type: "slot", ...geometry(node), draggable: false, data: { kind: "slot", list: node.list, label: node.label, selected: selected === node.id } };
      case "after":
        return { id: node.id, type: "after", ...geometry(node), draggable: false, data: { kind: "after", path: node.path, blockId: node.block.id, selected: selected === node.id } };
      case "start":
        return { id: node.id, type: "start", ...geometry(node), draggable: false, selectable: false, data: { kind: "start", label: node.label } };
      default:
        return sharedNode(node);
    }
  });
  // Edges where a block can go carry a "+" (insert-edge.tsx).
  const edges = flowEdges(layout).map((edge, index): RouteEdge | InsertEdge => {
    const insert = layout.edges[index]!.insert;
    if (!insert || !edge.data) return edge;
    const data = { ...edge.data, insert, where: whereOf(doc, insert), selected: selected === selectionKey({ kind: "insert", ...insert }) };
    return { ...edge, type: "insert", data };
  });
  return { nodes, edges };
}
