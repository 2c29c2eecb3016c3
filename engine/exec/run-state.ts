// The state of one instance while an engine runs it: its cursor (the main tree, or the cleanup
// tree once that runs), context, latest outputs, and what has changed since the last commit
// (output rows, context.data keys, applied signals). The runner, signals and outcome modules
// change it; `commit` writes what changed in one fenced statement.
import { isObject } from "../model.ts";
import { evaluateCondition } from "../sequence/expression.ts";
import type { Block, Sequence, StepBlock } from "../sequence/schema.ts";
import type { ClaimedInstance, ClaimedRow, OutputRow, Progress, RunFacts } from "../storage/index.ts";
import type { ProgressWriter } from "./progress-writer.ts";
import { failureCause } from "./failure-cause.ts";
import { mayRetry, nextAttemptAt } from "./retry.ts";
import { readTreeCursor } from "./tree/cursor.ts";
import {
  childrenOf, KEPT_ATTEMPTS, resetFailures, scopeOf, setData,
  type DataPatch, type Env, type NodeState, type Settled, type StepError, type TreeCursor,
} from "./tree/state.ts";

export class RunState {
  readonly cursor: TreeCursor;
  /** The tree being run: the main one, or the cleanup tree. Node lookups go through it. */
  tree: TreeCursor;
  readonly context: Env["context"];
  /** Settled steps or applied signals not written yet: committed before the next step starts, or within PROGRESS_EVERY_MS. */
  unsavedProgress = false;
  paused = false;
  /** C.12: a flat sequence's failed step leaves an `__error__` marker row. */
  private readonly flat: boolean;
  private unsaved: OutputRow[] = [];
  private dataPatch: DataPatch = { set: {}, unset: [] };
  /** Signals applied but not yet committed: the next commit consumes them. */
  private applied: string[] = [];
  /** context.runtime's engine-kept facts (stored in columns of their own), written with every commit. */
  readonly facts: RunFacts;
  /** The steps this run has started and not yet settled, latest last: the newest is current_step. */
  private readonly running = new Map<string, { attempt: number; startedAt: string }>();

  constructor(
    readonly claim: ClaimedInstance,
    readonly row: ClaimedRow,
    readonly sequence: Sequence,
    /** Latest output per block id, for templates and conditions. */
    readonly outputs: Record<string, unknown>,
    private readonly now: () => Date,
  ) {
    this.cursor = readTreeCursor(row.cursor, sequence);
    // Only a retry brings an instance with a failed top-level block back to the engine.
    if (!this.cursor.cleanup && this.blocks().some((b) => this.cursor.nodes[b.id]?.status === "failed")) resetFailures(this.cursor, this.blocks());
    this.tree = this.cursor.cleanup ? cleanupTree(this.cursor.cleanup) : this.cursor;
    this.context = normalizeContext(row.context);
    this.flat = this.blocks().every((b) => b.type === "step");
    this.facts = { ...row.facts };
  }

  /** A step's attempt starts: the run's facts and the node's attempt list record it. */
  beginAttempt(id: string, state: NodeState, attempt: number): void {
    const now = this.now().toISOString();
    this.facts.startedAt ??= now;
    this.running.delete(id);
    this.running.set(id, { attempt, startedAt: now });
    this.showCurrent();
    const attempts = (state.attempts ??= []);
    attempts.push({ attempt, startedAt: now });
    if (attempts.length > KEPT_ATTEMPTS) attempts.splice(0, attempts.length - KEPT_ATTEMPTS);
  }

  /** The attempt in progress ends (an attempt that never started, a failed pre-flight say, is recorded as instant). */
  private endAttempt(id: string, state: NodeState, outcome: { error?: StepError; workerId?: string | null }): void {
    const now = this.now().toISOString();
    const attempt = state.attempt ?? 0;
    const attempts = (state.attempts ??= []);
    let record = attempts.at(-1);
    if (!record || record.attempt !== attempt || record.finishedAt) {
      record = { attempt, startedAt: now };
      attempts.push(record);
      if (attempts.length > KEPT_ATTEMPTS) attempts.splice(0, attempts.length - KEPT_ATTEMPTS);
    }
    record.finishedAt = now;
    if (outcome.workerId) record.workerId = outcome.workerId;
    if (outcome.error) record.error = outcome.error;
    this.facts.stepsExecuted += 1;
    this.running.delete(id);
    if (this.facts.currentStep === id || this.running.size > 0) this.showCurrent();
  }

  /** A running attempt cut short by a pause or a cancel: not a failure, and not counted as executed. */
  interruptAttempt(id: string, state: NodeState, why: "paused" | "cancelled"): void {
    const record = state.attempts?.at(-1);
    if (record && !record.finishedAt) Object.assign(record, { finishedAt: this.now().toISOString(), interrupted: why });
    this.running.delete(id);
    this.showCurrent();
  }

  /** current_step is the newest step of this run still running, or nothing. */
  private showCurrent(): void {
    const latest = [...this.running].at(-1);
    this.facts.currentStep = latest?.[0] ?? null;
    this.facts.currentStepStartedAt = latest?.[1].startedAt ?? null;
    this.facts.attempt = latest?.[1].attempt ?? 0;
  }

  /** The top-level blocks, which a self_modify step may have extended. */
  blocks(): readonly Block[] {
    return this.cursor.blocks ?? this.sequence.blocks;
  }

  /** The blocks of the tree being run. */
  phaseBlocks(): readonly Block[] {
    return this.cursor.cleanup ? (this.cleanupOf(this.cursor.cleanup.status) ?? []) : this.blocks();
  }

