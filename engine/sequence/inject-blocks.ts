// Blocks added to one instance from outside (wire-format V, POST /instances/{id}/inject-blocks):
// held to the create-time schema and rules, ids unique across what the instance already has,
// inserted into its own top-level list at `position` (clamped; the end by default). The sequence
// is not changed. REST checks a request with this; the engine applies the queued signal with it
// again, against the blocks the run has then.
import type { Block } from "./schema.ts";
import { validateBlocks } from "./validate.ts";
import { walkBlocks } from "./walk.ts";

export interface Injection {
  blocks: Block[];
  added: Block[];
  position: number;
}

/** The instance's new top-level blocks; throws AppError (invalid_argument) for blocks that break the rules. */
export function injectInto(current: readonly Block[], candidates: unknown, position: number | null | undefined): Injection {
  const ids = new Set<string>();
  let count = 0;
  walkBlocks(current, (block) => {
    ids.add(block.id);
    count += 1;
  });
  const { blocks: added } = validateBlocks(candidates, { ids, blockCount: count, path: ["blocks"] });
  const at = position === null || position === undefined ? current.length : Math.min(Math.max(0, Math.trunc(position)), current.length);
  return { blocks: [...current.slice(0, at), ...added, ...current.slice(at)], added, position: at };
}
