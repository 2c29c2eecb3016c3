import { tenantProcedure, router } from "../trpc.ts";

export const overviewRouter = router({
  instanceCounts: tenantProcedure.query(async ({ ctx }) => {
    const store = await ctx.services.storage.tenant(ctx.tenant.id);
    return store.countInstancesByState();
  }),
  sequences: tenantProcedure.query(async ({ ctx }) => {
    const store = await ctx.services.storage.tenant(ctx.tenant.id);
    const sequences = await store.listSequences();
    return sequences.map((s) => ({ ...s, createdAt: s.createdAt.toISOString() }));
  }),
});
