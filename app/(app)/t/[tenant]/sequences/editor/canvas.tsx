"use client";

import { Handle, Position, ReactFlow, ReactFlowProvider, useReactFlow, type Edge, type NodeChange, type NodeProps, type Node } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useEffect, useMemo, useState } from "react";
import { buildFlow, type BlockNodeData, type FlowNode, type Selection, type SlotNodeData } from "./flow.ts";
import type { Path, SequenceDoc } from "./model.ts";

const FIT = { maxZoom: 1, padding: 0.2 } as const;

function BlockNode({ data }: NodeProps<Node<BlockNodeData, "block">>) {
  const { block, problems } = data;
  const detail = block.type === "step" ? (typeof block.handler === "string" && block.handler ? block.handler : "no handler") : null;
  const className = ["seq-node", data.composite ? "seq-node-composite" : "", problems.length ? "seq-node-invalid" : "", data.selected ? "seq-node-selected" : ""]
    .filter(Boolean)
    .join(" ");
  return (
    <div className={className} data-block-id={block.id}>
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <div className="seq-node-head">
        <span className="seq-node-type">{block.type}</span> <strong>{block.id || "(no id)"}</strong>
      </div>
      {detail && <div className="seq-node-detail">{detail}</div>}
      {problems.length > 0 && (
        <p className="seq-node-error" role="alert">
          {problems[0]}
          {problems.length > 1 ? ` (+${problems.length - 1} more)` : ""}
        </p>
      )}
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </div>
  );
}

function SlotNode({ data }: NodeProps<Node<SlotNodeData, "slot">>) {
  return (
    <div className={`seq-slot${data.selected ? " seq-node-selected" : ""}`}>
      <Handle type="target" position={Position.Top} isConnectable={false} />
      empty {data.label}: select, then add a block
    </div>
  );
}

const nodeTypes = { block: BlockNode, slot: SlotNode };

export interface CanvasProps {
  doc: SequenceDoc;
  problems: ReadonlyMap<string, string[]>;
  selection: Selection;
  onSelect(selection: Selection): void;
  /** A block dropped on another block (goes after it) or on an empty list (goes into it). */
  onDrop(from: Path, target: Selection): void;
}

function FlowCanvas({ doc, problems, selection, onSelect, onDrop }: CanvasProps) {
  const flow = useReactFlow<FlowNode, Edge>();
  const { nodes, edges } = useMemo(() => buildFlow(doc, problems, selection), [doc, problems, selection]);
  // Keep the whole tree in view as blocks come and go, never zoomed in past 100 %.
  const count = nodes.length;
  useEffect(() => {
    void flow.fitView(FIT);
  }, [flow, count]);
  // The dragged node's position while it moves; everything else is where the layout puts it.
  const [drag, setDrag] = useState<{ id: string; position: { x: number; y: number } } | null>(null);
  const shown = drag ? nodes.map((node) => (node.id === drag.id ? { ...node, position: drag.position } : node)) : nodes;

  const onNodesChange = (changes: NodeChange<FlowNode>[]) => {
    for (const change of changes) {
      if (change.type === "position" && change.position && change.dragging) setDrag({ id: change.id, position: change.position });
    }
  };

  const selectionOf = (node: FlowNode): Selection =>
    node.data.kind === "block" ? { kind: "block", path: node.data.path } : { kind: "slot", list: node.data.list };

  return (
    <ReactFlow<FlowNode, Edge>
      nodes={shown}
      edges={edges}
      nodeTypes={nodeTypes}
      onNodesChange={onNodesChange}
      nodesConnectable={false}
      onNodeClick={(_, node) => onSelect(selectionOf(node))}
      onPaneClick={() => onSelect(null)}
      onNodeDragStop={(_, node) => {
        setDrag(null);
        if (node.data.kind !== "block") return;
        const target = flow.getIntersectingNodes(node).find((other) => other.id !== node.id);
        if (target) onDrop(node.data.path, selectionOf(target));
      }}
      fitView
      fitViewOptions={FIT}
      minZoom={0.2}
      proOptions={{ hideAttribution: true }}
      aria-label="Sequence canvas"
    />
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
