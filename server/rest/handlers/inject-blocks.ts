// POST /instances/{id}/inject-blocks (wire-format V): blocks added to one instance's own list,
// checked here against the blocks it has now, then queued as a signal the engine applies at its
// next signal check (as it applies a pause), so a running instance's commit cannot overwrite
// them. The sequence is not changed. A finished instance takes no blocks (G's 400).
import { z } from "zod";
import { AppError, notFound } from "../../../engine/errors.ts";
import { injectInto } from "../../../engine/sequence/inject-blocks.ts";
import { isObject } from "../../../engine/model.ts";
import { Block } from "../../../engine/sequence/schema.ts";
import { requiredJson, shapedBody } from "../body.ts";
import { json } from "../http.ts";
import { storeOwning, type RestContext } from "../route.ts";

const InjectRequest = z.object({ blocks: requiredJson("blocks"), position: z.int().min(0).nullish() });
type InjectRequest = z.output<typeof InjectRequest>;
export const injectBlocksBody = shapedBody(InjectRequest, () => []);

const invalid = (message: string) => new AppError("invalid_argument", message, ["blocks"]);

/** V's three refusals, in its words, before the sequence rules (unique ids and the rest). */
function checkShape(blocks: unknown): void {
  if (!Array.isArray(blocks)) throw invalid("blocks must be a JSON array");
  if (blocks.length === 0) throw invalid("blocks array must not be empty");
  blocks.forEach((block, index) => {
    if (!Block.safeParse(block).success) throw invalid(`blocks[${index}] is not a valid BlockDefinition`);
  });
}

/** The instance's top-level blocks now: its own list once it has one (a self_modify step, an earlier injection), else the sequence's. */
function currentBlocks(cursor: unknown, definition: unknown): Block[] {
  const own = isObject(cursor) && Array.isArray(cursor.blocks) ? cursor.blocks : isObject(definition) ? definition.blocks : [];
  return (Array.isArray(own) ? own : []) as Block[];
}

export async function injectBlocks(context: RestContext<InjectRequest>): Promise<Response> {
  const id = context.params.id!;
  const store = await storeOwning(context, "instance", id);
  const source = await store.getExecutionTreeSource(id);
  if (!source) throw notFound("instance");
  checkShape(context.body.blocks);
  const { added, position } = injectInto(currentBlocks(source.cursor, source.definition), context.body.blocks, context.body.position);
  await store.enqueueSignalIfActive(id, { type: "inject_blocks", payload: { blocks: added, position } });
  return json(200, { injected_block_ids: added.map((block) => block.id), position, total_injected: added.length });
}
