"use client";

import { memo } from "react";
import { NodeStateBadge } from "../instance-ui";
import type { DetailNode } from "./detail-types";
import type { RunModel } from "./run-model";
import { StepErrorText } from "./step-error";
import { shownState, StepStats } from "./step-stats";

/**
 * The sequence's blocks as nested lists, children under their parent in declaration order. Each
 * block is a button that opens its panel; it shows its state (as a badge and as the colour of its
 * left edge), a step's attempts and duration, and a failed step's error.
 */
export const BlockTree = memo(function BlockTree({
  hasTree, model, waitingForInput, selectedId, panelId, onSelect,
}: {
  hasTree: boolean;
  model: RunModel;
  waitingForInput: ReadonlySet<string>;
  selectedId: string | null;
  /** The panel the buttons open (aria-controls). */
  panelId: string;
  onSelect: (nodeId: string) => void;
}) {
  if (!hasTree) return <p className="empty">The sequence of this instance is missing or unreadable, so there is no block tree to show.</p>;
  if (model.byId.size === 0) return <p className="empty">The sequence has no blocks.</p>;
  const branch = (parentId: string | null) => (
    <ul className={parentId === null ? "tree" : undefined} aria-label={parentId === null ? "Block tree" : undefined}>
      {(model.children.get(parentId) ?? []).map((node) => (
        <li key={node.id}>
          <TreeNode
            node={node}
            model={model}
            needsInput={waitingForInput.has(node.blockId)}
            selected={node.id === selectedId}
            panelId={panelId}
            onSelect={onSelect}
          />
          {model.children.has(node.id) && branch(node.id)}
        </li>
      ))}
    </ul>
  );
  return (
    <>
      {branch(null)}
      <p className="muted status-line">
        Select a block for its details. A block with no state yet reads as pending, also when it will never run (a route not
        taken); a loop shows its current iteration.
      </p>
    </>
  );
});

function TreeNode({
  node, model, needsInput, selected, panelId, onSelect,
}: {
  node: DetailNode;
  model: RunModel;
  needsInput: boolean;
  selected: boolean;
  panelId: string;
  onSelect: (nodeId: string) => void;
}) {
  const timing = model.timing.get(node.id);
  const state = shownState(node, timing);
  return (
    <button
      type="button"
      className="tree-node"
      data-state={state}
      data-block-id={node.blockId}
      aria-pressed={selected}
      aria-controls={panelId}
      onClick={() => onSelect(node.id)}
    >
      <code>{node.blockId}</code>
      <span className="tree-node-type">
        {node.blockType.replaceAll("_", " ")}
        {model.armLabel.has(node.id) && <> · {model.armLabel.get(node.id)}</>}
      </span>
      <NodeStateBadge state={state} />
      {needsInput && <span className="badge badge-warn">needs input</span>}
      {timing && <StepStats node={node} timing={timing} knownEnd={model.knownEnd} />}
      {node.error && state === "failed" && <StepErrorText error={node.error} compact />}
    </button>
  );
}
