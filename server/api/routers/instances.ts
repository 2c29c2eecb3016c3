// Instances for the web app: the list (filters, keyset pages behind an opaque cursor), the detail
// page (tree, outputs, worker attempts, context, signals, pending human input) and the signals a
// member may send. A foreign instance id and a missing one get the same NOT_FOUND.
import { z } from "zod";
import { AppError, notFound } from "../../../engine/errors.ts";
import { HUMAN_INPUT_SIGNAL, inputGate } from "../../../engine/exec/tree/blocks/human-input.ts";
import { readTreeCursor } from "../../../engine/exec/tree/cursor.ts";
import { executionNodes } from "../../../engine/exec/tree/nodes.ts";
import { isObject } from "../../../engine/exec/tree/state.ts";
import { Sequence, type Block, type HumanChoice } from "../../../engine/sequence/schema.ts";
import { walkBlocks } from "../../../engine/sequence/walk.ts";
import { canTransition, INSTANCE_STATES, type InstanceState, type NewSignal, type TenantStore } from "../../../engine/storage/index.ts";
import { INSTANCE_PAGE_MAX, type InstanceKey } from "../../../engine/storage/instance-pages.ts";
import { isTerminal } from "../../../engine/storage/instance-state.ts";
import { recordAudit } from "../../control/audit.ts";
import { CONTEXT_LIMIT } from "../../rest/context.ts";
import type { Context, User } from "../trpc.ts";
import { router, tenantProcedure } from "../trpc.ts";

// Any UUID PostgreSQL would accept, version bits unchecked: ids come from several generators.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const iso = (date: Date | null) => date?.toISOString() ?? null;

// ------------------------------------------------------------------ the list cursor

/** Opaque to clients: base64url of `<created_at ms>.<id>`, the last row of the page before. */
export function encodeCursor(key: InstanceKey): string {
  return Buffer.from(`${key.createdAt.getTime()}.${key.id}`).toString("base64url");
}

/** The key in a cursor this router issued; anything else is a bad request. */
export function decodeCursor(cursor: string): InstanceKey {
  const match = /^(\d{1,15})\.([0-9a-f-]{36})$/i.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match || !UUID.test(match[2]!)) throw new AppError("invalid_argument", "invalid cursor", ["cursor"]);
  return { createdAt: new Date(Number(match[1])), id: match[2]! };
}

// ------------------------------------------------------------------ the detail page

/** An instance id that cannot name an instance is as missing as one that names another tenant's. */
function instanceIdOrNotFound(id: string): string {
  if (!UUID.test(id)) throw notFound("instance");
  return id;
}

/** The blocks of a stored definition, or null when it has none readable (see server/rest/handlers/tree.ts). */
function blocksOf(definition: unknown): Block[] | null {
  const parsed = Sequence.shape.blocks.safeParse(isObject(definition) ? definition.blocks : undefined);
  return parsed.success ? parsed.data : null;
}

const YES_NO: HumanChoice[] = [{ label: "Yes", value: "yes" }, { label: "No", value: "no" }];

export interface PendingInput {
  blockId: string;
  handler: string;
  prompt: string;
  choices: HumanChoice[];
  allowComment: boolean;
  /** When the gate escalates (or fails the step) unanswered; null without a timeout. */
  timesOutAt: string | null;
}

/**
 * The human-input gates waiting for an answer: steps with `wait_for_input` (or `human_review`
 * steps) that the evaluator has reached and that have neither an answer nor an escalation yet,
 * read off the cursor the way blocks/step.ts decides to wait.
 */
function pendingInputs(blocks: readonly Block[], cursor: unknown, state: InstanceState): PendingInput[] {
  if (isTerminal(state)) return [];
  const tree = readTreeCursor(cursor, { blocks } as Sequence);
  const nodes: Record<string, unknown> = isObject(tree.nodes) ? tree.nodes : {};
  const pending: PendingInput[] = [];
  walkBlocks(Array.isArray(tree.blocks) ? tree.blocks : blocks, (block) => {
    if (block.type !== "step") return;
    const gate = inputGate(block);
    const node = Object.hasOwn(nodes, block.id) ? nodes[block.id] : undefined;
    if (!gate || !isObject(node) || node.status !== "active" || node.taskId || node.input !== undefined || node.escalated) return;
    const reachedAt = typeof node.reachedAt === "string" ? Date.parse(node.reachedAt) : NaN;
    pending.push({
      blockId: block.id,
      handler: block.handler,
      prompt: gate.prompt,
      choices: gate.choices ?? YES_NO,
      allowComment: gate.allow_comment,
      timesOutAt: gate.timeout === undefined || Number.isNaN(reachedAt) ? null : new Date(reachedAt + gate.timeout).toISOString(),
    });
  });
  return pending;
}

// ------------------------------------------------------------------ signals

/** update_context merges only the top-level keys of `payload.data` (G.3); anything else would be silently ignored, so it is refused. */
const UpdateContextPayload = z.strictObject({ data: z.record(z.string(), z.json()) });

