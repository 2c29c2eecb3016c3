// C.4 for_each. On first entry the collection (a dotted path under context.data, or a template
// that yields an array) is resolved, truncated to `max_iterations` and snapshotted: later context
// edits do not change the count; a missing, non-array or empty collection completes at once. For
// each element in order: write it to context.data[item_var], run the body, move on. A failing
// iteration fails the for_each; either way the variable is removed at the end. Marker rows
// `{_index, _total, _item_var, _snapshot_ref}` at the start and after each iteration.
import { navigate, splitPath } from "../../../sequence/paths.ts";
import type { ForEachBlock } from "../../../sequence/schema.ts";
import { resolveTemplateString } from "../../../sequence/template.ts";
import type { Evaluator } from "../evaluate.ts";
import { node, reset, scopeOf, setData, settled, type Env, type Progress } from "../state.ts";

function resolveCollection(block: ForEachBlock, env: Env): unknown {
  if (block.collection.includes("{{")) return resolveTemplateString(block.collection, scopeOf(env));
  return navigate(env.context.data, splitPath(block.collection));
}

export function evaluateForEach(block: ForEachBlock, env: Env, ev: Evaluator): Progress {
  const state = node(env, block.id);
  const marker = (index: number) =>
    env.newOutputs.push({
      blockId: block.id,
      output: { _index: index, _total: state.items!.length, _item_var: block.item_var, _snapshot_ref: `${env.instanceId}:${block.id}` },
      attempt: 0,
    });

  if (state.items === undefined) {
    const collection = resolveCollection(block, env);
    if (!Array.isArray(collection) || collection.length === 0) return settled("completed");
    state.items = collection.slice(0, block.max_iterations);
    state.iteration = 0;
    marker(0);
  }
  const finish = (status: "completed" | "failed" | "cancelled") => {
    setData(env, block.item_var, undefined);
    return settled(status);
  };
  for (;;) {
    const index = state.iteration ?? 0;
    if (!state.inIteration) {
      if (state.cancelRequested) return finish("cancelled");
      if (index >= state.items.length) return finish("completed");
      setData(env, block.item_var, state.items[index]);
      state.inIteration = true;
    }
    const body = ev.body(block.body, env);
    if (body.kind === "active") return body;
    state.inIteration = false;
    state.iteration = index + 1;
    marker(index + 1);
    if (body.status !== "completed") return finish(body.status);
    reset(env, block.body);
  }
}
