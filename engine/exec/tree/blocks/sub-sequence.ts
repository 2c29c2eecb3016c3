// C.7 sub_sequence: a leaf like a step, run by the runner: it finds the sequence (caller's
// tenant and namespace; `version` or the latest non-deprecated; not found fails the block) and
// creates the child instance (`context.data = input`, depth capped at 16); the parent waits.
// The child completing completes the block with an output row under the block's own id holding
// the child's output rows; the child failing or being cancelled fails it. Bulkhead: a loop that
// re-enters the block starts a new child each iteration (Orch8 reuses the finished one).
import type { SubSequenceBlock } from "../../../sequence/schema.ts";
import { active, node, type Env, type Progress } from "../state.ts";

export function evaluateSubSequence(block: SubSequenceBlock, env: Env): Progress {
  const state = node(env, block.id);
  if (state.status === undefined) {
    state.status = "active";
    state.reachedAt = env.now.toISOString();
  }
  if (state.childId) return active({ waiting: true });
  return active({ runnable: [block] });
}
