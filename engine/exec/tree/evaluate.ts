// The block-tree evaluator: one pass over the sequence decides, from the cursor alone, which
// steps may run now, what is waiting, and what has settled. Each block type is one module under
// blocks/, whose comments carry the rules of wire-format section C; this file only dispatches.
import type { Block } from "../../sequence/schema.ts";
import { evaluateABSplit } from "./blocks/a-b-split.ts";
import { evaluateForEach } from "./blocks/for-each.ts";
import { evaluateLoop } from "./blocks/loop.ts";
import { evaluateParallel } from "./blocks/parallel.ts";
import { evaluateRace } from "./blocks/race.ts";
import { evaluateRouter } from "./blocks/router.ts";
import { evaluateSaga } from "./blocks/saga.ts";
import { evaluateStep } from "./blocks/step.ts";
import { evaluateSubSequence } from "./blocks/sub-sequence.ts";
import { evaluateTryCatch } from "./blocks/try-catch.ts";
import { SETTLED, settled, type Env, type Progress, type Settled } from "./state.ts";

export interface Evaluator {
  block(block: Block, env: Env): Progress;
  /** A sequential body (C.0): one block at a time, stopping at the first that does not complete. */
  body(blocks: readonly Block[], env: Env): Progress;
}

export const evaluator: Evaluator = {
  block(block, env) {
    const state = env.cursor.nodes[block.id];
    if (state?.status && SETTLED.has(state.status)) {
      return settled(state.status === "skipped" ? "completed" : (state.status as Settled));
    }
    // A cancel signal reached this block before it started: it never starts.
    if (state?.cancelRequested && state.status === undefined) return record(env, block, settled("cancelled"));
    return record(env, block, dispatch(block, env));
  },

  body(blocks, env) {
    for (const block of blocks) {
      const progress = evaluator.block(block, env);
      if (progress.kind === "active" || progress.status !== "completed") return progress;
    }
    return settled("completed");
  },
};

function dispatch(block: Block, env: Env): Progress {
  switch (block.type) {
    case "step":
      return evaluateStep(block, env);
    case "parallel":
      return evaluateParallel(block, env, evaluator);
    case "race":
      return evaluateRace(block, env, evaluator);
    case "loop":
      return evaluateLoop(block, env, evaluator);
    case "for_each":
      return evaluateForEach(block, env, evaluator);
    case "router":
      return evaluateRouter(block, env, evaluator);
    case "try_catch":
      return evaluateTryCatch(block, env, evaluator);
    case "a_b_split":
      return evaluateABSplit(block, env, evaluator);
    case "cancellation_scope":
      // C.9: its blocks run in order; the scope only matters to cancellation (cancel.ts).
      return evaluator.body(block.blocks, env);
    case "saga":
      return evaluateSaga(block, env, evaluator);
    case "sub_sequence":
      return evaluateSubSequence(block, env);
  }
}

/** Remembers a composite's settled status so later passes do not re-evaluate it. */
function record(env: Env, block: Block, progress: Progress): Progress {
  const state = (env.cursor.nodes[block.id] ??= {});
  if (progress.kind === "settled") state.status = progress.status;
  else if (block.type !== "step" && block.type !== "sub_sequence") state.status = "active";
  return progress;
}
