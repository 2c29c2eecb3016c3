// Instance state changes (E.10 PATCH state, E.11 PATCH context; E.14 retry is in dead-letters.ts).
// The rules (F.2, fencing) live in engine storage; here: wire shapes and limits.
import { z } from "zod";
import { checkSize } from "../../../engine/size-limits.ts";
import { INSTANCE_STATES } from "../../../engine/storage/index.ts";
import { shapedBody } from "../body.ts";
import { InstanceContext } from "../context.ts";
import { empty } from "../http.ts";
import { storeOwning, type RestContext } from "../route.ts";

/** An unknown state string is a shape error (422), as serde's enum decoding makes it. */
const StateRequest = z.object({
  state: z.enum(INSTANCE_STATES),
  next_fire_at: z.iso.datetime({ offset: true }).nullish().transform((value) => (value ? new Date(value) : null)),
});
type StateRequest = z.output<typeof StateRequest>;

export const stateBody = shapedBody(StateRequest, () => []);

/** `context` is required; each of its sections missing reads as its default (Appendix 15). */
const ContextRequest = z.object({ context: InstanceContext });
type ContextRequest = z.output<typeof ContextRequest>;

export const contextBody = shapedBody(ContextRequest, () => []);

export async function patchState(context: RestContext<StateRequest>): Promise<Response> {
  const id = context.params.id!;
  const { state, next_fire_at: nextFireAt } = context.body;
  await (await storeOwning(context, "instance", id)).patchInstanceState(id, state, nextFireAt);
  return empty(200);
}

export async function patchContext(context: RestContext<ContextRequest>): Promise<Response> {
  const id = context.params.id!;
  const replacement = context.body.context;
  checkSize("context", replacement);
  await (await storeOwning(context, "instance", id)).replaceInstanceContext(id, replacement);
  return empty(200);
}
