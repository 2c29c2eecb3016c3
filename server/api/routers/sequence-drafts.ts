// The editor's autosaved drafts, on the server beside the browser's copy: one per tenant and
// edited sequence (the version's id, or a new sequence's own id). A draft is the editor's work as
// it stands, valid or not; publishing it is sequences.create.
import { z } from "zod";
import { UUID_PATTERN } from "../../../engine/model.ts";
import { router, tenantProcedure } from "../trpc.ts";

/** The edited sequence's id, lower-cased as PostgreSQL prints it. */
const DraftKey = z.string().regex(UUID_PATTERN).transform((id) => id.toLowerCase());

export const sequenceDraftsRouter = router({
  /** The stored draft, or null. */
  get: tenantProcedure.input(z.object({ key: DraftKey })).query(async ({ ctx, input }) => {
    const draft = await ctx.store.getSequenceDraft(input.key);
    return draft && { definition: draft.definition, updatedAt: draft.updatedAt.toISOString() };
  }),

  /** Stores the draft as of `updatedAt` (the browser's edit time), unless a later one is stored. */
  save: tenantProcedure
    .input(z.object({ key: DraftKey, definition: z.json(), updatedAt: z.iso.datetime() }))
    .mutation(async ({ ctx, input }) => {
      const stored = await ctx.storeForWrite().putSequenceDraft(input.key, { definition: input.definition, updatedAt: new Date(input.updatedAt) });
      return { updatedAt: stored.toISOString() };
    }),

  discard: tenantProcedure.input(z.object({ key: DraftKey })).mutation(async ({ ctx, input }) => {
    await ctx.storeForWrite().deleteSequenceDraft(input.key);
    return { discarded: true };
  }),
});
