// C.3 loop. Before each iteration: stop (completed) once `max_iterations` iterations are done or
// when `condition` is falsy; the condition reads the instance context only, never outputs, and a
// parse error reads as false. After each iteration: a `{"_iterations": n}` marker row; a failed
// iteration fails the loop unless `continue_on_error`; a truthy `break_on` ends it; otherwise the
// body is reset (nested loops start fresh counters, worker tasks of the old iteration go) and runs
// again, after `poll_interval` seconds when set.
import { evaluateCondition } from "../../../sequence/expression.ts";
import type { LoopBlock } from "../../../sequence/schema.ts";
import type { Evaluator } from "../evaluate.ts";
import { active, node, reset, scopeOf, settled, type Env, type Progress } from "../state.ts";

export function evaluateLoop(block: LoopBlock, env: Env, ev: Evaluator): Progress {
  const state = node(env, block.id);
  for (;;) {
    if (!state.inIteration) {
      if (state.cancelRequested) return settled("cancelled");
      const due = state.notBefore ? Date.parse(state.notBefore) : 0;
      if (due > env.now.getTime()) return active({ until: due });
      if ((state.iteration ?? 0) >= block.max_iterations) return settled("completed");
      if (!evaluateCondition(block.condition, scopeOf(env), "lenient", false)) return settled("completed");
      state.inIteration = true;
      delete state.notBefore;
    }
    const body = ev.body(block.body, env);
    if (body.kind === "active") return body;

    state.inIteration = false;
    state.iteration = (state.iteration ?? 0) + 1;
    env.newOutputs.push({ blockId: block.id, output: { _iterations: state.iteration }, attempt: 0 });
    if (body.status === "cancelled") return settled("cancelled");
    if (body.status === "failed" && !block.continue_on_error) return settled("failed");
    if (block.break_on !== undefined && evaluateCondition(block.break_on, scopeOf(env), "lenient", false)) {
      return settled("completed");
    }
    reset(env, block.body);
    if (block.poll_interval) state.notBefore = new Date(env.now.getTime() + block.poll_interval * 1000).toISOString();
  }
}
