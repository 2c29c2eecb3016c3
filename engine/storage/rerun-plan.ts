// What a DLQ retry and a resume-from (wire-format J) make of an instance's execution tree, decided
// from its stored cursor and its sequence's blocks alone: which top-level blocks keep their place,
// which restart (their output rows and worker tasks wiped), and the cursor the engine then picks
// up. Pure: rerun.ts reads the rows and writes the result.
import { readTreeCursor } from "../exec/tree/cursor.ts";
import type { NodeState, TreeCursor } from "../exec/tree/state.ts";
import { isObject } from "../model.ts";
import { Sequence, type Block } from "../sequence/schema.ts";
import { walkBlocks } from "../sequence/walk.ts";

export interface RerunPlan {
  /** The cursor the engine resumes from. */
  cursor: TreeCursor;
  /** The restarted blocks and everything nested in them: their rows and worker tasks go. */
  wiped: string[];
}

/** The top-level blocks of a stored definition, or null when they cannot be read (no sequence, an old form). */
export function definitionBlocks(definition: unknown): Block[] | null {
  const parsed = Sequence.shape.blocks.safeParse(isObject(definition) ? definition.blocks : undefined);
  return parsed.success ? parsed.data : null;
}

const isDone = (node: NodeState | undefined) => node?.status === "completed" || node?.status === "skipped";

function idsUnder(blocks: readonly Block[]): string[] {
  const ids: string[] = [];
  walkBlocks(blocks, (block) => void ids.push(block.id));
  return ids;
}

/** The instance's own top-level blocks (a self_modify step may have added some) and its tree, cleanup discarded. */
function treeOf(storedCursor: unknown, blocks: Block[]) {
  const stored = readTreeCursor(storedCursor, { blocks } as Sequence);
  const top = Array.isArray(stored.blocks) ? stored.blocks : blocks;
  const nodes = isObject(stored.nodes) ? (stored.nodes as Record<string, NodeState>) : {};
  return { top, nodes, extended: stored.blocks };
}

/** A cursor holding only the nodes of `kept` blocks (their subtrees included), as they were. */
function keeping(kept: readonly Block[], nodes: Record<string, NodeState>, extended: Block[] | undefined): TreeCursor {
  const cursor: TreeCursor = { v: 2, nodes: {} };
  for (const id of idsUnder(kept)) if (nodes[id]) cursor.nodes[id] = nodes[id]!;
  if (extended) cursor.blocks = extended;
  return cursor;
}

/**
 * Retry: completed top-level blocks keep their nodes and rows; the first one that did not
 * complete restarts from scratch, and so does everything after it. A restarted top-level step
 * continues its attempt counter from its last recorded attempt (`lastAttempt`: the highest
 * attempt of its node and of its output rows), so a retry budget already used stays used: it
 * gets one more run, and retries only if attempts are left. Nested steps of a restarted
 * composite start afresh with it.
 */
export function retryPlan(blocks: Block[], storedCursor: unknown, lastAttempt: (blockId: string) => number | null, now: Date): RerunPlan {
  const { top, nodes, extended } = treeOf(storedCursor, blocks);
  const restart = top.findIndex((block) => !isDone(nodes[block.id]));
  if (restart < 0) return { cursor: keeping(top, nodes, extended), wiped: [] };
  const cursor = keeping(top.slice(0, restart), nodes, extended);
  const first = top[restart]!;
  const last = first.type === "step" ? Math.max(nodes[first.id]?.attempt ?? -1, lastAttempt(first.id) ?? -1) : -1;
  if (last >= 0) {
    // Started, at its next attempt: a node without a status would start over at attempt 0.
    cursor.nodes[first.id] = { status: "active", attempt: last + 1, reachedAt: now.toISOString() };
  }
  return { cursor, wiped: idsUnder(top.slice(restart)) };
}

/**
 * The top-level block of the instance that a retry restarts (the first that did not complete),
 * or null: the one block whose attempts retryPlan needs to know.
 */
export function restartedBlock(blocks: Block[], storedCursor: unknown): string | null {
  const { top, nodes } = treeOf(storedCursor, blocks);
  return top.find((block) => !isDone(nodes[block.id]))?.id ?? null;
}

/**
 * Resume-from `blockId`: that top-level block and every later one restart from scratch; the
 * earlier ones are not run again (a completed one keeps its nodes, any other counts as skipped).
 * null when `blockId` is not a top-level block of the instance.
 */
export function resumeFromPlan(blocks: Block[], storedCursor: unknown, blockId: string): RerunPlan | null {
  const { top, nodes, extended } = treeOf(storedCursor, blocks);
  const from = top.findIndex((block) => block.id === blockId);
  if (from < 0) return null;
  const earlier = top.slice(0, from);
  const cursor = keeping(earlier.filter((block) => isDone(nodes[block.id])), nodes, extended);
  for (const block of earlier) if (!isDone(nodes[block.id])) cursor.nodes[block.id] = { status: "skipped" };
  return { cursor, wiped: idsUnder(top.slice(from)) };
}