  /**
   * A.1 on_failure / on_cancel: after the main tree ends failed or cancelled, its cleanup tree
   * runs best-effort in an id space of its own; the instance then ends as the main tree did.
   */
  cleanupOf(status: Settled): readonly Block[] | undefined {
    return status === "failed" ? this.sequence.on_failure : status === "cancelled" ? this.sequence.on_cancel : undefined;
  }

  startCleanup(status: "failed" | "cancelled"): void {
    this.cursor.cleanup = { status, nodes: {} };
    this.tree = cleanupTree(this.cursor.cleanup);
  }

  get inCleanup(): boolean {
    return this.cursor.cleanup !== undefined;
  }

  /** A fresh evaluator pass over the current tree. */
  env(): Env {
    return {
      cursor: this.tree, context: this.context, outputs: this.outputs, instanceId: this.claim.id, now: this.now(),
      newOutputs: [], abandoned: [], cancelledChildren: [], dataPatch: this.dataPatch,
    };
  }

  /** The step with this id in the tree being run (or in `blocks`). */
  findStep(id: string, blocks = this.phaseBlocks()): StepBlock | undefined {
    return findStep(blocks, id);
  }

  /** Rows blocks or the runner add besides step outputs (markers, escalation records). */
  record(...rows: OutputRow[]): void {
    this.unsaved.push(...rows);
  }

  setData(key: string, value: unknown): void {
    setData({ context: this.context, dataPatch: this.dataPatch }, key, value);
  }

  /** C.0: a worker's output object is shallow-merged into context.data; in-process ones are not. */
  mergeData(values: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(values)) this.setData(key, value);
  }

  isApplied(signalId: string): boolean {
    return this.applied.includes(signalId);
  }

  markApplied(signalId: string): void {
    this.applied.push(signalId);
  }

  get appliedSignals(): readonly string[] {
    return this.applied;
  }

  succeed(id: string, state: NodeState, output: unknown, fromWorker: boolean, workerId?: string | null): void {
    this.endAttempt(id, state, { workerId });
    state.status = "completed";
    state.finishedAt = this.now().toISOString();
    this.outputs[id] = output;
    this.unsaved.push({ blockId: id, output, attempt: state.attempt ?? 0 });
    if (fromWorker && isObject(output)) this.mergeData(output);
  }

  /**
   * A failed attempt, its error kept on the attempt: retried when the step's policy allows, else
   * the step fails with it.
   */
  fail(id: string, step: StepBlock | undefined, state: NodeState, error: StepError, workerId?: string | null): void {
    this.endAttempt(id, state, { error, workerId });
    const { message, retryable } = error;
    const attempt = state.attempt ?? 0;
    const retryIf = (expression: string) =>
      evaluateCondition(expression, { ...scopeOf(this.env()), runtime: { error: message, attempt } }, "lenient", true);
    const allowed = retryable && mayRetry(step?.retry, message, retryIf);
    const retryAt = step ? nextAttemptAt(step.retry, attempt, allowed, this.now()) : null;
    if (retryAt) {
      state.attempt = attempt + 1;
      state.notBefore = retryAt.toISOString();
      state.deferReason = "retry";
      return;
    }
    state.status = "failed";
    state.failure = error;
    state.finishedAt = this.now().toISOString();
    if (this.flat && step) this.unsaved.push({ blockId: step.id, output: { __error__: true, retryable, message }, outputRef: "__error__", attempt });
  }

  /**
   * Writes the cursor, the new output rows, the changed context.data keys and the applied
   * signals with the new state; false when the lease was lost (nothing was written).
   */
  async commit(writer: ProgressWriter, state: Progress["state"], extra: Partial<Progress> = {}): Promise<boolean> {
    // Taken before the write is awaited: what the signal poller merges meanwhile goes into a fresh
    // patch for the next commit, never into one that is already being written (and then dropped).
    const patch = this.dataPatch;
    const outputs = this.unsaved;
    this.dataPatch = { set: {}, unset: [] };
    this.unsaved = [];
    const changed = Object.keys(patch.set).length > 0 || patch.unset.length > 0;
    const signalsApplied = this.applied;
    const { id, tenantId, leaseEpoch } = this.claim;
    // Only a running or waiting instance has a step under way.
    if (state !== "running" && state !== "waiting") {
      this.running.clear();
      this.showCurrent();
    }
    this.facts.failure = state === "failed" ? failureCause(this.cursor, this.blocks()) : null;
    const written = await writer.commit({
      instanceId: id, tenantId, leaseEpoch, state, cursor: this.cursor, outputs, signalsApplied, facts: { ...this.facts },
      ...(changed ? { dataPatch: patch } : {}), ...extra,
    });
    // The poller may have applied more while this commit was written: those wait for the next.
    this.applied = this.applied.filter((signalId) => !signalsApplied.includes(signalId));
    return written;
  }
}

function cleanupTree(cleanup: NonNullable<TreeCursor["cleanup"]>): TreeCursor {
  return { v: 2, nodes: cleanup.nodes };
}

function findStep(blocks: readonly Block[], id: string): StepBlock | undefined {
  const stack: Block[] = [...blocks];
  for (let block = stack.pop(); block; block = stack.pop()) {
    if (block.type === "step" && block.id === id) return block;
    stack.push(...childrenOf(block));
  }
  return undefined;
}

function normalizeContext(raw: unknown): Env["context"] {
  const ctx = isObject(raw) ? { ...raw } : {};
  return { ...ctx, data: ctx.data ?? null, config: ctx.config ?? null };
}
