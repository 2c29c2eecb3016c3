// A tenant's trigger slugs for the settings page: every member sees them, admins create, repoint
// and remove them. The same writes and audit lines as REST /triggers (server/triggers.ts).
import { z } from "zod";
import { notFound } from "../../../engine/errors.ts";
import type { TriggerRecord } from "../../../engine/storage/index.ts";
import { removeTrigger, saveTrigger } from "../../triggers.ts";
import { router, tenantAdminProcedure, tenantProcedure } from "../trpc.ts";

// Format checks are the store's (one message for a bad slug); this only bounds the size.
const slug = z.string().max(64);

const summary = (trigger: TriggerRecord) => ({
  slug: trigger.slug,
  sequenceName: trigger.sequenceName,
  sequenceVersion: trigger.sequenceVersion,
  createdAt: trigger.createdAt.toISOString(),
  updatedAt: trigger.updatedAt.toISOString(),
});

export const triggersRouter = router({
  list: tenantProcedure.query(async ({ ctx }) => (await ctx.store.listTriggers()).map(summary)),

  /** Creates or repoints a trigger; `created` tells which. */
  put: tenantAdminProcedure
    .input(z.object({ slug, sequenceName: z.string().trim().min(1, "pick a sequence").max(256), sequenceVersion: z.int().min(1).nullable() }))
    .mutation(async ({ ctx, input }) => {
      const by = { actor: ctx.user.email, actorUserId: ctx.user.id };
      const { trigger, created } = await saveTrigger(ctx.services.prisma, ctx.storeForWrite(), by, input.slug, {
        sequenceName: input.sequenceName, sequenceVersion: input.sequenceVersion,
      });
      return { ...summary(trigger), created };
    }),

  remove: tenantAdminProcedure.input(z.object({ slug })).mutation(async ({ ctx, input }) => {
    const removed = await removeTrigger(ctx.services.prisma, ctx.storeForWrite(), { actor: ctx.user.email, actorUserId: ctx.user.id }, input.slug);
    if (!removed) throw notFound("trigger");
    return summary(removed);
  }),
});
