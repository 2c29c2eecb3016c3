"use client";

// The @xyflow/react pieces both graphs share: the edge that draws the layout's routed polyline
// (with its label), the join and frame nodes, and the conversion of layout nodes and edges.
// Each graph adds its own block nodes (editable in the editor, coloured by state in a run).
import { BaseEdge, EdgeLabelRenderer, Handle, MarkerType, Position, type Edge, type EdgeProps, type Node, type NodeProps } from "@xyflow/react";
import type { EdgeKind, Layout, LayoutNode, Point } from "./layout.ts";

export type RouteEdgeData = { kind: EdgeKind; points: Point[]; label?: string; labelAt?: Point; title?: string };
export type RouteEdge = Edge<RouteEdgeData, "route">;

/** Corner radius of the orthogonal edges. */
const RADIUS = 8;

/** An SVG path through orthogonal points, its corners rounded. */
export function routePath(points: Point[]): string {
  if (points.length === 0) return "";
  const [first, ...rest] = points;
  let path = `M ${first!.x} ${first!.y}`;
  rest.forEach((point, index) => {
    const previous = points[index]!;
    const next = rest[index + 1];
    if (!next) {
      path += ` L ${point.x} ${point.y}`;
      return;
    }
    // Cut the corner by at most half of either segment, so that short segments stay straight.
    const r = Math.min(RADIUS, Math.hypot(point.x - previous.x, point.y - previous.y) / 2, Math.hypot(next.x - point.x, next.y - point.y) / 2);
    const toward = (from: Point, to: Point) => {
      const length = Math.hypot(to.x - from.x, to.y - from.y) || 1;
      return { x: from.x + ((to.x - from.x) / length) * r, y: from.y + ((to.y - from.y) / length) * r };
    };
    const before = toward(point, previous);
    const after = toward(point, next);
    path += ` L ${before.x} ${before.y} Q ${point.x} ${point.y} ${after.x} ${after.y}`;
  });
  return path;
}

function RouteEdgeView({ id, data, markerEnd }: EdgeProps<RouteEdge>) {
  if (!data) return null;
  return (
    <>
      <BaseEdge id={id} path={routePath(data.points)} markerEnd={markerEnd} className={`seq-edge seq-edge-${data.kind}`} />
      {data.label && data.labelAt && (
        <EdgeLabelRenderer>
          <div
            className={`seq-edge-label seq-edge-label-${data.kind}`}
            style={{ transform: `translate(-50%, -50%) translate(${data.labelAt.x}px, ${data.labelAt.y}px)` }}
            title={data.title ?? data.label}
          >
            {data.label}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

export const edgeTypes = { route: RouteEdgeView };

export function flowEdges(layout: Layout): RouteEdge[] {
  return layout.edges.map(({ id, kind, source, target, points, label, labelAt, title }) => ({
    id,
    source,
    target,
    type: "route",
    data: { kind, points, label, labelAt, title },
    markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
    focusable: false,
    selectable: false,
  }));
}

/** Invisible handles: xyflow draws an edge only between handles; the route itself comes from the layout. */
export function Handles() {
  return (
    <>
      <Handle type="target" position={Position.Top} isConnectable={false} className="seq-handle" />
      <Handle type="source" position={Position.Bottom} isConnectable={false} className="seq-handle" />
    </>
  );
}

export type JoinNodeData = { kind: "join"; blockId: string; blockType: string; state?: string };
export type FrameNodeData = { kind: "frame"; blockId: string; blockType: string };

function JoinNode({ data }: NodeProps<Node<JoinNodeData, "join">>) {
  return (
    <div className="seq-join" data-join-of={data.blockId} data-state={data.state} title={`end of ${data.blockType} ${data.blockId}`}>
      <Handles />
      end {data.blockId}
    </div>
  );
}

function FrameNode({ data }: NodeProps<Node<FrameNodeData, "frame">>) {
  return <div className={`seq-frame seq-frame-${data.blockType}`} data-frame-of={data.blockId} aria-hidden="true" />;
}

export const sharedNodeTypes = { join: JoinNode, frame: FrameNode };

/** The fixed geometry of a layout node, as xyflow takes it. */
export const geometry = (node: LayoutNode) => ({ position: { x: node.x, y: node.y }, width: node.width, height: node.height });

/** A layout's join or frame as an xyflow node (not selectable, not draggable). */
export function sharedNode(node: LayoutNode & { kind: "join" | "frame" }, state?: string): Node<JoinNodeData, "join"> | Node<FrameNodeData, "frame"> {
  const common = { id: node.id, ...geometry(node), draggable: false, selectable: false, focusable: false, connectable: false };
  if (node.kind === "frame") {
    // Under the edges, so the lines inside stay visible.
    return { ...common, type: "frame", zIndex: -1, data: { kind: "frame", blockId: node.block.id, blockType: node.block.type } };
  }
  return { ...common, type: "join", data: { kind: "join", blockId: node.block.id, blockType: node.block.type, state } };
}
