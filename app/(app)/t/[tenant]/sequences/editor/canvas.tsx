"use client";

import { ReactFlow, ReactFlowProvider, useNodeId, useReactFlow, type NodeChange, type NodeProps, type Node } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useContext, useEffect, useMemo, useState } from "react";
import { isCall, summaryOf } from "../../../../../_components/sequence-graph/arms.ts";
import { Handles, sharedNodeTypes, type RouteEdge } from "../../../../../_components/sequence-graph/flow-parts";
import type { Insert } from "../../../../../_components/sequence-graph/layout.ts";
import styles from "./canvas.module.css";
import { useDropTarget } from "./drop-target.ts";
import { editorEdgeTypes, InsertContext, type InsertEdge } from "./insert-edge";
import { buildFlow, type AfterNodeData, type BlockNodeData, type FlowNode, type Selection, type SlotNodeData, type StartNodeData } from "./flow.ts";
import { placeAfter, type Path, type SequenceDoc, type Tree } from "./model.ts";

const FIT = { maxZoom: 1, padding: 0.1 } as const;

/**
 * A drop target of this node, highlighted while a palette block is over it or a block being moved
 * on the canvas is: its handlers and `data-drop="over"` to spread, the class to add.
 */
function useNodeDrop(onType: (type: string) => void) {
  const { moveTarget } = useContext(InsertContext);
  const id = useNodeId();
  const drop = useDropTarget(onType);
  const over = drop.over || (id !== null && id === moveTarget);
  return { highlight: over ? ` ${styles.dropOver}` : "", props: { ...drop.props, "data-drop": over ? ("over" as const) : undefined } };
}

function BlockNode({ data }: NodeProps<Node<BlockNodeData, "block">>) {
  const { block, problems } = data;
  const { onDropType } = useContext(InsertContext);
  const drop = useNodeDrop((type) => onDropType(type, placeAfter(data.path)));
  const detail = summaryOf(block);
  const className = [
    "seq-node",
    data.composite ? "seq-node-composite" : "",
    problems.length ? "seq-node-invalid" : "",
    data.selected ? "seq-node-selected" : "",
  ]
    .filter(Boolean)
    .join(" ");
  return (
    <div className={`${className}${drop.highlight}`} data-block-id={block.id} {...drop.props}>
      <Handles />
      <div className="seq-node-head">
        <span className="seq-node-type">{block.type}</span> <strong>{block.id || "(no id)"}</strong>
      </div>
      {detail && (
        <div className={`seq-node-detail${isCall(block) ? "" : " seq-node-summary"}`} title={detail}>
          {detail}
        </div>
      )}
      {problems.length > 0 && (
        <p className="seq-node-error" role="alert" title={problems.join("\n")}>
          {problems[0]}
          {problems.length > 1 ? ` (+${problems.length - 1} more)` : ""}
        </p>
      )}
    </div>
  );
}

function SlotNode({ data }: NodeProps<Node<SlotNodeData, "slot">>) {
  const { onDropType } = useContext(InsertContext);
  const drop = useNodeDrop((type) => onDropType(type, { list: data.list, index: 0 }));
  return (
    <div className={`seq-slot${data.selected ? " seq-node-selected" : ""}${drop.highlight}`} data-slot={data.label} {...drop.props}>
      <Handles />
      empty {data.label}: select, then add a block
    </div>
  );
}

function AfterNode({ data }: NodeProps<Node<AfterNodeData, "after">>) {
  const { onDropType } = useContext(InsertContext);
  const at = { list: data.path.slice(0, -1), index: Number(data.path[data.path.length - 1]) + 1 };
  const drop = useNodeDrop((type) => onDropType(type, at));
  return (
    <div
      className={`seq-after${data.selected ? " seq-node-selected" : ""}${drop.highlight}`}
      data-after={data.blockId}
      title={`Select, then add a block after ${data.blockId}`}
      {...drop.props}
    >
      <Handles />+ after {data.blockId}
    </div>
  );
}

function StartNode({ data }: NodeProps<Node<StartNodeData, "start">>) {
  return (
    <div className="seq-start" data-start={data.label}>
      <Handles />
      start
    </div>
  );
}

