// External workers for the web app (wire-format T's views): a tenant's Workers page (its workers
// by their polls, task counts by state and handler, claimed tasks and the stale ones) and the
// operator console's fleet view across every tenant. A claimed task's heartbeat is stale after
// STALE_HEARTBEAT_MS without one (engine/storage/worker-tasks.ts says why 30 s); "alive" is
// REST GET /workers' default: a poll within the last 60 s.
import { z } from "zod";
import { STALE_HEARTBEAT_MS, WORKER_TASK_STATES } from "../../../engine/storage/index.ts";
import { operatorProcedure, router, tenantProcedure } from "../trpc.ts";

const ALIVE_WITHIN_MS = 60_000;
const PAGE = { default: 50, max: 200 };
const FLEET = { default: 100, max: 500 };

const staleness = () => ({ staleAfterSecs: STALE_HEARTBEAT_MS / 1000, aliveWithinSecs: ALIVE_WITHIN_MS / 1000 });
const Offset = z.int().min(0).max(1_000_000).default(0);
const Limit = z.int().min(1).max(PAGE.max).default(PAGE.default);

const tenantWorkers = {
  /** The tenant's workers, most recently seen first, a page at a time; `aliveOnly`: polled within the last 60 s. */
  list: tenantProcedure
    .input(z.object({ aliveOnly: z.boolean().default(false), offset: Offset, limit: Limit }))
    .query(async ({ ctx, input }) => {
      const now = Date.now();
      const [workers, claims] = await Promise.all([
        // One more than asked: whether there is a next page.
        ctx.store.listWorkers(input.aliveOnly ? new Date(now - ALIVE_WITHIN_MS) : null, { offset: input.offset, limit: input.limit + 1 }),
        ctx.store.claimedTaskCounts(new Date(now - STALE_HEARTBEAT_MS)),
      ]);
      const staleOf = new Map(claims.map((c) => [c.workerId, c.stale]));
      return {
        ...staleness(),
        workers: workers.slice(0, input.limit).map((worker) => ({
          workerId: worker.workerId,
          handlers: worker.handlers,
          queues: worker.queues,
          version: worker.version,
          lastSeenAt: worker.lastSeenAt.toISOString(),
          alive: now - worker.lastSeenAt.getTime() <= ALIVE_WITHIN_MS,
          inFlight: worker.inFlight,
          stale: staleOf.get(worker.workerId) ?? 0,
        })),
        hasMore: workers.length > input.limit,
      };
    }),

  /** Task counts by state and by handler (as GET /workers/tasks/stats), and how many claims are stale. */
  stats: tenantProcedure.query(async ({ ctx }) => {
    const [stats, claims] = await Promise.all([ctx.store.workerTaskStats(), ctx.store.claimedTaskCounts(new Date(Date.now() - STALE_HEARTBEAT_MS))]);
    return {
      ...staleness(),
      states: WORKER_TASK_STATES,
      byState: stats.byState,
      byHandler: Object.entries(stats.byHandler).sort(([a], [b]) => (a < b ? -1 : 1)).map(([handler, counts]) => ({ handler, counts })),
      activeWorkers: stats.activeWorkers,
      stale: claims.reduce((n, c) => n + c.stale, 0),
    };
  }),

  /** The tenant's claimed tasks, newest first, each marked stale or not; `staleOnly`: just the stale ones. */
  claimed: tenantProcedure
    .input(z.object({ staleOnly: z.boolean().default(false), offset: Offset, limit: Limit }))
    .query(async ({ ctx, input }) => {
      const staleBefore = new Date(Date.now() - STALE_HEARTBEAT_MS);
      const tasks = await ctx.store.listWorkerTasks({
        states: ["claimed"], ...(input.staleOnly ? { heartbeatBefore: staleBefore } : {}), offset: input.offset, limit: input.limit + 1,
      });
      return {
        ...staleness(),
        tasks: tasks.slice(0, input.limit).map((task) => ({
          id: task.id,
          instanceId: task.instanceId,
          blockId: task.blockId,
          handlerName: task.handlerName,
          queueName: task.queueName,
          workerId: task.workerId,
          attempt: task.attempt,
          claimedAt: task.claimedAt?.toISOString() ?? null,
          heartbeatAt: task.heartbeatAt?.toISOString() ?? null,
          stale: task.heartbeatAt !== null && task.heartbeatAt < staleBefore,
        })),
        hasMore: tasks.length > input.limit,
      };
    }),
};

/** Operators: the fleet's workers and every tenant's, newest seen first, at most `limit`. */
const opsRouter = router({
  fleet: operatorProcedure
    .input(z.object({ limit: z.int().min(1).max(FLEET.max).default(FLEET.default) }).optional())
    .query(async ({ ctx, input }) => {
      const limit = input?.limit ?? FLEET.default;
      const now = Date.now();
      const rows = await ctx.services.storage.workersOfEveryTenant({ limit, staleBefore: new Date(now - STALE_HEARTBEAT_MS) });
      return {
        ...staleness(),
        limit,
        workers: rows.map((row) => ({
          /** "" for the fleet's polls (an operator key naming no tenant). */
          tenantId: row.tenantId,
          workerId: row.workerId,
          handlers: row.handlers,
          queues: row.queues,
          version: row.version,
          lastSeenAt: row.lastSeenAt.toISOString(),
          alive: now - row.lastSeenAt.getTime() <= ALIVE_WITHIN_MS,
          claimed: row.claimed,
          stale: row.stale,
        })),
      };
    }),
});

export const workersRouter = router({ ...tenantWorkers, ops: opsRouter });

/** The workers router as anyone but an operator sees it: no `ops`. */
export const workersMemberRouter = router(tenantWorkers);
