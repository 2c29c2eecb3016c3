// Visiting the blocks of a parsed tree: the one place that knows where each block type keeps its
// children. Used by validation and by the evaluator.
import type { Block } from "./schema.ts";

/** Keys and indexes from a root to a value, as zod and AppError report them. */
export type Path = (string | number)[];

export interface ChildBlock {
  block: Block;
  /** Relative to the parent block, e.g. `["branches", 1, 0]` or `["steps", 2, "action"]`. */
  path: Path;
}

const list = (blocks: readonly Block[] | null, ...at: Path): ChildBlock[] =>
  (blocks ?? []).map((block, index) => ({ block, path: [...at, index] }));

/** The blocks directly inside `block`, in declaration order. */
export function childBlocks(block: Block): ChildBlock[] {
  switch (block.type) {
    case "step":
    case "sub_sequence":
      return [];
    case "parallel":
    case "race":
      return block.branches.flatMap((branch, index) => list(branch, "branches", index));
    case "loop":
    case "for_each":
      return list(block.body, "body");
    case "router":
      return [
        ...block.routes.flatMap((route, index) => list(route.blocks, "routes", index, "blocks")),
        ...list(block.default, "default"),
      ];
    case "try_catch":
      return [...list(block.try_block, "try_block"), ...list(block.catch_block, "catch_block"), ...list(block.finally_block, "finally_block")];
    case "a_b_split":
      return block.variants.flatMap((variant, index) => list(variant.blocks, "variants", index, "blocks"));
    case "cancellation_scope":
      return list(block.blocks, "blocks");
    case "saga":
      return block.steps.flatMap((step, index) => [
        { block: step.action, path: ["steps", index, "action"] },
        ...(step.compensation ? [{ block: step.compensation, path: ["steps", index, "compensation"] }] : []),
      ]);
  }
}

/**
 * Visits every block of `blocks` and everything nested in it, parents before children, with its
 * depth (`depth` for the blocks of `blocks` themselves, one more per enclosing block) and its path
 * (`path` followed by the keys down to the block). Returning `false` from `visit` skips the
 * block's children. Recursive: the trees it sees have passed `parseSequence`'s depth limits.
 */
export function walkBlocks(
  blocks: readonly Block[],
  visit: (block: Block, depth: number, path: Path) => void | boolean,
  depth = 0,
  path: Path = [],
): void {
  blocks.forEach((block, index) => visitTree(block, visit, depth, [...path, index]));
}

function visitTree(block: Block, visit: (block: Block, depth: number, path: Path) => void | boolean, depth: number, path: Path) {
  if (visit(block, depth, path) === false) return;
  for (const child of childBlocks(block)) visitTree(child.block, visit, depth + 1, [...path, ...child.path]);
}
