// Every router, registered by hand.
import { accountRouter } from "./routers/account.ts";
import { apiKeysRouter } from "./routers/api-keys.ts";
import { approvalsRouter } from "./routers/approvals.ts";
import { breakersMemberRouter, breakersRouter } from "./routers/breakers.ts";
import { instancesRouter } from "./routers/instances.ts";
import { membersRouter } from "./routers/members.ts";
import { opsRouter } from "./routers/ops.ts";
import { overviewRouter } from "./routers/overview.ts";
import { resourcesRouter } from "./routers/resources.ts";
import { sequenceDraftsRouter } from "./routers/sequence-drafts.ts";
import { schedulesRouter } from "./routers/schedules.ts";
import { sequencesRouter } from "./routers/sequences.ts";
import { triggersRouter } from "./routers/triggers.ts";
import { credentialsRouter } from "./routers/credentials.ts";
import { workersMemberRouter, workersRouter } from "./routers/workers.ts";
import { createCallerFactory, router } from "./trpc.ts";

export const appRouter = router({
  account: accountRouter,
  overview: overviewRouter,
  members: membersRouter,
  apiKeys: apiKeysRouter,
  ops: opsRouter,
  resources: resourcesRouter,
  breakers: breakersRouter,
  instances: instancesRouter,
  sequences: sequencesRouter,
  sequenceDrafts: sequenceDraftsRouter,
  triggers: triggersRouter,
  schedules: schedulesRouter,
  credentials: credentialsRouter,
  approvals: approvalsRouter,
  workers: workersRouter,
});

/**
 * The router anyone but a platform operator is served (signed out included): the operator
 * procedures are not in it, so asking for one, by any method, gets tRPC's own answer for a path
 * that does not exist, byte for byte.
 */
export const memberRouter = router({
  account: accountRouter,
  overview: overviewRouter,
  members: membersRouter,
  apiKeys: apiKeysRouter,
  breakers: breakersMemberRouter,
  instances: instancesRouter,
  sequences: sequencesRouter,
  sequenceDrafts: sequenceDraftsRouter,
  triggers: triggersRouter,
  schedules: schedulesRouter,
  credentials: credentialsRouter,
  approvals: approvalsRouter,
  workers: workersMemberRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
