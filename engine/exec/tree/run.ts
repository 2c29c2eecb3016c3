// Runs one claimed instance over its block tree as far as it can go: evaluate, start every step
// that may run (branches of a parallel really overlap), commit each step's result the moment it
// settles, evaluate again; until the tree settles, or everything left waits for a worker, a
// signal or a time. Every commit is fenced by the lease epoch, so a crash loses at most the
// steps in flight, which then run again.
import type pg from "pg";
import type { HandlerRegistry } from "../../handlers/registry.ts";
import type { Logger } from "../../logger.ts";
import type { Block, HandlerCall, Sequence, StepBlock, SubSequenceBlock } from "../../sequence/schema.ts";
import { inputProblem } from "../../sequence/input-schema.ts";
import { schemaViolation } from "../../sequence/json-schema.ts";
import { resolveTemplates } from "../../sequence/template.ts";
import type { ChildCreation, ChildOutcome } from "../../storage/children.ts";
import type { ClaimedInstance } from "../../storage/claim.ts";
import { insertWorkerTask, loadLatestOutputs, type ClaimedRow, type OutputRow, type Progress as Commit } from "../../storage/execution.ts";
import { visibleContext } from "../context-access.ts";
import { invokeHandler, type InvokeResult } from "../invoke.ts";
import type { HandlerInput } from "../../handlers/types.ts";
import { mayRetry, nextAttemptAt } from "../retry.ts";
import { evaluateCondition } from "../../sequence/expression.ts";
import { HUMAN_INPUT_SIGNAL, inputGate } from "./blocks/human-input.ts";
import { requestCancel } from "./cancel.ts";
import { COORDINATION_HANDLERS, runCoordination } from "./coordination.ts";
import { effectiveBlocks, injectBlocks } from "./self-modify.ts";
import { readTreeCursor } from "./cursor.ts";
import { evaluator } from "./evaluate.ts";
import { childrenOf, isObject, resetFailures, scopeOf, setData, type DataPatch, type Env, type Leaf, type NodeState, type Settled, type TreeCursor } from "./state.ts";

/** What pre-flight decided for a step (engine/exec/preflight.ts makes it). */
export type PreflightOutcome =
  /** `handler`: the breaker chose the step's fallback handler over its open primary. */
  | { kind: "proceed"; handler?: string }
  | { kind: "defer"; until: Date; reason: string }
  | { kind: "fail"; message: string; deadline?: true };

export interface PreflightInput {
  step: StepBlock;
  tenantId: string;
  instanceId: string;
  timezone: string;
  attempt: number;
  /** When the instance reached the step (its delay counts from here). */
  reachedAt: Date;
  /** When the step first ran (its deadline counts from here), across retries. */
  startedAt: Date | null;
  now: Date;
  db: Pick<pg.Pool, "query">;
}

/** How a run ended, for the scheduler's counters. */
export type RunEnd = Settled | "paused" | "scheduled" | "deferred" | "waiting" | "released" | "lease_lost";

export type WorkerResult = { state: "pending" | "claimed" } | { state: "completed"; output: unknown } | { state: "failed"; message: string; retryable: boolean };

export type Signal = { id: string; payload: unknown } & ({ type: "pause" | "resume" | "cancel" | "update_context" } | { type: "custom"; name: string });

