// The dead-letter queue and bulk actions for the web app (wire-format J, K, as REST serves them):
// any member reads the DLQ; retry, resume-from, bulk state, reschedule and batch actions are for
// the tenant's admins, and each leaves a line in the audit log (server/instance-actions.ts).
// Spread into the instances router.
import { z } from "zod";
import { notFound } from "../../../engine/errors.ts";
import { UUID_PATTERN } from "../../../engine/model.ts";
import { checkSize } from "../../../engine/size-limits.ts";
import { BATCH_ACTION_LIMIT, clampBatchLimit, INSTANCE_STATES, type BulkFilter } from "../../../engine/storage/index.ts";
import * as actions from "../../instance-actions.ts";
import { tenantAdminProcedure, tenantProcedure, type User } from "../trpc.ts";
import { SignalRequest, toSignal } from "./signal-input.ts";

const iso = (date: Date | null) => date?.toISOString() ?? null;
const DLQ_PAGE = { default: 50, max: 1000 };

/** An instance id that cannot name an instance is as missing as one that names another tenant's. */
function instanceIdOrNotFound(id: string): string {
  if (!UUID_PATTERN.test(id)) throw notFound("instance");
  return id.toLowerCase();
}

const uuid = (message: string) => z.string().regex(UUID_PATTERN, message).transform((id) => id.toLowerCase());

/** BulkFilter in the web app's names; an unknown key is BAD_REQUEST (it would widen the match). */
const Filter = z.strictObject({
  namespace: z.string().min(1).max(255).optional(),
  sequenceId: uuid("invalid sequence id").optional(),
  states: z.array(z.enum(INSTANCE_STATES)).max(INSTANCE_STATES.length).optional(),
  metadata: z.record(z.string().max(255), z.string().max(1024)).refine((m) => Object.keys(m).length <= 16, "at most 16 metadata keys").optional(),
  /** One failure group of the Failed view (failureGroups' fingerprint). */
  errorFingerprint: z.string().min(1).max(300).optional(),
});

function bulkFilter(input: z.output<typeof Filter>): BulkFilter {
  return {
    ...(input.namespace !== undefined ? { namespace: input.namespace } : {}),
    ...(input.sequenceId !== undefined ? { sequenceId: input.sequenceId } : {}),
    ...(input.states?.length ? { states: input.states } : {}),
    ...(input.metadata && Object.keys(input.metadata).length > 0 ? { metadata: input.metadata } : {}),
    ...(input.errorFingerprint !== undefined ? { errorFingerprint: input.errorFingerprint } : {}),
  };
}

const by = (user: User) => ({ actor: user.email, actorUserId: user.id });

