// C.10 saga: run each step's action in order; all succeed → completed. When step k's action
// fails: write context.data._error = {failed_step, source: "saga", block_id}, run the
// compensations of steps k-1 .. 0 in reverse (those that have one; their failures are ignored),
// and the saga then always fails.
import type { SagaBlock } from "../../../sequence/schema.ts";
import type { Evaluator } from "../evaluate.ts";
import { node, setData, settled, type Env, type Progress } from "../state.ts";

export function evaluateSaga(block: SagaBlock, env: Env, ev: Evaluator): Progress {
  const state = node(env, block.id);
  if (state.failedStep === undefined) {
    for (const [index, step] of block.steps.entries()) {
      const action = ev.block(step.action, env);
      if (action.kind === "active") return action;
      if (action.status === "cancelled") return settled("cancelled");
      if (action.status === "failed") {
        state.failedStep = index;
        state.compensating = index - 1;
        setData(env, "_error", { failed_step: step.id, source: "saga", block_id: block.id });
        break;
      }
    }
    if (state.failedStep === undefined) return settled("completed");
  }
  for (; state.compensating! >= 0; state.compensating!--) {
    const compensation = block.steps[state.compensating!]!.compensation;
    if (!compensation) continue;
    const undo = ev.block(compensation, env);
    if (undo.kind === "active") return undo;
  }
  return settled("failed");
}