export interface TreeRunDeps {
  db: Pick<pg.Pool, "query" | "connect">;
  commit: (progress: Commit) => Promise<boolean>;
  handlers: HandlerRegistry;
  preflight: (input: PreflightInput) => Promise<PreflightOutcome>;
  /** The result of a worker task, or null when it is gone. */
  workerResult: (taskId: string) => Promise<WorkerResult | null>;
  /** Deletes the worker tasks of abandoned blocks (race losers, loop resets, cancellation). */
  abandonWorkerTasks: (blockIds: string[]) => Promise<void>;
  /** The instance's queued signals in arrival order, but those in `applied`; reading does not consume them (the commit does). */
  readSignals: (applied: readonly string[]) => Promise<Signal[]>;
  /** The (tenant, handler) circuit breakers: every outcome of a dispatched handler counts. */
  breakers: { success: (handler: string) => void; failure: (handler: string) => void };
  /** sub_sequence: the child's sequence, its creation, and how it ended. */
  children: {
    find: (name: string, version: number | undefined) => Promise<{ id: string; inputSchema: unknown } | null>;
    create: (child: { sequenceId: string; blockId: string; input: unknown }) => Promise<ChildCreation>;
    outcome: (childId: string) => Promise<ChildOutcome | null>;
    /** Sends the child a cancel signal (nothing when it has already ended). */
    cancel: (childId: string) => Promise<void>;
  };
  log: Logger;
  now: () => Date;
  /** Aborted with "lease_lost" or "shutdown". */
  interrupt: AbortSignal;
}

type StepResult =
  | InvokeResult
  | { kind: "deferred"; until: Date; reason: string }
  | { kind: "worker"; taskId: string }
  | { kind: "child"; childId: string }
  | { kind: "modified"; output: unknown; blocks: Block[] };

interface InFlight {
  leaf: Leaf;
  attempt: number;
  abort: AbortController;
  done: Promise<StepResult>;
}

const SIGNAL_POLL_MS = 250;
/** Block id of the output an on_deadline_breach escalation records (B.1 hides `_sla:*` from `outputs`). */
export const SLA_OUTPUT_PREFIX = "_sla:";

