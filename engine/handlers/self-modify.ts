// `self_modify` (H): a step adds blocks to its own instance, never to another (it names no
// instance). Params: { blocks, position? }. The blocks are held to the create-time schema and
// rules, with ids unique across what the instance already has. They come back with the step's
// success, so the engine writes them in the same commit as its output, or not at all.
import { AppError } from "../errors.ts";
import type { Block } from "../sequence/schema.ts";
import { validateBlocks } from "../sequence/validate.ts";
import { walkBlocks } from "../sequence/walk.ts";
import { SelfModifyParams } from "./coordination-params.ts";
import { failure, paramsObject, type Handler } from "./types.ts";

export const selfModify: Handler = async (input) => {
  try {
    const { output, blocks } = injectBlocks(input.blocks, input.blockId, input.params);
    return { kind: "success", output, blocks };
  } catch (error) {
    if (error instanceof AppError) return failure(false, error.message);
    throw error;
  }
};

/**
 * The instance's new top-level blocks. `position` is an index into them; absent, the blocks go
 * right after the top-level block holding the step, and never before it.
 */
export function injectBlocks(
  blocks: readonly Block[], stepId: string, params: unknown,
): { output: { injected_count: number; position: number }; blocks: Block[] } {
  const input = paramsObject(params) ?? {};
  const ids = new Set<string>();
  let count = 0;
  walkBlocks(blocks, (block) => {
    ids.add(block.id);
    count += 1;
  });
  const { blocks: added } = validateBlocks(input.blocks, { ids, blockCount: count, path: ["params", "blocks"] });
  if (added.length === 0) throw new AppError("invalid_argument", "self_modify needs at least one block in params.blocks");
  const holder = blocks.findIndex((top) => contains(top, stepId));
  // The blocks themselves are held to the sequence rules above; the schema checks position's type.
  const shape = SelfModifyParams.safeParse(input);
  const position = shape.success ? (shape.data.position ?? holder + 1) : -1;
  if (position < 0 || position > blocks.length) {
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