export const instanceActions = {
  /** The tenant's failed instances, most recently updated first (offset pages, as GET /instances/dlq). */
  deadLetters: tenantProcedure
    .input(
      z.object({
        namespace: z.string().min(1).max(255).optional(),
        sequenceId: uuid("invalid sequence id").optional(),
        offset: z.int().min(0).max(1_000_000).default(0),
        limit: z.int().min(1).max(DLQ_PAGE.max).default(DLQ_PAGE.default),
      }),
    )
    .query(async ({ ctx, input }) => {
      const rows = await ctx.store.listDeadLetters({
        namespace: input.namespace, sequenceId: input.sequenceId, offset: input.offset, limit: input.limit,
      });
      return rows.map((row) => ({
        id: row.id,
        namespace: row.namespace,
        sequenceId: row.sequenceId,
        priority: row.priority,
        metadata: row.metadata ?? null,
        parentInstanceId: row.parentInstanceId,
        createdAt: row.createdAt.toISOString(),
        updatedAt: iso(row.updatedAt),
      }));
    }),

  /**
   * The Failed view: failed instances grouped by why they failed, the largest group first. A
   * group's fingerprint, as `filter.errorFingerprint` of batchAction, retries the whole group.
   */
  failureGroups: tenantProcedure
    .input(z.object({ limit: z.int().min(1).max(200).default(50) }))
    .query(async ({ ctx, input }) =>
      (await ctx.store.listFailureGroups(input.limit)).map((group) => ({
        fingerprint: group.fingerprint,
        count: group.count,
        latestAt: group.latestAt.toISOString(),
        sampleInstanceId: group.sampleInstanceId,
        sampleMessage: group.sampleMessage,
        sampleBlock: group.sampleBlock,
      })),
    ),

  /** A failed instance re-runs from its first unfinished top-level block (BAD_REQUEST from any other state). */
  retry: tenantAdminProcedure.input(z.object({ instanceId: z.string().max(64) })).mutation(async ({ ctx, input }) =>
    actions.retryInstance(ctx.services.prisma, ctx.storeForWrite(), by(ctx.user), instanceIdOrNotFound(input.instanceId)),
  ),

  /** The top-level block and every later one re-run from scratch, after a context patch and signals. */
  resumeFrom: tenantAdminProcedure
    .input(
      z.object({
        instanceId: z.string().max(64),
        blockId: z.string().min(1).max(256),
        context: z.record(z.string(), z.json()).optional(),
        signals: z.array(SignalRequest).max(100).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const instanceId = instanceIdOrNotFound(input.instanceId);
      if (input.context) checkSize("context", input.context, { path: ["context"] });
      const signals = (input.signals ?? []).map(toSignal);
      signals.forEach((signal, index) => checkSize("signalPayload", signal.payload, { path: ["signals", index, "payload"] }));
      return actions.resumeFrom(ctx.services.prisma, ctx.storeForWrite(), by(ctx.user), instanceId, {
        blockId: input.blockId, context: input.context, signals,
      });
    }),

  /** Every matching instance moved to `state` where F.2 allows it; `count` moved. */
  bulkSetState: tenantAdminProcedure
    .input(z.object({ filter: Filter, state: z.enum(INSTANCE_STATES) }))
    .mutation(async ({ ctx, input }) => ({
      count: await actions.bulkSetState(ctx.services.prisma, ctx.storeForWrite(), by(ctx.user), bulkFilter(input.filter), input.state),
    })),

  /** Matching scheduled instances due `offsetSecs` later (negative: earlier); `count` moved. */
  bulkReschedule: tenantAdminProcedure
    .input(z.object({ filter: Filter, offsetSecs: z.int().min(-actions.RESCHEDULE_MAX_SECS).max(actions.RESCHEDULE_MAX_SECS) }))
    .mutation(async ({ ctx, input }) => ({
      count: await actions.bulkReschedule(ctx.services.prisma, ctx.storeForWrite(), by(ctx.user), bulkFilter(input.filter), input.offsetSecs),
    })),

  /** One action on at most `limit` matching instances, oldest update first; `dryRun` only counts them. */
  batchAction: tenantAdminProcedure
    .input(
      z.discriminatedUnion("action", [
        z.object({ action: z.enum(["retry", "pause", "resume", "cancel"]) }),
        z.object({ action: z.literal("signal"), signalName: z.string().min(1).max(255), payload: z.json().default(null) }),
      ]).and(
        z.object({
          filter: Filter,
          dryRun: z.boolean().default(false),
          limit: z.int().min(BATCH_ACTION_LIMIT.min).max(BATCH_ACTION_LIMIT.max).default(BATCH_ACTION_LIMIT.default),
        }),
      ),
    )
    .mutation(async ({ ctx, input }) => {
      if (input.action === "signal") checkSize("signalPayload", input.payload, { path: ["payload"] });
      return actions.batchAction(ctx.services.prisma, ctx.storeForWrite(), by(ctx.user), {
        filter: bulkFilter(input.filter),
        action: input.action,
        ...(input.action === "signal" ? { signalName: input.signalName, payload: input.payload } : {}),
        dryRun: input.dryRun,
        limit: clampBatchLimit(input.limit),
      });
    }),
};
