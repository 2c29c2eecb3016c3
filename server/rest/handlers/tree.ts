// GET /instances/{id}/tree (wire-format E.13): the instance's execution tree, one node per block
// of its sequence's main tree, as the engine's read model (engine/read-model) describes it.
import { notFound } from "../../../engine/errors.ts";
import { describeInstance } from "../../../engine/read-model/describe-instance.ts";
import { json } from "../http.ts";
import { storeOwning, type RestContext } from "../route.ts";

export async function getExecutionTree(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const source = await (await storeOwning(context, "instance", id)).getExecutionTreeSource(id);
  if (!source) throw notFound("instance");
  const { hasTree, nodes } = describeInstance(source.definition, source.cursor, source.instance);
  if (!hasTree) {
    // The instance exists, so not a 404; with no readable blocks there is no tree to show.
    context.log.warn({ instance_id: id }, "execution tree: the sequence definition has no readable blocks");
    return json(200, []);
  }
  return json(200, nodes);
}
