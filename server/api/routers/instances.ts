// Instances for the web app: the list (filters, keyset pages behind an opaque cursor), the detail
// page (tree, outputs, worker attempts, context, signals, pending human input) and the signals a
// member may send. A foreign instance id and a missing one get the same NOT_FOUND.
import { z } from "zod";
import { AppError, notFound } from "../../../engine/errors.ts";
import { InstanceSearchSchema } from "../../../engine/instance-search.ts";
import { UUID_PATTERN } from "../../../engine/model.ts";
import { describeInstance, humanInputSignal, type StepError, type StepRun } from "../../../engine/read-model/describe-instance.ts";
import { Sequence, type Block } from "../../../engine/sequence/schema.ts";
import { walkBlocks } from "../../../engine/sequence/walk.ts";
import { checkSize } from "../../../engine/size-limits.ts";
import {
  canTransition, INSTANCE_PAGE_MAX, INSTANCE_STATES, isTerminal, type InstanceKey, type NewSignal, type TenantStore,
} from "../../../engine/storage/index.ts";
import { recordAudit } from "../../control/audit.ts";
import { enqueueApiSignal } from "../../signals.ts";
import type { Context, User } from "../trpc.ts";
import { instanceActions } from "./instance-actions.ts";
import { SignalRequest, toSignal } from "./signal-input.ts";
import { router, tenantProcedure } from "../trpc.ts";

const iso = (date: Date | null) => date?.toISOString() ?? null;

// ------------------------------------------------------------------ the list cursor

/** Opaque to clients: base64url of `<created_at ms>.<id>`, the last row of the page before. */
export function encodeCursor(key: InstanceKey): string {
  return Buffer.from(`${key.createdAt.getTime()}.${key.id}`).toString("base64url");
}

/** The key in a cursor this router issued; anything else is a bad request. */
export function decodeCursor(cursor: string): InstanceKey {
  const match = /^(\d{1,15})\.([0-9a-f-]{36})$/i.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match || !UUID_PATTERN.test(match[2]!)) throw new AppError("invalid_argument", "invalid cursor", ["cursor"]);
  return { createdAt: new Date(Number(match[1])), id: match[2]! };
}

// ------------------------------------------------------------------ the detail page

/** An instance id that cannot name an instance is as missing as one that names another tenant's. */
function instanceIdOrNotFound(id: string): string {
  if (!UUID_PATTERN.test(id)) throw notFound("instance");
  return id;
}

export type { PendingInput } from "../../../engine/read-model/describe-instance.ts";

const wireError = (error: StepError | undefined | null) =>
  error
    ? { message: error.message, retryable: error.retryable, code: error.code ?? null, handler: error.handler ?? null, httpStatus: error.httpStatus ?? null }
    : null;

/** A step's runs for the page: each attempt with its times, worker and error, and the error it failed with. */
function stepRunOf(run: StepRun | undefined) {
  return {
    attempt: run?.attempt ?? 0,
    pausedWhileRunning: run?.pausedWhileRunning ?? false,
    error: wireError(run?.failure),
    attempts: (run?.attempts ?? []).map((a) => ({
      attempt: a.attempt, startedAt: a.startedAt, finishedAt: a.finishedAt ?? null, workerId: a.workerId ?? null,
      interrupted: a.interrupted ?? null, error: wireError(a.error),
    })),
  };
}

/** What the run view's panel shows of a leaf block's definition: its handler, params as written and the attempts it may take. */
interface DefinedLeaf {
  handler: string | null;
  /** A step's `params`, a sub_sequence's `input`: the templates, not the values they resolved to (those are not stored). */
  params: unknown;
  /** Its retry policy's max_attempts (1 without a policy); null for a sub_sequence. */
  maxAttempts: number | null;
}

/**
 * The blocks the instance runs: its own once a self_modify step added some (kept in the cursor),
 * else its sequence's; null when they are unreadable.
 */
function runBlocks(definition: unknown, cursor: unknown): Block[] | null {
  const own = typeof cursor === "object" && cursor !== null && "blocks" in cursor ? cursor.blocks : undefined;
  const parsed = Sequence.shape.blocks.safeParse(
    Array.isArray(own) ? own : typeof definition === "object" && definition !== null && "blocks" in definition ? definition.blocks : undefined,
  );
  return parsed.success ? parsed.data : null;
}

/** Leaf blocks of those, by block id. */
function definedLeaves(blocks: readonly Block[] | null): Map<string, DefinedLeaf> {
  const leaves = new Map<string, DefinedLeaf>();
  if (!blocks) return leaves;
  walkBlocks(blocks, (block: Block) => {
    if (block.type === "step") leaves.set(block.id, { handler: block.handler, params: block.params, maxAttempts: block.retry?.max_attempts ?? 1 });
    else if (block.type === "sub_sequence") leaves.set(block.id, { handler: null, params: block.input, maxAttempts: null });
  });
  return leaves;
}

