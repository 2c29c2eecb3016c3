// C.1 parallel: every branch runs at once (sequentially within a branch). No fail-fast: it waits
// until every branch has drained, then fails if any branch failed, else completes.
import type { ParallelBlock } from "../../../sequence/schema.ts";
import type { Evaluator } from "../evaluate.ts";
import { merge, settled, worst, type Env, type Progress, type Settled } from "../state.ts";

export function evaluateParallel(block: ParallelBlock, env: Env, ev: Evaluator): Progress {
  const branches = block.branches.map((branch) => ev.body(branch, env));
  if (branches.every((p) => p.kind === "settled")) {
    return settled(worst(branches.map((p) => (p as { status: Settled }).status)));
  }
  return merge(branches);
}
