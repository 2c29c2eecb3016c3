"use client";

// RunGraph: a sequence drawn in execution order (the editor's layout), read-only, each block
// coloured by its state in one run. Blocks are buttons: click or Enter/Space selects one.
//
//   from app/(app)/t/[tenant]/instances/[id]/: import { RunGraph } from "../../../../../_components/sequence-graph/run-graph";
//   <RunGraph blocks={sequence.blocks} statusOf={(blockId) => state} selected={blockId} onSelect={(blockId) => …} />
import { Controls, ReactFlow, ReactFlowProvider, useReactFlow, type Node, type NodeProps } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useEffect, useMemo, useRef } from "react";
import { NodeStateBadge, type NodeState } from "../../(app)/t/[tenant]/instances/instance-ui";
import { isCall, summaryOf, type JsonBlock } from "./arms.ts";
import { edgeTypes, flowEdges, geometry, Handles, sharedNode, sharedNodeTypes, type RouteEdge } from "./flow-parts";
import { layoutBlocks } from "./layout.ts";

export type { NodeState };

export interface RunGraphProps {
  /** The sequence's top-level blocks (wire-format A), as stored. */
  blocks: readonly unknown[];
  /** The state of a block in this run; `undefined` reads as pending (not reached yet, or never). */
  statusOf(blockId: string): NodeState | undefined;
  /** The selected block's id, drawn highlighted. */
  selected?: string | null;
  onSelect?(blockId: string): void;
  /** Names the graph for assistive technology. */
  label?: string;
  className?: string;
}

type RunNodeData = { kind: "block"; block: JsonBlock; state: NodeState; selected: boolean; onSelect?(blockId: string): void };
type RunNode = Node<RunNodeData, "block"> | ReturnType<typeof sharedNode>;

function RunBlockNode({ data }: NodeProps<Node<RunNodeData, "block">>) {
  const { block, state, selected } = data;
  const summary = summaryOf(block);
  const flow = useReactFlow();
  // Tabbing to a block outside the zoomed view makes the browser scroll the graph's box, which
  // xyflow does not expect (the view would stay shifted): turn that scroll into a pan instead.
  const reveal = (element: HTMLElement) => {
    const pane = element.closest<HTMLElement>(".react-flow");
    if (!pane || (pane.scrollTop === 0 && pane.scrollLeft === 0)) return;
    const { x, y, zoom } = flow.getViewport();
    const dx = pane.scrollLeft;
    const dy = pane.scrollTop;
    pane.scrollTop = 0;
    pane.scrollLeft = 0;
    void flow.setViewport({ x: x - dx, y: y - dy, zoom });
  };
  return (
    <button
      type="button"
      className={`seq-node run-node${selected ? " seq-node-selected" : ""}`}
      data-block-id={block.id}
      data-state={state}
      aria-pressed={selected}
      aria-label={`${block.type} ${block.id}: ${state}`}
      onClick={() => data.onSelect?.(block.id)}
      onFocus={(event) => reveal(event.currentTarget)}
    >
      <Handles />
      <span className="seq-node-head">
        <span className="seq-node-type">{block.type}</span> <strong>{block.id}</strong>
      </span>
      <span className="run-node-foot">
        {summary ? (
          <span className={`seq-node-detail${isCall(block) ? "" : " seq-node-summary"}`} title={summary}>
            {summary}
          </span>
        ) : (
          <span />
        )}
        <NodeStateBadge state={state} />
      </span>
    </button>
  );
}

const nodeTypes = { block: RunBlockNode, ...sharedNodeTypes };
const FIT = { padding: 0.1, maxZoom: 1 } as const;

function Graph({ blocks, statusOf, selected, onSelect, label }: RunGraphProps) {
  const flow = useReactFlow<RunNode, RouteEdge>();
  const layout = useMemo(() => layoutBlocks(blocks), [blocks]);
  const nodes = useMemo(
    () =>
      layout.nodes.flatMap((node): RunNode[] => {
        if (node.kind === "block") {
          const state = statusOf(node.block.id) ?? "pending";
          const data: RunNodeData = { kind: "block", block: node.block, state, selected: selected === node.block.id, onSelect };
          return [{ id: node.id, type: "block", ...geometry(node), data, draggable: false, selectable: false, focusable: false, connectable: false }];
        }
        if (node.kind === "join") return [sharedNode(node, statusOf(node.block.id) ?? "pending")];
        if (node.kind === "frame") return [sharedNode(node)];
        return [];
      }),
    [layout, statusOf, selected, onSelect],
  );
  const edges = useMemo(() => flowEdges(layout), [layout]);

  // Fit again when the container is resized (the page's column, a collapsed panel...) or blocks
  // come and go; not on every new state, which would undo the reader's zoom while a run goes on.
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(() => void flow.fitView(FIT));
    observer.observe(element);
    return () => observer.disconnect();
  }, [flow]);
  const count = layout.nodes.length;
  useEffect(() => {
    void flow.fitView(FIT);
  }, [flow, count]);

  return (
    <div ref={box} className="run-graph-inner">
      <ReactFlow<RunNode, RouteEdge>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        nodesDraggable={false}
        nodesConnectable={false}
        nodesFocusable={false}
        edgesFocusable={false}
        elementsSelectable={false}
        fitView
        fitViewOptions={FIT}
        minZoom={0.05}
        proOptions={{ hideAttribution: true }}
        aria-label={label ?? "Run graph"}
      >
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}

/** Fills its container: give the container (or `className`) a height. */
export function RunGraph(props: RunGraphProps) {
  return (
    <div className={`run-graph${props.className ? ` ${props.className}` : ""}`}>
      <ReactFlowProvider>
        <Graph {...props} />
      </ReactFlowProvider>
    </div>
  );
}