// ------------------------------------------------------------------ signals

/**
 * Queues the signal (400 for a terminal instance, NOT_FOUND for a foreign or missing one,
 * UNPROCESSABLE_CONTENT for a human_input answer no gate waits for) and records who sent it.
 */
async function send(ctx: Context & { user: User }, store: TenantStore, instanceId: string, signal: NewSignal) {
  const { id } = await enqueueApiSignal(store, instanceId, signal);
  await recordAudit(ctx.services.prisma, {
    actor: ctx.user.email,
    actorUserId: ctx.user.id,
    tenantId: store.tenantId,
    action: "instance.signal",
    details: { instance_id: instanceId, signal_id: id, signal_type: typeof signal.type === "string" ? signal.type : `custom:${signal.type.custom}` },
  });
  return { signalId: id };
}

// ------------------------------------------------------------------ the router

export const instancesRouter = router({
  // Dead letters and bulk actions (wire-format J, K): instance-actions.ts.
  ...instanceActions,

  /** One page, newest first, of all instances or those a search finds; pass `next` back as `cursor` for the following one. */
  list: tenantProcedure
    .input(
      z.object({
        /** Any of these; absent or empty: every state. */
        states: z.array(z.enum(INSTANCE_STATES)).max(INSTANCE_STATES.length).optional(),
        sequenceId: z.string().regex(UUID_PATTERN, "invalid sequence id").optional(),
        /** Inclusive. */
        createdAfter: z.iso.datetime({ offset: true }).optional(),
        /** Exclusive. */
        createdBefore: z.iso.datetime({ offset: true }).optional(),
        /** Only the instances it finds: a whole id, a short id's start, or a context.data field's value. */
        search: InstanceSearchSchema.optional(),
        cursor: z.string().max(128).nullish(),
        limit: z.int().min(1).max(INSTANCE_PAGE_MAX).default(50),
      }),
    )
    .query(async ({ ctx, input }) => {
      const after = input.cursor ? decodeCursor(input.cursor) : undefined;
      const page = await ctx.store.listInstancesPage({
        states: input.states,
        sequenceId: input.sequenceId,
        createdAfter: input.createdAfter === undefined ? undefined : new Date(input.createdAfter),
        createdBefore: input.createdBefore === undefined ? undefined : new Date(input.createdBefore),
        search: input.search,
        after,
        limit: input.limit,
      });
      return {
        items: page.items.map((item) => ({
          id: item.id,
          namespace: item.namespace,
          sequenceId: item.sequenceId,
          sequenceName: item.sequenceName,
          sequenceVersion: item.sequenceVersion,
          state: item.state,
          priority: item.priority,
          nextFireAt: iso(item.nextFireAt),
          createdAt: item.createdAt.toISOString(),
          updatedAt: item.updatedAt.toISOString(),
        })),
        next: page.next ? encodeCursor(page.next) : null,
      };
    }),

  /** Everything the detail page shows, from one snapshot. */
  get: tenantProcedure.input(z.object({ instanceId: z.string().max(64) })).query(async ({ ctx, input }) => {
    const instanceId = instanceIdOrNotFound(input.instanceId);
    const detail = await ctx.store.getInstanceDetail(instanceId);
    if (!detail) throw notFound("instance");
    const { instance } = detail;
    const described = describeInstance(instance.sequence?.definition ?? null, instance.cursor, instance);
    const blocks = runBlocks(instance.sequence?.definition ?? null, instance.cursor);
    const leaves = definedLeaves(blocks);
    return {
      instance: {
        id: instance.id,
        namespace: instance.namespace,
        state: instance.state,
        priority: instance.priority,
        timezone: instance.timezone,
        context: instance.context,
        metadata: instance.metadata ?? null,
        nextFireAt: iso(instance.nextFireAt),
        deferReason: instance.deferReason,
        parentInstanceId: instance.parentInstanceId,
        createdAt: instance.createdAt.toISOString(),
        updatedAt: instance.updatedAt.toISOString(),
      },
      /**
       * What the page offers (F.2): pause from scheduled or running (a pause sent to a waiting
       * instance is dropped), resume a paused one, cancel anything not finished. Any signal is
       * refused once the instance is terminal.
       */
      can: {
        pause: canTransition(instance.state, "paused"),
        resume: instance.state === "paused",
        cancel: canTransition(instance.state, "cancelled"),
        signal: !isTerminal(instance.state),
      },
      sequence: instance.sequence
        ? { id: instance.sequence.id, namespace: instance.sequence.namespace, name: instance.sequence.name, version: instance.sequence.version }
        : { id: instance.sequenceId, namespace: instance.namespace, name: null, version: null },
      /** False when the sequence is missing or its blocks are unreadable: no tree to show. */
      hasTree: described.hasTree,
      /** The blocks as the run graph draws them (the instance's own, after a self_modify). */
      blocks: blocks ?? [],
      nodes: described.nodes.map((node) => ({
        id: node.id,
        blockId: node.block_id,
        parentId: node.parent_id,
        blockType: node.block_type,
        branchIndex: node.branch_index,
        state: node.state,
        startedAt: node.started_at,
        completedAt: node.completed_at,
        ...stepRunOf(described.stepRuns[node.block_id]),
        ...(leaves.get(node.block_id) ?? { handler: null, params: null, maxAttempts: null }),
      })),
      pendingInputs: described.pendingInputs.map((gate) => ({
        ...gate,
        // An answer is queued but the engine has not taken it yet: the page says so rather than asking again.
        answerQueued: detail.signals.some(
          (signal) => !signal.delivered && typeof signal.type !== "string" && signal.type.custom === humanInputSignal(gate.blockId),
        ),
      })),
      outputs: detail.outputs.map((output) => ({
        id: output.id,
        blockId: output.blockId,
        attempt: output.attempt,
        output: output.output,
        outputRef: output.outputRef,
        createdAt: output.createdAt.toISOString(),
      })),
      outputsTruncated: detail.outputsTruncated,
      signals: detail.signals.map((signal) => ({
        id: signal.id,
        type: typeof signal.type === "string" ? signal.type : ("custom" as const),
        name: typeof signal.type === "string" ? null : signal.type.custom,
        payload: signal.payload,
        delivered: signal.delivered,
        createdAt: signal.createdAt.toISOString(),
        deliveredAt: iso(signal.deliveredAt),
      })),
      workerTasks: detail.workerTasks.map((task) => ({
        id: task.id,
        blockId: task.blockId,
        handlerName: task.handlerName,
        queueName: task.queueName,
        state: task.state,
        attempt: task.attempt,
        workerId: task.workerId,
        errorMessage: task.errorMessage,
        createdAt: task.createdAt.toISOString(),
        completedAt: iso(task.completedAt),
        attempts: task.attempts.map((attempt) => ({
          id: attempt.id,
          event: attempt.event,
          workerId: attempt.workerId,
          claimEpoch: attempt.claimEpoch,
          reason: attempt.reason,
          createdAt: attempt.createdAt.toISOString(),
        })),
      })),
    };
  }),

  /** Queues a signal, as POST /instances/{id}/signals does; the engine applies it (G.3). Members may. */
  signal: tenantProcedure
    .input(z.object({ instanceId: z.string().max(64), signal: SignalRequest }))
    .mutation(async ({ ctx, input }) => {
      const instanceId = instanceIdOrNotFound(input.instanceId);
      const signal = toSignal(input.signal);
      // The cap every door applies: a payload ends up in a context (update_context, human input).
      checkSize("signalPayload", signal.payload, { path: ["signal", "payload"] });
      return send(ctx, ctx.storeForWrite(), instanceId, signal);
    }),

  /**
   * Answers a pending human-input gate: the custom signal `human_input:<block id>` with
   * `{value, comment?}`. Only a gate that is waiting now, with one of its choices, and a comment
   * only where the step allows one: a stray answer would sit in the queue and change nothing.
   */
  answer: tenantProcedure
    .input(
      z.object({
        instanceId: z.string().max(64),
        blockId: z.string().min(1).max(256),
        value: z.string().max(1024),
        comment: z.string().max(4096).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const instanceId = instanceIdOrNotFound(input.instanceId);
      const store = ctx.storeForWrite();
      const source = await store.getExecutionTreeSource(instanceId);
      if (!source) throw notFound("instance");
      const gate = describeInstance(source.definition, source.cursor, source.instance).pendingInputs.find((g) => g.blockId === input.blockId);
      if (!gate) throw new AppError("invalid_argument", `block \`${input.blockId.slice(0, 64)}\` is not waiting for input`, ["blockId"]);
      if (!gate.choices.some((choice) => choice.value === input.value)) {
        throw new AppError("invalid_argument", `\`${input.value.slice(0, 64)}\` is not one of the choices`, ["value"]);
      }
      const comment = input.comment?.trim() || undefined;
      if (comment !== undefined && !gate.allowComment) throw new AppError("invalid_argument", "this step does not take a comment", ["comment"]);
      const payload = comment === undefined ? { value: input.value } : { value: input.value, comment };
      return send(ctx, store, instanceId, { type: { custom: humanInputSignal(input.blockId) }, payload });
    }),
});
