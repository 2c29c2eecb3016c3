// Trigger slugs over REST: a tenant's names for the sequences emit_event spawns. The list, one
// trigger, PUT to create or repoint (201 created, 200 replaced), DELETE (204). Another tenant's
// slug is a slug this tenant does not have: the same 404.
import { z } from "zod";
import { notFound } from "../../../engine/errors.ts";
import type { TriggerRecord } from "../../../engine/storage/index.ts";
import { removeTrigger, saveTrigger, TriggerTarget } from "../../triggers.ts";
import { keyActor } from "../auth.ts";
import { shapedBody } from "../body.ts";
import { empty, json } from "../http.ts";
import { requireStore, type RestContext } from "../route.ts";

const TriggerBody = TriggerTarget.extend({ tenant_id: z.string().optional() });
type TriggerBody = z.output<typeof TriggerBody>;

export const triggerBody = shapedBody(TriggerBody, (body) => [body.tenant_id]);

export function wireTrigger(tenantId: string, trigger: TriggerRecord) {
  return {
    tenant_id: tenantId,
    slug: trigger.slug,
    sequence_name: trigger.sequenceName,
    sequence_version: trigger.sequenceVersion,
    created_at: trigger.createdAt.toISOString(),
    updated_at: trigger.updatedAt.toISOString(),
  };
}

export async function listTriggers(context: RestContext<unknown>): Promise<Response> {
  const store = requireStore(context);
  return json(200, (await store.listTriggers()).map((trigger) => wireTrigger(store.tenantId, trigger)));
}

export async function getTrigger(context: RestContext<unknown>): Promise<Response> {
  const store = requireStore(context);
  const trigger = await store.getTrigger(context.params.slug!);
  if (!trigger) throw notFound("trigger");
  return json(200, wireTrigger(store.tenantId, trigger));
}

export async function putTrigger(context: RestContext<TriggerBody>): Promise<Response> {
  const store = requireStore(context);
  const { sequence_name: sequenceName, sequence_version: sequenceVersion } = context.body;
  const by = { actor: await keyActor(context.services.prisma, context.principal!) };
  const { trigger, created } = await saveTrigger(context.services.prisma, store, by, context.params.slug!, { sequenceName, sequenceVersion });
  return json(created ? 201 : 200, wireTrigger(store.tenantId, trigger));
}

export async function deleteTrigger(context: RestContext<unknown>): Promise<Response> {
  const store = requireStore(context);
  const by = { actor: await keyActor(context.services.prisma, context.principal!) };
  if (!(await removeTrigger(context.services.prisma, store, by, context.params.slug!))) throw notFound("trigger");
  return empty(204);
}