const SignalRequest = z.discriminatedUnion("type", [
  z.object({ type: z.enum(["pause", "resume", "cancel"]) }),
  z.object({ type: z.literal("update_context"), payload: UpdateContextPayload }),
  z.object({ type: z.literal("custom"), name: z.string().min(1).max(256), payload: z.json().default(null) }),
]);
type SignalRequest = z.output<typeof SignalRequest>;

function toSignal(request: SignalRequest): NewSignal {
  switch (request.type) {
    case "custom":
      return { type: { custom: request.name }, payload: request.payload };
    case "update_context":
      return { type: "update_context", payload: request.payload };
    default:
      return { type: request.type, payload: null };
  }
}

/** Same cap as a context: a signal's payload ends up in one (update_context, human input). */
function checkPayloadSize(payload: unknown) {
  const size = payload === null ? 0 : Buffer.byteLength(JSON.stringify(payload));
  if (size > CONTEXT_LIMIT) {
    throw new AppError("payload_too_large", `payload is ${size} bytes, exceeding the maximum of ${CONTEXT_LIMIT} bytes`, ["signal", "payload"]);
  }
}

/** Queues the signal (400 for a terminal instance, NOT_FOUND for a foreign or missing one) and records who sent it. */
async function send(ctx: Context & { user: User }, store: TenantStore, instanceId: string, signal: NewSignal) {
  const { id } = await store.enqueueSignalIfActive(instanceId, signal);
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
  /** One page, newest first; pass `next` back as `cursor` for the following one. */
  list: tenantProcedure
    .input(
      z.object({
        /** Any of these; absent or empty: every state. */
        states: z.array(z.enum(INSTANCE_STATES)).max(INSTANCE_STATES.length).optional(),
        sequenceId: z.string().regex(UUID, "invalid sequence id").optional(),
        /** Inclusive. */
        createdAfter: z.iso.datetime({ offset: true }).optional(),
        /** Exclusive. */
        createdBefore: z.iso.datetime({ offset: true }).optional(),
        cursor: z.string().max(128).nullish(),
        limit: z.int().min(1).max(INSTANCE_PAGE_MAX).default(50),
      }),
    )
    .query(async ({ ctx, input }) => {
      const after = input.cursor ? decodeCursor(input.cursor) : undefined;
      const store = await ctx.services.storage.tenant(ctx.tenant.id);
      const page = await store.listInstancesPage({
        states: input.states,
        sequenceId: input.sequenceId,
        createdAfter: input.createdAfter === undefined ? undefined : new Date(input.createdAfter),
        createdBefore: input.createdBefore === undefined ? undefined : new Date(input.createdBefore),
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
    const store = await ctx.services.storage.tenant(ctx.tenant.id);
    const detail = await store.getInstanceDetail(instanceId);
    if (!detail) throw notFound("instance");
    const { instance } = detail;
    const blocks = instance.sequence ? blocksOf(instance.sequence.definition) : null;
    const treeInstance = { id: instance.id, state: instance.state, createdAt: instance.createdAt, updatedAt: instance.updatedAt };
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
      hasTree: blocks !== null,
      nodes: (blocks ? executionNodes({ blocks }, instance.cursor, treeInstance) : []).map((node) => ({
        id: node.id,
        blockId: node.block_id,
        parentId: node.parent_id,
        blockType: node.block_type,
        branchIndex: node.branch_index,
        state: node.state,
        startedAt: node.started_at,
      })),
      pendingInputs: (blocks ? pendingInputs(blocks, instance.cursor, instance.state) : []).map((gate) => ({
        ...gate,
        // An answer is queued but the engine has not taken it yet: the page says so rather than asking again.
        answerQueued: detail.signals.some(
          (signal) => !signal.delivered && typeof signal.type !== "string" && signal.type.custom === `${HUMAN_INPUT_SIGNAL}${gate.blockId}`,
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
      checkPayloadSize(signal.payload);
      const store = await ctx.services.storage.tenantForWrite(ctx.tenant.id);
      return send(ctx, store, instanceId, signal);
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
      const store = await ctx.services.storage.tenantForWrite(ctx.tenant.id);
      const source = await store.getExecutionTreeSource(instanceId);
      if (!source) throw notFound("instance");
      const blocks = blocksOf(source.definition);
      const gate = (blocks ? pendingInputs(blocks, source.cursor, source.instance.state) : []).find((g) => g.blockId === input.blockId);
      if (!gate) throw new AppError("invalid_argument", `block \`${input.blockId.slice(0, 64)}\` is not waiting for input`, ["blockId"]);
      if (!gate.choices.some((choice) => choice.value === input.value)) {
        throw new AppError("invalid_argument", `\`${input.value.slice(0, 64)}\` is not one of the choices`, ["value"]);
      }
      const comment = input.comment?.trim() || undefined;
      if (comment !== undefined && !gate.allowComment) throw new AppError("invalid_argument", "this step does not take a comment", ["comment"]);
      const payload = comment === undefined ? { value: input.value } : { value: input.value, comment };
      return send(ctx, store, instanceId, { type: { custom: `${HUMAN_INPUT_SIGNAL}${input.blockId}` }, payload });
    }),
});
