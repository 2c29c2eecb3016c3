// tRPC set-up, in the order a request meets it: 1. context, 2. initialisation and error mapping,
// 3. the procedures every router builds on.
import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { z } from "zod";
import { AppError, isAppError, type ErrorCode } from "../../engine/errors.ts";
import { tenantMoving, type TenantStore } from "../../engine/storage/index.ts";
import { describeTextProblem, unstorableText } from "../../engine/text-hygiene.ts";
import { roleIn, type Role } from "../control/users.ts";
import { admitRequest } from "../request-rate.ts";
import type { Services } from "../services.ts";

// ------------------------------------------------------------------ 1. context

export interface User {
  id: string;
  email: string;
  isOperator: boolean;
}

export interface Context {
  services: Services;
  /** The signed-in user's id from the session, if any. */
  userId: string | null;
  /** The user's row, when the HTTP handler already read it (to pick the router): not read again. */
  user?: User | null;
}

export function createContext(services: Services, userId: string | null, user?: User | null): Context {
  return { services, userId, ...(user !== undefined ? { user } : {}) };
}

/** The signed-in user's row, read on every call so role changes apply at once; null when signed out or gone. */
export function readUser(services: Services, userId: string | null): Promise<User | null> {
  if (!userId) return Promise.resolve(null);
  return services.prisma.user.findUnique({ where: { id: userId }, select: { id: true, email: true, isOperator: true } });
}

// ------------------------------------------------------------------ 2. initialisation

const TRPC_CODE: Record<ErrorCode, TRPC_ERROR_CODE_KEY> = {
  not_found: "NOT_FOUND",
  invalid_argument: "BAD_REQUEST",
  already_exists: "CONFLICT",
  conflict: "CONFLICT",
  unauthorized: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  payload_too_large: "PAYLOAD_TOO_LARGE",
  unprocessable: "UNPROCESSABLE_CONTENT",
  rate_limited: "TOO_MANY_REQUESTS",
  unavailable: "SERVICE_UNAVAILABLE",
  unsupported: "SERVICE_UNAVAILABLE",
  internal: "INTERNAL_SERVER_ERROR",
};

/** Who may call a procedure, when not every member may: the procedure-existence test enumerates by it. */
export interface ProcedureMeta {
  access?: "tenant-admin" | "operator";
}

const t = initTRPC.context<Context>().meta<ProcedureMeta>().create({
  errorFormatter({ shape, error }) {
    const cause = error.cause instanceof AppError ? error.cause : null;
    return {
      ...shape,
      // Never a stack trace, in any environment.
      data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, inputPath: cause?.path ?? null },
    };
  },
});

export const createCallerFactory = t.createCallerFactory;
export const router = t.router;

/** Turns the AppErrors thrown by services into the matching tRPC error, once for every procedure. */
const mapAppErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const cause = result.error.cause;
    if (cause instanceof AppError) throw new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
    if (result.error.code === "INTERNAL_SERVER_ERROR") {
      throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "internal server error", cause: result.error });
    }
  }
  return result;
});

// ------------------------------------------------------------------ 3. procedures

/**
 * The routed store as reads get it: TenantStore's reads and nothing that writes, so a procedure
 * cannot write through `ctx.store` by mistake (it must ask `ctx.storeForWrite()`). A read added to
 * TenantStore is added here to be used from tRPC.
 */
export type TenantReads = Pick<
  TenantStore,
  | "tenantId" | "countInstancesByState" | "listSequences" | "listHandlerNames" | "getSequence" | "sequenceInputSchemas" | "getSequenceDraft"
  | "getInstance" | "listInstances" | "listBlockOutputs" | "listRateLimitPolicies" | "readBudget"
  | "listWorkerTasks" | "workerTaskStats" | "listWorkerTaskAttempts" | "getExecutionTreeSource"
  | "listInstancesPage" | "getInstanceDetail" | "instanceThroughput" | "listRecentFailures"
  | "listOpenBreakers" | "listBreakerResets" | "listBreakerSettings" | "listTriggers" | "getTrigger" | "listDeliveries"
  | "listDeadLetters" | "listFailureGroups" | "listCronSchedules" | "getCronSchedule" | "latestCronRuns" | "listCredentials"
  | "listWaitingTreeSources" | "listWorkers" | "claimedTaskCounts" | "backendId"
>;

/** What a procedure acting on one tenant finds on ctx: its store, routed once per call. */
export interface RoutedTenant {
  /** For reads; served while the tenant is quiesced for a move. */
  store: TenantReads;
  /**
   * The same store, for a write to the tenant's rows: Unavailable (the REST 503) while the tenant
   * is quiesced for a move, so nothing lands on the old backend after its rows were copied.
   * Control-plane writes (members, API keys, tenant limits) do not ask for it and are not held up.
   */
  storeForWrite: () => TenantStore;
}

function routed(store: TenantStore): RoutedTenant {
  return {
    store,
    storeForWrite: () => {
      if (store.quiesced) throw tenantMoving();
      return store;
    },
  };
}

const tenantNotFound = () => new TRPCError({ code: "NOT_FOUND", message: "tenant not found" });

