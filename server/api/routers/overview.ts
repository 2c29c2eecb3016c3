import { tenantProcedure, router } from "../trpc.ts";

const RECENT_FAILURES = 10;

export const overviewRouter = router({
  instanceCounts: tenantProcedure.query(({ ctx }) => ctx.store.countInstancesByState()),
  sequences: tenantProcedure.query(async ({ ctx }) => {
    const sequences = await ctx.store.listSequences();
    return sequences.map((s) => ({ ...s, createdAt: s.createdAt.toISOString() }));
  }),
  /** Completed and failed instances per minute over the last 60 minutes, oldest minute first. */
  throughput: tenantProcedure.query(async ({ ctx }) => {
    const buckets = await ctx.store.instanceThroughput(new Date());
    return {
      bucketSecs: 60,
      buckets: buckets.map((b) => ({ start: b.start.toISOString(), completed: b.completed, failed: b.failed })),
    };
  }),
  /** The last 10 failed instances, newest failure first, with their sequence names. */
  recentFailures: tenantProcedure.query(async ({ ctx }) => {
    const failures = await ctx.store.listRecentFailures(RECENT_FAILURES);
    return failures.map((f) => ({
      id: f.id, sequenceId: f.sequenceId, sequenceName: f.sequenceName, sequenceVersion: f.sequenceVersion,
      completedAt: f.completedAt?.toISOString() ?? null,
    }));
  }),
});
