"use client";

// One version drawn in execution order (the shared layout), read-only, each block marked by how
// it compares with the other version of a diff: added, removed, changed or the same.
import { ReactFlow, ReactFlowProvider, type Node, type NodeProps } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useMemo } from "react";
import { summaryOf, type JsonBlock } from "../../../../../_components/sequence-graph/arms.ts";
import { edgeTypes, flowEdges, geometry, Handles, sharedNode, sharedNodeTypes, type RouteEdge } from "../../../../../_components/sequence-graph/flow-parts";
import { layoutBlocks } from "../../../../../_components/sequence-graph/layout.ts";
import type { BlockChange } from "./block-changes.ts";

type DiffNodeData = { kind: "block"; block: JsonBlock; change: BlockChange };
type DiffNode = Node<DiffNodeData, "block"> | ReturnType<typeof sharedNode>;

function DiffBlockNode({ data }: NodeProps<Node<DiffNodeData, "block">>) {
  const { block, change } = data;
  return (
    <div className={`seq-node diff-node diff-node-${change}`} data-block-id={block.id} data-change={change} aria-label={`${block.type} ${block.id}: ${change}`}>
      <Handles />
      <div className="seq-node-head">
        <span className="seq-node-type">{block.type}</span> <strong>{block.id}</strong>
        {change !== "same" && <span className="badge diff-badge">{change}</span>}
      </div>
      <div className="seq-node-detail seq-node-summary">{summaryOf(block)}</div>
    </div>
  );
}

const nodeTypes = { block: DiffBlockNode, ...sharedNodeTypes };
const FIT = { padding: 0.1, maxZoom: 1 } as const;

export function VersionGraph({ blocks, changes, label }: { blocks: unknown; changes: ReadonlyMap<string, BlockChange>; label: string }) {
  const layout = useMemo(() => layoutBlocks(blocks), [blocks]);
  const nodes = useMemo(
    () =>
      layout.nodes.flatMap((node): DiffNode[] => {
        if (node.kind === "block") {
          const data: DiffNodeData = { kind: "block", block: node.block, change: changes.get(node.block.id) ?? "same" };
          return [{ id: node.id, type: "block", ...geometry(node), data, draggable: false, selectable: false, focusable: false, connectable: false }];
        }
        return node.kind === "join" || node.kind === "frame" ? [sharedNode(node)] : [];
      }),
    [layout, changes],
  );
  const edges = useMemo(() => flowEdges(layout), [layout]);
  return (
    <div className="run-graph diff-graph" role="group" aria-label={label}>
      <ReactFlowProvider>
        <ReactFlow<DiffNode, RouteEdge>
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          edgeTypes={edgeTypes}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          fitView
          fitViewOptions={FIT}
          minZoom={0.05}
          proOptions={{ hideAttribution: true }}
        />
      </ReactFlowProvider>
    </div>
  );
}
