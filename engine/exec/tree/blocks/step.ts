// C.11 step: a leaf. The evaluator decides only whether it may run now; running it (pre-flight,
// handler or worker task, retries) is the runner's job, which settles the node.
import { evaluateCondition } from "../../../sequence/expression.ts";
import type { StepBlock } from "../../../sequence/schema.ts";
import { active, node, scopeOf, settled, type Env, type Progress } from "../state.ts";
import { evaluateGate, inputGate } from "./human-input.ts";

export function evaluateStep(step: StepBlock, env: Env): Progress {
  const state = node(env, step.id);
  if (state.status === undefined) {
    // B.2: `when` is strict (a parse error fails the step) and sees outputs; falsy skips the step.
    if (step.when !== undefined) {
      try {
        if (!evaluateCondition(step.when, scopeOf(env), "strict", true)) {
          state.status = "skipped";
          return settled("completed");
        }
      } catch (error) {
        state.status = "failed";
        state.failure = { message: (error as Error).message, retryable: false, code: "when" };
        return settled("failed");
      }
    }
    state.status = "active";
    state.attempt = 0;
    state.reachedAt = env.now.toISOString();
  }
  if (state.taskId) return active({ waiting: true });
  const gate = inputGate(step);
  if (gate) {
    const waiting = evaluateGate(step, gate, state, env);
    if (waiting) return waiting;
  }
  const due = state.notBefore ? Date.parse(state.notBefore) : 0;
  if (due > env.now.getTime()) return active({ until: due });
  return active({ runnable: [step] });
}
