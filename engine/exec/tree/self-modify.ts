// self_modify (issue: full semantics, item 5): a step adds blocks to its own instance, never to
// another (it names no instance). The blocks are held to the create-time schema and rules, with
// ids unique across what the instance already has; they are kept in the instance's cursor, so
// the injection is written in the same commit as the step's output: one atomic write.
import { AppError } from "../../errors.ts";
import type { Block, Sequence, StepBlock } from "../../sequence/schema.ts";
import { validateBlocks } from "../../sequence/validate.ts";
import { walkBlocks } from "../../sequence/walk.ts";
import { isObject, type TreeCursor } from "./state.ts";

/** The instance's top-level blocks: its own once it has modified itself, else the sequence's. */
export function effectiveBlocks(sequence: Sequence, cursor: TreeCursor): readonly Block[] {
  return cursor.blocks ?? sequence.blocks;
}

/**
 * Validates an injection and returns the step's output and the instance's new top-level blocks
 * (the runner records them with the output, or not at all if the step's result is dropped). `position` is an index into the top-level blocks; absent,
 * the blocks go right after the top-level block holding the step.
 */
export function injectBlocks(
  sequence: Sequence, cursor: TreeCursor, step: StepBlock, params: unknown,
): { output: { injected_count: number; position: number }; blocks: Block[] } {
  const blocks = effectiveBlocks(sequence, cursor);
  const input = isObject(params) ? params : {};
  const ids = new Set<string>();
  let count = 0;
  walkBlocks(blocks, (block) => {
    ids.add(block.id);
    count += 1;
  });
  const { blocks: added } = validateBlocks(input.blocks, { ids, blockCount: count, path: ["params", "blocks"] });
  if (added.length === 0) throw new AppError("invalid_argument", "self_modify needs at least one block in params.blocks");
  const holder = blocks.findIndex((top) => top.id === step.id || contains(top, step.id));
  const position = input.position === undefined ? holder + 1 : input.position;
  if (typeof position !== "number" || !Number.isInteger(position) || position < 0 || position > blocks.length) {
    throw new AppError("invalid_argument", `self_modify position must be an integer from 0 to ${blocks.length}`);
  }
  if (position <= holder) throw new AppError("invalid_argument", "self_modify can only add blocks after the step that adds them");
  return {
    output: { injected_count: added.length, position },
    blocks: [...blocks.slice(0, position), ...added, ...blocks.slice(position)],
  };
}

function contains(root: Block, id: string): boolean {
  let found = false;
  walkBlocks([root], (block) => {
    if (block.id === id) found = true;
  });
  return found;
}