/**
 * Text PostgreSQL cannot store (engine/text-hygiene.ts) is BAD_REQUEST naming the field. Used
 * after each gate whose refusal must read as a missing procedure or tenant, so bad input tells a
 * caller who may not call the procedure nothing.
 */
const storableInput = t.middleware(async ({ getRawInput, next }) => {
  const problem = unstorableText(await getRawInput());
  if (problem) throw new TRPCError({ code: "BAD_REQUEST", message: describeTextProblem(problem) });
  return next();
});

export const publicProcedure = t.procedure.use(mapAppErrors);

/** The user signed in; the user row is read on every call so role changes apply at once. */
const signedIn = publicProcedure.use(async ({ ctx, next }) => {
  const user = ctx.user !== undefined ? ctx.user : await readUser(ctx.services, ctx.userId);
  if (!user) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
  return next({ ctx: { user } });
});

/**
 * One call of `user` from its request-rate bucket for `tenantId` (null: the user's own, for calls
 * that act for no tenant), or TOO_MANY_REQUESTS with a Retry-After (server/request-rate.ts).
 * Taken once the caller (and the tenant it acts for) is known, before anything else is read; a
 * refusal comes after the gates whose refusals must read as a missing procedure or tenant.
 */
function admitUser(services: Services, user: User, tenantId: string | null): Promise<void> {
  return admitRequest(services, { kind: "user", id: user.id, actor: user.email, actorUserId: user.id }, tenantId);
}

/** A signed-in user, calling for no tenant in particular: the user's own request-rate bucket. */
export const protectedProcedure = signedIn
  .use(async ({ ctx, next }) => {
    await admitUser(ctx.services, ctx.user, null);
    return next();
  })
  .use(storableInput);

/** tRPC's own answer for a path that does not exist: what every refused caller of a hidden procedure gets. */
const noSuchProcedure = (path: string) => new TRPCError({ code: "NOT_FOUND", message: `No procedure found on path "${path}"` });

const tenantIdInput = z.object({ tenantId: z.string().max(64) });

/**
 * The tenant a gate admitted the caller to, with its store routed once (RoutedTenant). The call is
 * taken from the member's bucket for this tenant (not the user's own), after the gate, so a
 * refused caller's answer stays the gate's.
 */
async function routeTenant(services: Services, user: User, tenantId: string, role: Role) {
  await admitUser(services, user, tenantId);
  const store = await services.storage.tenant(tenantId).catch((error: unknown) => {
    throw isAppError(error, "not_found") ? tenantNotFound() : error;
  });
  return { tenant: { id: tenantId, role }, ...routed(store) };
}

/**
 * The tenant named by the input, for one of its members. A tenant you are not a member of, a
 * tenant that does not exist and a tenant without a placement (the router fails closed) give the
 * same error.
 */
export const tenantProcedure = signedIn
  .input(tenantIdInput)
  .use(async ({ ctx, input, next }) => {
    const role = await roleIn(ctx.services.prisma, input.tenantId, ctx.user.id);
    if (!role) throw tenantNotFound();
    return next({ ctx: await routeTenant(ctx.services, ctx.user, input.tenantId, role) });
  })
  .use(storableInput);

/**
 * The tenant's admins only. To anyone else (signed out, not a member, a plain member) the
 * procedure does not exist, in tRPC's words for a missing path. The gate reads the tenant id from
 * the raw input, before the input is validated, so a malformed input is not answered first.
 */
export const tenantAdminProcedure = publicProcedure
  .meta({ access: "tenant-admin" })
  .use(async ({ ctx, path, getRawInput, next }) => {
    const user = ctx.user !== undefined ? ctx.user : await readUser(ctx.services, ctx.userId);
    const raw: unknown = await getRawInput().catch(() => null);
    const tenantId = typeof raw === "object" && raw !== null && "tenantId" in raw ? raw.tenantId : null;
    const role = user && typeof tenantId === "string" ? await roleIn(ctx.services.prisma, tenantId, user.id) : null;
    if (!user || role !== "admin") throw noSuchProcedure(path);
    return next({ ctx: { user } });
  })
  .input(tenantIdInput)
  .use(async ({ ctx, input, next }) => next({ ctx: await routeTenant(ctx.services, ctx.user, input.tenantId, "admin") }))
  .use(storableInput);

/**
 * Platform operators. Anyone else signed in is told the procedure does not exist, in tRPC's own
 * words for a missing path, whether or not they are over their request rate: the operator's own
 * bucket (no tenant, also for operatorTenantProcedure) is taken only after this check.
 */
export const operatorProcedure = signedIn
  .meta({ access: "operator" })
  .use(({ ctx, next, path }) => {
    if (!ctx.user.isOperator) throw noSuchProcedure(path);
    return next();
  })
  .use(async ({ ctx, next }) => {
    await admitUser(ctx.services, ctx.user, null);
    return next();
  })
  .use(storableInput);

/** Operators acting on the tenant the input names, its store routed once as for tenantProcedure (NOT_FOUND: no such tenant). */
export const operatorTenantProcedure = operatorProcedure
  .input(tenantIdInput)
  .use(async ({ ctx, input, next }) => next({ ctx: routed(await ctx.services.storage.tenant(input.tenantId)) }));
