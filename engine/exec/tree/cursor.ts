// Reading a stored cursor. Version 1 (flat sequences: an index and the current step's attempt)
// came first; it converts to the tree cursor so instances started before keep their place.
import type { Sequence } from "../../sequence/schema.ts";
import type { TreeCursor } from "./state.ts";

interface FlatCursorV1 {
  v: 1;
  index: number;
  attempt: number;
  reachedAt: string;
  startedAt: string | null;
}

export function readTreeCursor(stored: unknown, sequence: Sequence): TreeCursor {
  if (stored === null || stored === undefined) return { v: 2, nodes: {} };
  const cursor = stored as TreeCursor | FlatCursorV1;
  if (cursor.v === 2) return cursor;
  const nodes: TreeCursor["nodes"] = {};
  sequence.blocks.forEach((block, i) => {
    if (i < cursor.index) nodes[block.id] = { status: "completed" };
    else if (i === cursor.index) {
      nodes[block.id] = { status: "active", attempt: cursor.attempt, reachedAt: cursor.reachedAt, ...(cursor.startedAt ? { startedAt: cursor.startedAt } : {}) };
    }
  });
  return { v: 2, nodes };
}