export async function runTree(claim: ClaimedInstance, row: ClaimedRow, sequence: Sequence, deps: TreeRunDeps): Promise<RunEnd> {
  const fence = { instanceId: claim.id, tenantId: claim.tenantId, leaseEpoch: claim.leaseEpoch };
  const cursor: TreeCursor = readTreeCursor(row.cursor, sequence);
  // Only a retry brings an instance with a failed top-level block back to the engine.
  // The top-level blocks, which a self_modify step may extend while the instance runs.
  const blocks = () => effectiveBlocks(sequence, cursor);
  if (!cursor.cleanup && blocks().some((b) => cursor.nodes[b.id]?.status === "failed")) resetFailures(cursor, blocks());
  // A.1 on_failure / on_cancel: after the main tree ends failed or cancelled, its cleanup tree
  // runs best-effort in an id space of its own; the instance then ends as the main tree did.
  const cleanupOf = (status: Settled) => (status === "failed" ? sequence.on_failure : status === "cancelled" ? sequence.on_cancel : undefined);
  const cleanupTree = (c: NonNullable<TreeCursor["cleanup"]>): TreeCursor => ({ v: 2, nodes: c.nodes });
  /** The tree being run: the main one, or the cleanup tree. Node lookups go through it. */
  let tree: TreeCursor = cursor.cleanup ? cleanupTree(cursor.cleanup) : cursor;
  const phaseBlocks = () => (cursor.cleanup ? (cleanupOf(cursor.cleanup.status) ?? []) : blocks());
  const context = normalizeContext(row.context);
  // Outputs are read only when a template or condition can see them, and the instance has any.
  const outputs = row.cursor !== null && readsOutputs(sequence) ? await loadLatestOutputs(deps.db, claim.tenantId, claim.id) : {};
  // C.12: a flat sequence's failed step leaves an `__error__` marker row.
  const flat = blocks().every((b) => b.type === "step");
  const inflight = new Map<string, InFlight>();
  let unsaved: OutputRow[] = [];
  let dataPatch: DataPatch = { set: {}, unset: [] };
  const patching = { context, get dataPatch() { return dataPatch; } };
  let paused = false;
  /** A step's result is applied to the cursor but not yet written. */
  let unsavedStep = false;

  const env = (): Env => ({ cursor: tree, context, outputs, instanceId: claim.id, now: deps.now(), newOutputs: [], abandoned: [], cancelledChildren: [], dataPatch });
  /** Signals applied but not yet committed: the next commit consumes them. */
  let applied: string[] = [];
  const commit = async (state: Commit["state"], extra: Partial<Commit> = {}) => {
    const changed = Object.keys(dataPatch.set).length > 0 || dataPatch.unset.length > 0;
    const signalsApplied = applied;
    const written = await deps.commit({ ...fence, state, cursor, outputs: unsaved, signalsApplied, ...(changed ? { dataPatch } : {}), ...extra });
    unsaved = [];
    dataPatch = { set: {}, unset: [] };
    // The poller may have applied more while this commit was written: those wait for the next.
    applied = applied.filter((id) => !signalsApplied.includes(id));
    return written;
  };
  const mergeData = (values: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(values)) setData(patching, key, value);
  };

  // Signals (G.2): at the start, then every 250 ms while steps run.
  const applySignals = async (): Promise<void> => {
    for (const signal of await deps.readSignals(applied)) {
      // Two reads in flight at once (the poller, the start) may both return a signal.
      if (applied.includes(signal.id)) continue;
      applied.push(signal.id);
      if (signal.type === "cancel") {
        if (cursor.cleanup) continue; // the cleanup tree runs to its end
        const pass = env();
        requestCancel(pass, blocks());
        await settleAbandoned(pass);
      } else if (signal.type === "pause") paused = true;
      else if (signal.type === "resume") paused = false;
      else if (signal.type === "update_context") {
        // G.3: only the top-level keys of payload.data are merged; anything else is ignored.
        if (isObject(signal.payload) && isObject(signal.payload.data)) mergeData(signal.payload.data);
      }
      else if (signal.type === "custom" && signal.name.startsWith(HUMAN_INPUT_SIGNAL)) {
        // The answer to a step's input gate, even one the instance has not reached yet.
        const blockId = signal.name.slice(HUMAN_INPUT_SIGNAL.length);
        const step = findStep(blocks(), blockId);
        const gate = step && inputGate(step);
        const state = (cursor.nodes[blockId] ??= {});
        if (gate && state.input === undefined && state.status !== "completed" && state.status !== "failed") {
          state.input = signal.payload;
          setData(patching, gate.store_as ?? blockId, signal.payload);
        }
      }
      // Other custom signals have no built-in effect (G.3).
    }
  };
  // Steps cancelled while in flight (race losers, a cancel signal) stop at once, the worker
  // tasks of abandoned blocks go, and the children of cancelled sub_sequence blocks are cancelled.
  const settleAbandoned = async (pass: Env) => {
    for (const [id, f] of inflight) if (tree.nodes[id]?.status !== "active") f.abort.abort("cancelled");
    if (pass.abandoned.length) await deps.abandonWorkerTasks(pass.abandoned);
    for (const childId of pass.cancelledChildren) await deps.children.cancel(childId);
  };

  // Steps handed to workers: take in their results.
  for (const [id, state] of Object.entries(tree.nodes)) {
    if (state.childId && state.status === "active") {
      const ended = await deps.children.outcome(state.childId);
      if (ended?.state === "completed") succeed(id, state, ended.outputs, false);
      else if (ended) {
        state.status = "failed";
        state.failure = { message: `sub-sequence instance ${state.childId} ${ended.state}`, retryable: false };
      }
      if (ended) delete state.childId;
      continue;
    }
    if (!state.taskId || state.status !== "active") continue;
    const result = await deps.workerResult(state.taskId);
    const handler = state.handler ?? findStep(phaseBlocks(), id)?.handler;
    if (result?.state === "completed") {
      delete state.taskId;
      if (handler) deps.breakers.success(handler);
      const step = findStep(phaseBlocks(), id);
      const problem = outputProblem(step, result.output);
      if (problem) fail(step, state, problem, false);
      else succeed(id, state, result.output, true);
    } else if (result?.state === "failed") {
      delete state.taskId;
      // Worker-reported failures count against the breaker like in-process ones (I, Appendix 14).
      if (handler) deps.breakers.failure(handler);
      fail(findStep(phaseBlocks(), id), state, result.message, result.retryable);
    }
  }
  if (row.hasSignals) await applySignals();
  const poller = setInterval(() => void applySignals().catch(() => {}), SIGNAL_POLL_MS);

  function succeed(id: string, state: NodeState, output: unknown, fromWorker: boolean) {
    state.status = "completed";
    outputs[id] = output;
    unsaved.push({ blockId: id, output, attempt: state.attempt ?? 0 });
    // C.0: a worker's output object is shallow-merged into context.data; in-process ones are not.
    if (fromWorker && isObject(output)) mergeData(output);
  }
  function fail(step: StepBlock | undefined, state: NodeState, message: string, retryable: boolean) {
    const attempt = state.attempt ?? 0;
    const retryIf = (expression: string) =>
      evaluateCondition(expression, { ...scopeOf(env()), runtime: { error: message, attempt } }, "lenient", true);
    const allowed = retryable && mayRetry(step?.retry, message, retryIf);
    const retryAt = step ? nextAttemptAt(step.retry, attempt, allowed, deps.now()) : null;
    if (retryAt) {
      state.attempt = attempt + 1;
      state.notBefore = retryAt.toISOString();
      state.deferReason = "retry";
      return;
    }
    state.status = "failed";
    state.failure = { message, retryable };
    if (flat && step) unsaved.push({ blockId: step.id, output: { __error__: true, retryable, message }, outputRef: "__error__", attempt });
  }

  try {
    for (;;) {
      if (deps.interrupt.aborted) return await release();
      const pass = env();
      const progress = evaluator.body(phaseBlocks(), pass);
      unsaved.push(...pass.newOutputs);
      await settleAbandoned(pass);

      if (progress.kind === "settled" && inflight.size === 0) {
        if (!cursor.cleanup && progress.status !== "completed" && cleanupOf(progress.status)?.length) {
          cursor.cleanup = { status: progress.status, nodes: {} };
          tree = cleanupTree(cursor.cleanup);
          continue;
        }
        const status = cursor.cleanup?.status ?? progress.status;
        return (await commit(status)) ? status : "lease_lost";
      }
      if (unsavedStep && progress.kind === "active" && (progress.runnable.length > 0 || inflight.size > 0)) {
        unsavedStep = false;
        if (!(await commit("running"))) return "lease_lost";
      }
      if (paused) {
        // Pause: in-flight steps are abandoned (they run again after resume); the cursor stays.
        for (const f of inflight.values()) f.abort.abort("paused");
        inflight.clear();
        return (await commit("paused")) ? "paused" : "lease_lost";
      }
      if (progress.kind === "active") {
        for (const leaf of progress.runnable) if (!inflight.has(leaf.id)) start(leaf);
      }
      if (inflight.size === 0) {
        if (progress.kind === "active" && progress.waiting) {
          const waitingOn = Object.values(tree.nodes).flatMap((n) => (n.status === "active" ? [n.taskId, n.childId] : []).filter((x): x is string => !!x));
          // A wait with a deadline (an input gate's timeout) is woken then by the reaper.
          const nextFireAt = progress.until === null ? null : new Date(progress.until);
          return (await commit("waiting", { waitingOn, nextFireAt })) ? "waiting" : "lease_lost";
        }
        if (progress.kind === "active" && progress.until !== null) {
          const reason = Object.values(tree.nodes).find((n) => n.status === "active" && n.deferReason)?.deferReason ?? "delay";
          const written = await commit("scheduled", { nextFireAt: new Date(progress.until), deferReason: reason });
          return written ? (reason === "retry" ? "scheduled" : "deferred") : "lease_lost";
        }
        continue; // something settled without running a step (a skipped `when`): evaluate again
      }

      const [id, result] = await Promise.race([...inflight].map(([key, f]) => f.done.then((r) => [key, r] as const)));
      const running = inflight.get(id)!;
      inflight.delete(id);
      const state = tree.nodes[id];
      if (result.kind === "interrupted") {
        if (result.why === "lease_lost") return "lease_lost";
        if (result.why === "shutdown") return await release();
        // A step cancelled or paused while it ran: its result is dropped, the tree goes on.
        continue;
      }
      // Cancelled (race loser, cancel signal) or reset while it ran: its result is dropped.
      if (!state || state.status !== "active" || (state.attempt ?? 0) !== running.attempt) continue;
      if (result.kind === "deferred") {
        state.notBefore = result.until.toISOString();
        state.deferReason = result.reason;
        continue;
      }
      if (result.kind === "worker") state.taskId = result.taskId;
      else if (result.kind === "child") state.childId = result.childId;
      else if (result.kind === "modified") {
        cursor.blocks = result.blocks;
        succeed(id, state, result.output, false);
      }
      else if (result.kind === "success") {
        const step = running.leaf.type === "step" ? running.leaf : undefined;
        const problem = outputProblem(step, result.output);
        if (problem) fail(step, state, problem, false);
        else succeed(id, state, result.output, false);
      } else fail(running.leaf.type === "step" ? running.leaf : undefined, state, result.message, result.retryable);
      // Committed at the top of the next pass: with the final state when the tree has settled
      // (one write for the last step), else before any further step starts.
      unsavedStep = true;
    }
  } finally {
    clearInterval(poller);
    for (const f of inflight.values()) f.abort.abort("shutdown");
  }

  async function release(): Promise<RunEnd> {
    return (await commit("scheduled", { nextFireAt: deps.now() })) ? "released" : "lease_lost";
  }

  function start(leaf: Leaf) {
    const state = tree.nodes[leaf.id]!;
    const abort = new AbortController();
    const attempt = state.attempt ?? 0;
    delete state.notBefore;
    delete state.deferReason;
    const done = leaf.type === "step" ? execute(leaf, state, attempt, abort.signal) : startChild(leaf);
    inflight.set(leaf.id, { leaf, attempt, abort, done });
  }

  async function startChild(block: SubSequenceBlock): Promise<StepResult> {
    const sequence = await deps.children.find(block.sequence_name, block.version);
    if (!sequence) return { kind: "failure", retryable: false, message: `sub-sequence not found: ${block.sequence_name}` };
    const problem = inputProblem(sequence.inputSchema, block.input);
    if (problem) return { kind: "failure", retryable: false, message: `sub-sequence ${block.sequence_name}: ${problem}` };
    const created = await deps.children.create({ sequenceId: sequence.id, blockId: block.id, input: block.input });
    if ("childId" in created) return { kind: "child", childId: created.childId };
    if (created.error === "depth") return { kind: "failure", retryable: false, message: "sub-sequence depth limit (16) reached" };
    return { kind: "interrupted", why: "lease_lost" };
  }

  /**
   * A.3 on_deadline_breach: the escalation handler runs once, best effort, before the step fails;
   * what it answered (or why it could not run) is recorded under `_sla:<step id>`. In-process
   * handlers only: an unknown name is recorded as not found rather than queued for a worker.
   */
  async function escalateDeadline(step: StepBlock, call: HandlerCall, attempt: number, cancelled: AbortSignal): Promise<void> {
    const blockId = `${SLA_OUTPUT_PREFIX}${step.id}`;
    const record = (output: unknown) => unsaved.push({ blockId, output, attempt });
    const handler = deps.handlers.get(call.handler);
    if (!handler) return void record({ __error__: true, retryable: false, message: `escalation handler not found: ${call.handler}` });
    let params: unknown;
    try {
      params = resolveTemplates(call.params, scopeOf(env()));
    } catch (error) {
      return void record({ __error__: true, retryable: false, message: (error as Error).message });
    }
    const result = await invokeHandler(
      handler,
      {
        tenantId: claim.tenantId, instanceId: claim.id, blockId: step.id, attempt, params,
        context: visibleContext(context, step.context_access) as HandlerInput["context"], log: deps.log.child({ block_id: blockId }),
      },
      { timeoutMs: step.timeout, interrupt: AbortSignal.any([deps.interrupt, cancelled]) },
    );
    if (result.kind === "success") record(result.output);
    else if (result.kind === "failure") record({ __error__: true, retryable: result.retryable, message: result.message });
  }

  async function execute(step: StepBlock, state: NodeState, attempt: number, cancelled: AbortSignal): Promise<StepResult> {
    const now = deps.now();
    const decision = await deps.preflight({
      step, tenantId: claim.tenantId, instanceId: claim.id, timezone: row.timezone, now, db: deps.db,
      attempt, reachedAt: new Date(state.reachedAt ?? now), startedAt: state.startedAt ? new Date(state.startedAt) : null,
    });
    if (decision.kind === "defer") return { kind: "deferred", until: decision.until, reason: decision.reason };
    if (decision.kind === "fail") {
      if (decision.deadline && step.on_deadline_breach) await escalateDeadline(step, step.on_deadline_breach, attempt, cancelled);
      return { kind: "failure", retryable: false, message: decision.message };
    }
    state.startedAt ??= now.toISOString();

    let params: unknown;
    try {
      params = resolveTemplates(step.params, scopeOf(env()));
    } catch (error) {
      return { kind: "failure", retryable: false, message: (error as Error).message };
    }
    if (COORDINATION_HANDLERS.has(step.handler)) return runCoordination(step.handler, deps.db, claim.tenantId, params, claim.id);
    if (step.handler === "self_modify") {
      try {
        return { kind: "modified", ...injectBlocks(sequence, cursor, step, params) };
      } catch (error) {
        return { kind: "failure", retryable: false, message: (error as Error).message };
      }
    }
    const handlerName = state.escalated ? inputGate(step)!.escalation_handler! : (decision.handler ?? step.handler);
    const handler = deps.handlers.get(handlerName);
    if (!handler) {
      const taskId = await insertWorkerTask(deps.db, {
        ...fence, blockId: step.id, handlerName, queueName: step.queue_name ?? null, params,
        context: visibleContext(context, step.context_access), attempt, timeoutMs: step.timeout ?? null,
      });
      state.handler = handlerName;
      return taskId ? { kind: "worker", taskId } : { kind: "interrupted", why: "lease_lost" };
    }
    const result = await invokeHandler(
      handler,
      {
        tenantId: claim.tenantId, instanceId: claim.id, blockId: step.id, attempt, params,
        context: visibleContext(context, step.context_access) as HandlerInput["context"], log: deps.log.child({ block_id: step.id }),
      },
      // A cancelled step's handler stops like an interrupted one; its result is dropped above.
      { timeoutMs: step.timeout, interrupt: AbortSignal.any([deps.interrupt, cancelled]) },
    );
    // Both failure kinds count; an interrupted call (cancel, shutdown) says nothing of the handler.
    if (result.kind === "success") deps.breakers.success(handlerName);
    else if (result.kind === "failure") deps.breakers.failure(handlerName);
    return result;
  }
}

