// The editor's block tree as @xyflow/react nodes and edges, placed by the shared execution-order
// layout (app/_components/sequence-graph/layout.ts): blocks, their slots (empty lists and the
// place after each composite), joins and frames, with selection and validation problems.
import type { Node } from "@xyflow/react";
import { flowEdges, geometry, sharedNode, type FrameNodeData, type JoinNodeData, type RouteEdge } from "../../../../../_components/sequence-graph/flow-parts";
import { layoutBlocks, NODE_HEIGHT } from "../../../../../_components/sequence-graph/layout.ts";
import { pathKey, type JsonBlock, type Path, type SequenceDoc } from "./model.ts";

/** A block showing a validation message gets the room for two lines of it. */
const PROBLEM_HEIGHT = 96;

export type BlockNodeData = { kind: "block"; block: JsonBlock; path: Path; composite: boolean; problems: string[]; selected: boolean };
export type SlotNodeData = { kind: "slot"; list: Path; label: string; selected: boolean };
export type AfterNodeData = { kind: "after"; path: Path; blockId: string; selected: boolean };
export type FlowNode =
  | Node<BlockNodeData, "block">
  | Node<SlotNodeData, "slot">
  | Node<AfterNodeData, "after">
  | Node<JoinNodeData, "join">
  | Node<FrameNodeData, "frame">;

/** What is selected: a block, an empty list (add into it), or the place after a composite. */
export type Selection = { kind: "block"; path: Path } | { kind: "slot"; list: Path } | { kind: "after"; path: Path } | null;

/**
 * A saga's action or compensation is a single block, not an item of a list: it cannot be moved,
 * deleted or added after, so selecting it selects its saga (edited as JSON).
 */
export const isSagaPart = (path: Path) => path[path.length - 1] === "action" || path[path.length - 1] === "compensation";
export const listedPath = (path: Path): Path => (isSagaPart(path) ? path.slice(0, -3) : path);

export function selectionKey(selection: Selection): string | null {
  if (!selection) return null;
  if (selection.kind === "slot") return `slot:${pathKey(selection.list)}`;
  if (selection.kind === "after") return `after:${pathKey(selection.path)}`;
  return pathKey(selection.path);
}

export function buildFlow(doc: SequenceDoc, problems: ReadonlyMap<string, string[]>, selection: Selection): { nodes: FlowNode[]; edges: RouteEdge[] } {
  const layout = layoutBlocks(doc.blocks, {
    editable: true,
    heightOf: (_, path) => (problems.get(pathKey(path))?.length ? PROBLEM_HEIGHT : NODE_HEIGHT),
  });
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
      default:
        return sharedNode(node);
    }
  });
  return { nodes, edges: flowEdges(layout) };
}
