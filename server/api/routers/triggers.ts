// A tenant's triggers for the settings page: every member sees them, their recent deliveries,
// and may send a test event (it starts a run, as Run does); admins create and remove them. The
// same checks, writes and audit lines as REST /triggers (server/triggers.ts). A generated secret
// is returned once, by the create that made it, and never again.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { DELIVERIES_KEPT, type TriggerDelivery, type TriggerRecord } from "../../../engine/storage/index.ts";
import { createTrigger, fire, removeTrigger, triggerNotFound, webhookPath } from "../../triggers.ts";
import { router, tenantAdminProcedure, tenantProcedure } from "../trpc.ts";

// Format checks are the service's (one message per fault); this only bounds the size.
const slug = z.string().max(255);

const summary = (trigger: TriggerRecord) => ({
  slug: trigger.slug,
  namespace: trigger.namespace,
  sequenceName: trigger.sequenceName,
  sequenceVersion: trigger.sequenceVersion,
  triggerType: trigger.triggerType,
  hasSecret: trigger.hasSecret,
  enabled: trigger.enabled,
  /** The public route, for webhook triggers (relative to the app's origin). */
  webhookPath: trigger.triggerType === "webhook" ? webhookPath(trigger.slug) : null,
  createdAt: trigger.createdAt.toISOString(),
});

const delivery = (d: TriggerDelivery) => ({
  id: d.id, source: d.source, status: d.status, outcome: d.outcome, instanceId: d.instanceId, receivedAt: d.receivedAt.toISOString(),
});

export const triggersRouter = router({
  list: tenantProcedure.query(async ({ ctx }) => (await ctx.store.listTriggers(1000)).map(summary)),

  deliveries: tenantProcedure.input(z.object({ slug })).query(async ({ ctx, input }) => {
    if (!(await ctx.store.getTrigger(input.slug))) throw triggerNotFound(input.slug);
    return (await ctx.store.listDeliveries(input.slug, DELIVERIES_KEPT)).map(delivery);
  }),

  /** Creates a trigger; with `generateSecret`, a webhook's signing secret, shown in this answer only. */
  create: tenantAdminProcedure
    .input(z.object({
      slug,
      sequenceName: z.string().trim().min(1, "pick a sequence").max(255),
      sequenceVersion: z.int().min(1).nullable(),
      triggerType: z.enum(["webhook", "event"]),
      generateSecret: z.boolean(),
    }))
    .mutation(async ({ ctx, input }) => {
      const by = { actor: ctx.user.email, actorUserId: ctx.user.id };
      const secret = input.generateSecret ? randomBytes(32).toString("base64url") : null;
      const trigger = await createTrigger(ctx.services, ctx.storeForWrite(), by, {
        slug: input.slug, sequence_name: input.sequenceName, version: input.sequenceVersion, trigger_type: input.triggerType, secret,
      });
      return { ...summary(trigger), secret };
    }),

  remove: tenantAdminProcedure.input(z.object({ slug })).mutation(async ({ ctx, input }) => {
    const removed = await removeTrigger(ctx.services, ctx.storeForWrite(), { actor: ctx.user.email, actorUserId: ctx.user.id }, input.slug);
    if (!removed) throw triggerNotFound(input.slug);
    return summary(removed);
  }),

  /** Fires the trigger as /fire would, with `data` as context.data; recorded as a test delivery. */
  sendTest: tenantProcedure.input(z.object({ slug, data: z.unknown() })).mutation(async ({ ctx, input }) => {
    const store = ctx.storeForWrite();
    const found = await store.getTrigger(input.slug);
    if (!found) throw triggerNotFound(input.slug);
    const fired = await fire(store, found, input.data ?? null, { source: "test_event", by: ctx.user.email }, "test", 201);
    return { instanceId: fired.instanceId, sequenceName: fired.sequenceName };
  }),
});