/** A.3: a step's output must match its output_schema; a mismatch is a permanent failure (no retry). */
function outputProblem(step: StepBlock | undefined, output: unknown): string | undefined {
  if (step?.output_schema === undefined || step.output_schema === null) return undefined;
  const violation = schemaViolation(step.output_schema, output);
  return violation && `output does not match the step's output_schema: ${violation}`;
}

function findStep(blocks: readonly Block[], id: string): StepBlock | undefined {
  const stack: Block[] = [...blocks];
  for (let block = stack.pop(); block; block = stack.pop()) {
    if (block.type === "step" && block.id === id) return block;
    stack.push(...childrenOf(block));
  }
  return undefined;
}

const outputReaders = new WeakMap<Sequence, boolean>();

/** Whether any string of the definition mentions `outputs.` or `steps.` (B.1, B.2 roots). */
function readsOutputs(sequence: Sequence): boolean {
  let reads = outputReaders.get(sequence);
  if (reads === undefined) {
    reads = /\b(outputs|steps)\./.test(JSON.stringify(sequence));
    outputReaders.set(sequence, reads);
  }
  return reads;
}

function normalizeContext(raw: unknown): Env["context"] {
  const ctx = isObject(raw) ? { ...raw } : {};
  return { ...ctx, data: ctx.data ?? null, config: ctx.config ?? null };
}
