// The execution tree of an instance (wire-format E.13, `ExecutionNode`), read off the sequence's
// blocks and the instance's cursor. Nothing is stored per node: the cursor is the one state model
// (state.ts), and this is a view of it, so it cannot drift from what the engine does.
//
// branch_index, which arm of its parent a block sits in (the numbering Orch8's tree uses):
//   parallel, race: the branch; router: the route, `default` = routes.length; try_catch: try 0,
//   catch 1, finally 2; a_b_split: the variant; saga: step i's action 2i, its compensation 2i+1;
//   top level and single-body composites (loop, for_each, cancellation_scope): null.
//
// Limits of what the cursor knows:
// - A block without a cursor entry reads as pending, also when it never will run (a route not
//   taken, a catch not needed, the steps after a failure). Orch8 marks those skipped; the cursor
//   cannot tell "not yet" from "never" without re-running the evaluator.
// - A loop or for_each body is reset for each iteration: it shows the current iteration only,
//   and reads as pending again once the loop has finished.
// - started_at and completed_at are known for leaves only (steps and sub_sequences: when the
//   engine reached them, and when they completed or failed for good). The cursor keeps no times
//   for composites.
import type { Block, BlockType, Sequence } from "../../sequence/schema.ts";
import { sha256Hex } from "../../sequence/template.ts";
import { readTreeCursor } from "./cursor.ts";
import { isObject } from "../../model.ts";
import type { NodeState } from "./state.ts";

export type ExecutionNodeState = "pending" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "skipped";

export interface ExecutionNode {
  id: string;
  instance_id: string;
  block_id: string;
  parent_id: string | null;
  block_type: BlockType;
  branch_index: number | null;
  state: ExecutionNodeState;
  started_at: string | null;
  completed_at: string | null;
}

export interface TreeInstance {
  id: string;
  /** The instance state (F.1); `waiting` makes its active blocks read as waiting. */
  state: string;
  createdAt: Date;
  updatedAt: Date;
}

/** One node per block of the main tree, depth-first, parents before children, in declaration order. */
export function executionNodes(sequence: Pick<Sequence, "blocks">, cursor: unknown, instance: TreeInstance): ExecutionNode[] {
  const tree = readTreeCursor(cursor, sequence as Sequence);
  const stored = tree.nodes;
  // A hand-edited or corrupt cursor must not break the view: unreadable parts read as not started.
  const nodes: Record<string, unknown> = isObject(stored) ? stored : {};
  const instanceId = instance.id.toLowerCase();
  const out: ExecutionNode[] = [];

  const visit = (blocks: readonly Block[], parentId: string | null, branchIndex: number | null) => {
    for (const block of blocks) {
      const raw = Object.hasOwn(nodes, block.id) ? nodes[block.id] : undefined;
      const state: NodeState = isObject(raw) ? raw : {};
      const id = executionNodeId(instanceId, block.id);
      out.push({
        id,
        instance_id: instanceId,
        block_id: block.id,
        parent_id: parentId,
        block_type: block.type,
        branch_index: branchIndex,
        state: nodeState(block, state, instance.state),
        started_at: isLeaf(block) ? timestamp(state.reachedAt ?? state.startedAt) : null,
        completed_at: isLeaf(block) ? timestamp(state.finishedAt) : null,
      });
      for (const [arm, children] of arms(block)) visit(children, id, arm);
    }
  };
  // An instance that modified itself (self_modify) has top-level blocks of its own.
  visit(Array.isArray(tree.blocks) ? tree.blocks : sequence.blocks, null, null);
  return out;
}

type Arm = [branchIndex: number | null, blocks: readonly Block[]];

/** The child bodies of a block with their branch_index (see the header). */
function arms(block: Block): Arm[] {
  switch (block.type) {
    case "step":
    case "sub_sequence":
      return [];
    case "parallel":
    case "race":
      return block.branches.map((branch, i): Arm => [i, branch]);
    case "loop":
    case "for_each":
      return [[null, block.body]];
    case "cancellation_scope":
      return [[null, block.blocks]];
    case "router": {
      const routes = block.routes.map((route, i): Arm => [i, route.blocks]);
      return block.default ? [...routes, [block.routes.length, block.default]] : routes;
    }
    case "try_catch":
      return [[0, block.try_block], [1, block.catch_block], ...(block.finally_block ? [[2, block.finally_block] satisfies Arm] : [])];
    case "a_b_split":
      return block.variants.map((variant, i): Arm => [i, variant.blocks]);
    case "saga":
      return block.steps.flatMap((step, i): Arm[] =>
        step.compensation ? [[2 * i, [step.action]], [2 * i + 1, [step.compensation]]] : [[2 * i, [step.action]]],
      );
  }
}

/** The blocks the runner executes itself; only they carry times and hand work elsewhere. */
function isLeaf(block: Block): boolean {
  return block.type === "step" || block.type === "sub_sequence";
}

function nodeState(block: Block, state: NodeState, instanceState: string): ExecutionNodeState {
  switch (state.status) {
    case undefined:
      return "pending";
    case "active":
      // Handed to a worker or to a child instance, or the whole instance parked until something
      // outside the engine acts.
      return (isLeaf(block) && (state.taskId || state.childId)) || instanceState === "waiting" ? "waiting" : "running";
    case "completed":
    case "failed":
    case "cancelled":
    case "skipped":
      return state.status;
    default:
      return "pending";
  }
}

/**
 * A UUID (version 8, RFC 9562) from SHA-256 over the instance and block ids: the same node gets
 * the same id on every read, with nothing stored. The prefix keeps these digests apart from the
 * a_b_split hash, which also covers instance and block ids.
 */
export function executionNodeId(instanceId: string, blockId: string): string {
  const hex = sha256Hex(new TextEncoder().encode(`bulkhead.execution-node\u0000${instanceId.toLowerCase()}\u0000${blockId}`));
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** RFC 3339 UTC with milliseconds, like every other wire timestamp; null when unreadable. */
function timestamp(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}
