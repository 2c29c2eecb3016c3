"use client";

import { NodeStateBadge } from "../instance-ui";
import type { InstanceDetailData } from "./detail-types";

type Node = InstanceDetailData["nodes"][number];

/**
 * The sequence's blocks as nested lists, children under their parent in declaration order, each
 * with its state (as a badge, and as the colour of its left edge).
 */
export function BlockTree({ hasTree, nodes, waitingForInput }: { hasTree: boolean; nodes: Node[]; waitingForInput: string[] }) {
  if (!hasTree) return <p className="empty">The sequence of this instance is missing or unreadable, so there is no block tree to show.</p>;
  if (nodes.length === 0) return <p className="empty">The sequence has no blocks.</p>;
  const children = new Map<string | null, Node[]>();
  for (const node of nodes) {
    const siblings = children.get(node.parentId);
    if (siblings) siblings.push(node);
    else children.set(node.parentId, [node]);
  }
  const branch = (parentId: string | null, label?: string) => (
    <ul className={parentId === null ? "tree" : undefined} aria-label={label}>
      {(children.get(parentId) ?? []).map((node) => (
        <li key={node.id}>
          <div className="tree-node" data-state={node.state}>
            <code>{node.blockId}</code>
            <span className="tree-node-type">
              {node.blockType.replaceAll("_", " ")}
              {node.branchIndex !== null && <> · arm {node.branchIndex}</>}
            </span>
            <NodeStateBadge state={node.state} />
            {waitingForInput.includes(node.blockId) && <span className="badge badge-warn">needs input</span>}
          </div>
          {children.has(node.id) && branch(node.id)}
        </li>
      ))}
    </ul>
  );
  return (
    <>
      {branch(null, "Block tree")}
      <p className="muted status-line">
        A block with no state yet reads as pending, also when it will never run (a route not taken); a loop shows its current iteration.
      </p>
    </>
  );
}
