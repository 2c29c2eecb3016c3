// The block tree as a flow graph for @xyflow/react, laid out top-down by dagre: a node per block,
// a composite drawn as a fork node with labelled edges to the first block of each branch (or to
// an "empty" drop target), and an edge between blocks that follow each other in a list.
import dagre from "@dagrejs/dagre";
import type { Edge, Node } from "@xyflow/react";
import { getAt, isBlock, pathKey, slotsOf, type JsonBlock, type Path, type SequenceDoc } from "./model.ts";

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 64;

export type BlockNodeData = { kind: "block"; block: JsonBlock; path: Path; composite: boolean; problems: string[]; selected: boolean };
export type SlotNodeData = { kind: "slot"; list: Path; label: string; selected: boolean };
export type FlowNode = Node<BlockNodeData, "block"> | Node<SlotNodeData, "slot">;

export type Selection = { kind: "block"; path: Path } | { kind: "slot"; list: Path } | null;

export function buildFlow(doc: SequenceDoc, problems: ReadonlyMap<string, string[]>, selection: Selection): { nodes: FlowNode[]; edges: Edge[] } {
  const nodes: FlowNode[] = [];
  const edges: Edge[] = [];
  const selectedKey = selection ? pathKey(selection.kind === "block" ? selection.path : selection.list) : null;

  /** Draws a list; returns the id of its first node (or its placeholder). */
  const list = (value: unknown, at: Path, label: string): string => {
    const blocks = Array.isArray(value) ? value.filter(isBlock) : [];
    if (blocks.length === 0) {
      const id = `slot:${pathKey(at)}`;
      nodes.push({ id, type: "slot", position: { x: 0, y: 0 }, data: { kind: "slot", list: at, label, selected: selectedKey === pathKey(at) } });
      return id;
    }
    let previous: string | null = null;
    let first = "";
    blocks.forEach((block, index) => {
      const path = [...at, index];
      const id = pathKey(path);
      const slots = slotsOf(block);
      nodes.push({
        id,
        type: "block",
        position: { x: 0, y: 0 },
        data: { kind: "block", block, path, composite: slots.length > 0, problems: problems.get(id) ?? [], selected: selectedKey === id },
      });
      for (const slot of slots) {
        const child = list(getAt(block, slot.path), [...path, ...slot.path], slot.label);
        edges.push({ id: `${id}->${child}`, source: id, target: child, label: slot.label, className: "seq-edge-branch" });
      }
      if (previous) edges.push({ id: `${previous}->${id}`, source: previous, target: id });
      else first = id;
      previous = id;
    });
    return first;
  };
  list(doc.blocks, ["blocks"], "blocks");

  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: "TB", nodesep: 30, ranksep: 50 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) graph.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const edge of edges) graph.setEdge(edge.source, edge.target);
  dagre.layout(graph);
  for (const node of nodes) {
    const placed = graph.node(node.id);
    node.position = { x: placed.x - NODE_WIDTH / 2, y: placed.y - NODE_HEIGHT / 2 };
  }
  return { nodes, edges };
}
