// GET /instances/{id}/tree (wire-format E.13): the instance's execution tree, one node per block
// of its sequence's main tree, as engine/exec/tree/nodes.ts reads it off the cursor.
import { notFound } from "../../../engine/errors.ts";
import { executionNodes } from "../../../engine/exec/tree/nodes.ts";
import { isObject } from "../../../engine/exec/tree/state.ts";
import { Sequence } from "../../../engine/sequence/schema.ts";
import { json } from "../http.ts";
import { storeOwning, type RestContext } from "../route.ts";

export async function getExecutionTree(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const source = await (await storeOwning(context, "instance", id)).getExecutionTreeSource(id);
  if (!source) throw notFound("instance");
  // Only the blocks matter here, so a definition stored before it was normalised (which
  // Sequence.parse as a whole may refuse, see wireSequence) still shows its tree.
  const definition = source.definition;
  const blocks = Sequence.shape.blocks.safeParse(isObject(definition) ? definition.blocks : undefined);
  if (!blocks.success) {
    // The instance exists, so not a 404; with no readable blocks there is no tree to show.
    context.log.warn({ instance_id: id }, "execution tree: the sequence definition has no readable blocks");
    return json(200, []);
  }
  return json(200, executionNodes({ blocks: blocks.data }, source.cursor, source.instance));
}
