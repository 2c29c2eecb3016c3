"use client";

// The editor's edges: the shared routed edge, and on each place a block can go a "+" that
// selects that place (the palette then adds there) and takes a block type dragged from the palette.
import { EdgeLabelRenderer, type Edge, type EdgeProps } from "@xyflow/react";
import { createContext, useContext, type DragEvent } from "react";
import { edgeTypes, type RouteEdgeData } from "../../../../../_components/sequence-graph/flow-parts";
import type { Insert } from "../../../../../_components/sequence-graph/layout.ts";

export type InsertEdgeData = RouteEdgeData & { insert: Insert; where: string; selected: boolean };
export type InsertEdge = Edge<InsertEdgeData, "insert">;

/** The drag data type of a block type dragged from the palette. */
export const BLOCK_TYPE_DRAG = "application/x-bulkhead-block-type";

export interface InsertActions {
  onPick(insert: Insert): void;
  onDropType(type: string, insert: Insert): void;
}

export const InsertContext = createContext<InsertActions>({ onPick: () => undefined, onDropType: () => undefined });

/** Accepts a block type dragged from the palette (and nothing else). */
export function dropTarget(onType: (type: string) => void) {
  return {
    onDragOver: (event: DragEvent) => {
      if (!event.dataTransfer.types.includes(BLOCK_TYPE_DRAG)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
    },
    onDrop: (event: DragEvent) => {
      const type = event.dataTransfer.getData(BLOCK_TYPE_DRAG);
      if (!type) return;
      event.preventDefault();
      event.stopPropagation();
      onType(type);
    },
  };
}

const Route = edgeTypes.route;

function InsertEdgeView(props: EdgeProps<InsertEdge>) {
  const actions = useContext(InsertContext);
  const { data } = props;
  if (!data) return null;
  // Into an arm: near its first block, clear of the arm's label; elsewhere mid-way along the last segment.
  const points = data.kind === "merge" ? data.points.slice(0, 2) : data.points.slice(-2);
  const [a, b] = [points[0]!, points[1] ?? points[0]!];
  const share = data.kind === "arm" ? 0.8 : 0.5;
  const at = { x: a.x + (b.x - a.x) * share, y: a.y + (b.y - a.y) * share };
  return (
    <>
      <Route {...(props as unknown as EdgeProps<Edge<RouteEdgeData, "route">>)} />
      <EdgeLabelRenderer>
        <button
          type="button"
          className={`seq-insert nodrag nopan${data.selected ? " seq-insert-selected" : ""}`}
          style={{ transform: `translate(-50%, -50%) translate(${at.x}px, ${at.y}px)` }}
          aria-label={`Add a block ${data.where}`}
          aria-pressed={data.selected}
          title={`Add a block ${data.where} (or drop one from the palette)`}
          data-insert={`${data.insert.list.join(".")}@${data.insert.index}`}
          onClick={() => actions.onPick(data.insert)}
          {...dropTarget((type) => actions.onDropType(type, data.insert))}
        >
          +
        </button>
      </EdgeLabelRenderer>
    </>
  );
}

export const editorEdgeTypes = { ...edgeTypes, insert: InsertEdgeView };