const nodeTypes = { block: BlockNode, slot: SlotNode, after: AfterNode, start: StartNode, ...sharedNodeTypes };

export interface CanvasProps {
  doc: SequenceDoc;
  /** The tree drawn: the main one or a cleanup tree. */
  tree: Tree;
  problems: ReadonlyMap<string, string[]>;
  selection: Selection;
  onSelect(selection: Selection): void;
  /** A block dropped on another block or after a composite (goes after it), on a "+" or an empty list (goes there). */
  onDrop(from: Path, target: Selection): void;
  /** A block type dragged from the palette and dropped where a block can go. */
  onDropType(type: string, insert: Insert): void;
}

/** What clicking (or dropping on) a node selects; joins and frames select nothing. */
function selectionOf(node: FlowNode): Selection {
  switch (node.data.kind) {
    case "block":
      return { kind: "block", path: node.data.path };
    case "slot":
      return { kind: "slot", list: node.data.list };
    case "after":
      return { kind: "after", path: node.data.path };
    default:
      return null;
  }
}

function FlowCanvas({ doc, tree, problems, selection, onSelect, onDrop, onDropType }: CanvasProps) {
  const flow = useReactFlow<FlowNode, RouteEdge | InsertEdge>();
  const { nodes, edges } = useMemo(() => buildFlow(doc, problems, selection, tree), [doc, problems, selection, tree]);
  // Keep the whole tree in view as blocks come and go, never zoomed in past 100 %.
  const count = nodes.length;
  useEffect(() => {
    void flow.fitView(FIT);
  }, [flow, count, tree]);
  // The dragged node's position while it moves, and the node it would be dropped on (highlighted);
  // everything else is where the layout puts it.
  const [drag, setDrag] = useState<{ id: string; position: { x: number; y: number } } | null>(null);
  const [dropOn, setDropOn] = useState<string | null>(null);
  // The dragged node is drawn over the others, the one it would be dropped on included.
  const shown = drag ? nodes.map((node) => (node.id === drag.id ? { ...node, position: drag.position, zIndex: 1000 } : node)) : nodes;
  /** The node a dragged block is over that would take it, with what dropping there selects. */
  const targetOf = (dragged: FlowNode) => {
    for (const other of flow.getIntersectingNodes(dragged)) {
      const selected = other.id === dragged.id ? null : selectionOf(other);
      if (selected) return { id: other.id, selected };
    }
    return null;
  };

  const onNodesChange = (changes: NodeChange<FlowNode>[]) => {
    for (const change of changes) {
      if (change.type === "position" && change.position && change.dragging) setDrag({ id: change.id, position: change.position });
    }
  };

  const actions = { onPick: (insert: Insert) => onSelect({ kind: "insert", ...insert }), onDropType, moveTarget: dropOn };

  return (
    <InsertContext.Provider value={actions}>
      <ReactFlow<FlowNode, RouteEdge | InsertEdge>
        nodes={shown}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={editorEdgeTypes}
        onNodesChange={onNodesChange}
        nodesConnectable={false}
        onNodeClick={(_, node) => {
          const selected = selectionOf(node);
          if (selected) onSelect(selected);
        }}
        onPaneClick={() => onSelect(null)}
        onNodeDrag={(_, node) => {
          const id = node.data.kind === "block" ? (targetOf(node)?.id ?? null) : null;
          if (id !== dropOn) setDropOn(id);
        }}
        onNodeDragStop={(_, node) => {
          setDrag(null);
          setDropOn(null);
          if (node.data.kind !== "block") return;
          const target = targetOf(node);
          if (target) onDrop(node.data.path, target.selected);
        }}
        fitView
        fitViewOptions={FIT}
        minZoom={0.1}
        proOptions={{ hideAttribution: true }}
        aria-label="Sequence canvas"
      />
    </InsertContext.Provider>
  );
}

export function Canvas(props: CanvasProps) {
  return (
    <div className="seq-canvas">
      <ReactFlowProvider>
        <FlowCanvas {...props} />
      </ReactFlowProvider>
    </div>
  );
}
