// C.5 router: on entry the route conditions are evaluated in order (lenient, seeing outputs) and
// the first truthy one wins; no match runs `default` when present, else completes with nothing
// run. The router fails iff a block of the chosen route fails. Re-entry (a loop's next iteration
// resets the router) evaluates the conditions again.
import { evaluateCondition } from "../../../sequence/expression.ts";
import type { RouterBlock } from "../../../sequence/schema.ts";
import type { Evaluator } from "../evaluate.ts";
import { node, scopeOf, settled, type Env, type Progress } from "../state.ts";

export function evaluateRouter(block: RouterBlock, env: Env, ev: Evaluator): Progress {
  const state = node(env, block.id);
  if (state.route === undefined) {
    const match = block.routes.findIndex((route) => evaluateCondition(route.condition, scopeOf(env), "lenient", true));
    state.route = match >= 0 ? match : block.default ? -1 : null;
  }
  if (state.route === null) return settled("completed");
  return ev.body(state.route === -1 ? block.default! : block.routes[state.route]!.blocks, env);
}
