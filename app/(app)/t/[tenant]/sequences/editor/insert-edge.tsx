"use client";

// The editor's edges: the shared routed edge, and on each place a block can go a "+" that
// selects that place (the palette then adds there) and takes a block type dragged from the palette.
import { EdgeLabelRenderer, type Edge, type EdgeProps } from "@xyflow/react";
import { createContext, useContext } from "react";
import { edgeTypes, type RouteEdgeData } from "../../../../../_components/sequence-graph/flow-parts";
import type { Insert } from "../../../../../_components/sequence-graph/layout.ts";
import styles from "./canvas.module.css";
import { useDropTarget } from "./drop-target.ts";
import { insertPoint } from "./flow.ts";

export type InsertEdgeData = RouteEdgeData & { insert: Insert; where: string; selected: boolean };
export type InsertEdge = Edge<InsertEdgeData, "insert">;

export interface InsertActions {
  onPick(insert: Insert): void;
  onDropType(type: string, insert: Insert): void;
  /** The node a block being moved on the canvas would be dropped on. */
  moveTarget: string | null;
}

export const InsertContext = createContext<InsertActions>({ onPick: () => undefined, onDropType: () => undefined, moveTarget: null });

const Route = edgeTypes.route;

function InsertEdgeView(props: EdgeProps<InsertEdge>) {
  const actions = useContext(InsertContext);
  const { data } = props;
  const drop = useDropTarget((type) => data && actions.onDropType(type, data.insert));
  if (!data) return null;
  const at = insertPoint(data.kind, data.points);
  return (
    <>
      <Route {...(props as unknown as EdgeProps<Edge<RouteEdgeData, "route">>)} />
      <EdgeLabelRenderer>
        <button
          type="button"
          className={`seq-insert nodrag nopan${data.selected ? " seq-insert-selected" : ""}${drop.over ? ` ${styles.insertOver}` : ""}`}
          style={{ transform: `translate(-50%, -50%) translate(${at.x}px, ${at.y}px)` }}
          aria-label={`Add a block ${data.where}`}
          aria-pressed={data.selected}
          title={`Add a block ${data.where} (or drop one from the palette)`}
          data-insert={`${data.insert.list.join(".")}@${data.insert.index}`}
          onClick={() => actions.onPick(data.insert)}
          data-drop={drop.over ? "over" : undefined}
          {...drop.props}
        >
          +
        </button>
      </EdgeLabelRenderer>
    </>
  );
}

export const editorEdgeTypes = { ...edgeTypes, insert: InsertEdgeView };
