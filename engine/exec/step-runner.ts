// The step pipeline of one backend, created once with everything it needs. It runs a claimed
// instance over its block tree as far as it can go: evaluate, start every leaf that may run
// (branches of a parallel really overlap), apply each result the moment it settles, evaluate
// again; until the tree settles, or everything left waits for a worker, a signal or a time.
// Every commit is fenced by the lease epoch, so a crash loses at most the steps in flight, which
// then run again.
import { SignalWatch } from "./signal-watch.ts";
import type { CircuitBreakerRegistry } from "../breakers/registry.ts";
import { isAppError } from "../errors.ts";
import type { HandlerRegistry } from "../handlers/registry.ts";
import { lazyChild, type Logger } from "../logger.ts";
import type { TenantMetrics } from "../metrics/tenant-metrics.ts";
import type { Sequence } from "../sequence/schema.ts";
import type { BackendStore, ClaimedInstance, ClaimedRow, Progress, RunStore } from "../storage/index.ts";
import type { BudgetedTenants } from "./budgeted-tenants.ts";
import { Dispatcher, type Dispatching, type StepResult } from "./dispatch.ts";
import { Interrupt } from "./interrupt.ts";
import { Outcomes } from "./outcome.ts";
import type { ProgressWriter } from "./progress-writer.ts";
import { RunState } from "./run-state.ts";
import { SequenceCache } from "./sequence-cache.ts";
import type { StepSlots } from "./step-slots.ts";
import { applySignals } from "./signals.ts";
import { shieldedSteps } from "./tree/cancel.ts";
import { evaluator } from "./tree/evaluate.ts";
import type { Env, Leaf, Settled } from "./tree/state.ts";

/** How a run ended, for the scheduler's counters. */
export type RunEnd = Settled | "paused" | "scheduled" | "deferred" | "waiting" | "released" | "lease_lost";

export interface StepRunnerDeps {
  store: BackendStore;
  handlers: HandlerRegistry;
  /** The (tenant, handler) circuit breakers: every answer of a dispatched handler counts. */
  breakers: CircuitBreakerRegistry;
  progress: ProgressWriter;
  budgeted: BudgetedTenants;
  /** This process's step slots (shared by every backend's runner). */
  slots: StepSlots;
  metrics?: Pick<TenantMetrics, "step">;
  now: () => Date;
  log: Logger;
}

interface InFlight {
  leaf: Leaf;
  attempt: number;
  abort: Interrupt;
  done: Promise<StepResult>;
}

interface ActiveRun extends Dispatching {
  inflight: Map<string, InFlight>;
  /** Results that arrived since the loop last looked, in arrival order. */
  settled: { step: InFlight; result: StepResult }[];
  /** Wakes the loop when it waits for a result. */
  wake: (() => void) | null;
  /** When the oldest result not yet written settled (ms), or null. */
  unsavedSince: number | null;
  /** When the oldest step start not yet written happened (ms), or null: see PROGRESS_EVERY_MS. */
  startedSince: number | null;
  /** A step that threw (a database error in its pre-flight, say): the run fails with it, as it would inline. */
  thrown: { error: unknown } | null;
  /** Told when the run's last commit is queued: from then on it runs nothing and only waits for that write. */
  handOff: () => void;
}

/** How many known sequences a claim names (each a short text the claim compares every row with). */
const KNOWN_SEQUENCES_SENT = 64;

/** A settled step's result waits at most this long for a write while other steps still run. */
export const PROGRESS_EVERY_MS = 250;

export class StepRunner {
  private readonly sequences = new SequenceCache();
  private readonly dispatcher: Dispatcher;
  private readonly outcomes: Outcomes;
  private readonly signals: SignalWatch;

  constructor(private readonly deps: StepRunnerDeps) {
    this.dispatcher = new Dispatcher(deps);
    this.outcomes = new Outcomes(deps.breakers, deps.now);
    this.signals = new SignalWatch((ids) => deps.store.instancesWithQueuedSignals(ids), deps.log);
  }

  /**
   * Runs one claimed instance, its sequence as `sequencesOf` resolved it (null: missing or
   * invalid, and the instance fails); `interrupt` is aborted with "lease_lost" or "shutdown". `handOff`
   * is called once the run's last commit is queued (the scheduler frees its run slot then), and
   * the promise settles when that commit is written.
   */
  async run(claim: ClaimedInstance, row: ClaimedRow, sequence: Sequence | null, interrupt: Interrupt, handOff: () => void = () => {}): Promise<RunEnd> {
    if (!sequence) return this.failUnrunnable(claim, row, handOff);
    const store = this.deps.store.run(claim);
    // Outputs are read only when a template or condition can see them, and the instance has any.
    const outputs = row.cursor !== null && readsOutputs(sequence) ? await store.latestOutputs() : {};
    const run = new RunState(claim, row, sequence, outputs, this.deps.now);
    const log = lazyChild(this.deps.log, { tenant_id: claim.tenantId, instance_id: claim.id });
    const at: ActiveRun = { run, store, log, interrupt, inflight: new Map(), settled: [], wake: null, thrown: null, unsavedSince: null, startedSince: null, handOff };

    await this.outcomes.takeExternal(run, store);
    if (row.hasSignals) await this.readSignals(at);
    const unwatch = this.signals.watch(claim.id, () => void this.readSignals(at).catch((error: unknown) => log.warn({ err: error }, "reading signals failed")));
    // One listener per run passes an interruption on to its steps; a step started after it is
    // aborted at its start.
    const stopListening = interrupt.onAbort(() => { for (const f of at.inflight.values()) f.abort.abort(interrupt.reason); });
    try {
      return await this.drive(at);
    } finally {
      stopListening();
      unwatch();
      for (const f of at.inflight.values()) f.abort.abort("shutdown");
    }
  }

  /** The sequences a claim need not send: the most recently run of those this runner holds parsed. */
  knownSequences(): string[] {
    return this.sequences.recent(KNOWN_SEQUENCES_SENT);
  }

  /**
   * A claimed batch's sequences, in its order, the rows the claim sent without a definition (known
   * ones) read first, so that no parse in between can evict theirs. Called as soon as the claim
   * returns: nothing reads the cache while a claim is out.
   */
  sequencesOf(rows: readonly ClaimedRow[]): (Sequence | null)[] {
    return this.sequences.resolve(rows);
  }

  private async drive(at: ActiveRun): Promise<RunEnd> {
    const { run, inflight } = at;
    const writer = this.deps.progress;
    for (;;) {
      if (at.interrupt.aborted) return this.release(at);
      const pass = run.env();
      const progress = evaluator.body(run.phaseBlocks(), pass);
      run.record(...pass.newOutputs);
      await this.settleAbandoned(at, pass);

      if (progress.kind === "settled" && inflight.size === 0) {
        if (!run.inCleanup && progress.status !== "completed" && run.cleanupOf(progress.status)?.length) {
          run.startCleanup(progress.status);
          continue;
        }
        const status = run.cursor.cleanup?.status ?? progress.status;
        return (await this.finish(at, status)) ? status : "lease_lost";
      }
      // A settled step is written before any further step starts, at the latest PROGRESS_EVERY_MS
      // after it settled while others still run, or with the final state when the tree has settled
      // (one write for the last step). So a crash re-runs at most the steps in flight and those
      // that settled in the last PROGRESS_EVERY_MS; and a wide fan-out whose branches trickle in
      // through the step slots is not rewritten for every branch. A step still running
      // PROGRESS_EVERY_MS after it started is written too, so the run facts name it (current_step)
      // while it runs; a quick step is written only with its result.
      const startsNew = progress.kind === "active" && progress.runnable.some((leaf) => !inflight.has(leaf.id));
      const settledDue = run.unsavedProgress && (startsNew || (inflight.size > 0 && this.unsavedFor(at) >= PROGRESS_EVERY_MS));
      const startedDue = inflight.size > 0 && this.startedFor(at) >= PROGRESS_EVERY_MS;
      if (progress.kind === "active" && (settledDue || startedDue)) {
        run.unsavedProgress = false;
        at.unsavedSince = null;
        at.startedSince = null;
        if (!(await run.commit(writer, "running"))) return "lease_lost";
      }
      if (run.paused) {
        // In-process calls are abandoned and run again after resume (the cursor keeps them
        // active); shielded ones (G.3) finish first. A worker task is never in flight here: it
        // runs on its worker, which finishes it, and the result is taken on resume.
        const shielded = shieldedSteps(run.phaseBlocks());
        for (const [id, f] of inflight) {
          if (shielded.has(id)) continue;
          f.abort.abort("paused");
          inflight.delete(id);
          const node = run.tree.nodes[id]!;
          node.pausedWhileRunning = true;
          run.interruptAttempt(id, node, "paused");
        }
        if (inflight.size === 0) return (await this.finish(at, "paused")) ? "paused" : "lease_lost";
      } else if (progress.kind === "active") for (const leaf of progress.runnable) if (!inflight.has(leaf.id)) this.start(at, leaf);

      if (inflight.size === 0) {
        if (progress.kind === "active" && progress.waiting) {
          const waitingOn = Object.values(run.tree.nodes).flatMap((n) => (n.status === "active" ? [n.taskId, n.childId] : []).filter((x): x is string => !!x));
          // A wait with a deadline (an input gate's timeout) is woken then by the reaper.
          const nextFireAt = progress.until === null ? null : new Date(progress.until);
          return (await this.finish(at, "waiting", { waitingOn, nextFireAt })) ? "waiting" : "lease_lost";
        }
        if (progress.kind === "active" && progress.until !== null) {
          const reason = Object.values(run.tree.nodes).find((n) => n.status === "active" && n.deferReason)?.deferReason ?? "delay";
          const written = await this.finish(at, "scheduled", { nextFireAt: new Date(progress.until), deferReason: reason });
          return written ? (reason === "retry" ? "scheduled" : "deferred") : "lease_lost";
        }
        continue; // something settled without running a step (a skipped `when`): evaluate again
      }

      // Every result that arrived meanwhile (typically while the last commit was in flight) is
      // applied before the tree is evaluated and written again: one evaluation and one commit for
      // all of them, so a wide fan-out costs a write per batch of settled branches, not per branch.
      if (at.settled.length === 0 && !at.thrown) {
        // With results or starts unsaved, wake in time to write them even if nothing else settles.
        const dueIn = [
          ...(run.unsavedProgress ? [PROGRESS_EVERY_MS - this.unsavedFor(at)] : []),
          ...(at.startedSince !== null ? [PROGRESS_EVERY_MS - this.startedFor(at)] : []),
        ];
        const writeIn = dueIn.length > 0 ? Math.max(0, Math.min(...dueIn)) : null;
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          at.wake = resolve;
          if (writeIn !== null) timer = setTimeout(resolve, writeIn);
        });
        clearTimeout(timer);
      }
      at.wake = null;
      if (at.thrown) throw at.thrown.error;
      for (const { step, result } of at.settled.splice(0)) {
        const id = step.leaf.id;
        if (inflight.get(id) !== step) continue; // abandoned (paused) before it answered
        inflight.delete(id);
        if (result.kind === "interrupted") {
          if (result.why === "lease_lost") return "lease_lost";
          if (result.why === "shutdown") return this.release(at);
          continue; // cancelled or paused while it ran: its result is dropped, the tree goes on
        }
        // A handler's answer counts on its breaker even when the step's result is dropped below.
        if (result.kind === "handled") this.outcomes.count(run, result.handler, result.outcome);
        const state = run.tree.nodes[id];
        // Cancelled (race loser, cancel signal) or reset while it ran: its result is dropped.
        if (!state || state.status !== "active" || (state.attempt ?? 0) !== step.attempt) continue;
        this.outcomes.apply(run, step.leaf, state, result);
        run.unsavedProgress = true;
        at.unsavedSince ??= performance.now(); // real time, whatever clock the run's logic uses
      }
    }
  }

  private unsavedFor(at: ActiveRun): number {
    return at.unsavedSince === null ? 0 : performance.now() - at.unsavedSince;
  }

  private startedFor(at: ActiveRun): number {
    return at.startedSince === null ? 0 : performance.now() - at.startedSince;
  }

  private start(at: ActiveRun, leaf: Leaf): void {
    const state = at.run.tree.nodes[leaf.id]!;
    const abort = new Interrupt();
    if (at.interrupt.aborted) abort.abort(at.interrupt.reason);
    const attempt = state.attempt ?? 0;
    delete state.notBefore;
    delete state.deferReason;
    delete state.pausedWhileRunning;
    const done = leaf.type === "step" ? this.dispatcher.step(at, leaf, state, attempt, abort) : this.dispatcher.child(at, leaf);
    const step: InFlight = { leaf, attempt, abort, done };
    at.inflight.set(leaf.id, step);
    at.startedSince ??= performance.now();
    done.then(
      (result) => at.settled.push({ step, result }),
      (error: unknown) => (at.thrown ??= { error }),
    ).finally(() => at.wake?.());
  }

  private async readSignals(at: ActiveRun): Promise<void> {
    const signals = await at.store.pendingSignals(at.run.appliedSignals);
    if (signals.length === 0) return;
    const cancelled = applySignals(at.run, signals);
    if (cancelled) await this.settleAbandoned(at, cancelled);
    // What the signals did (a new context, say) is written at once, which also marks them
    // delivered, even while a step runs on for minutes (signals are few: no window to wait for
    // company); and the loop acts on a pause now, not when a step next settles.
    at.run.unsavedProgress = true;
    at.unsavedSince = performance.now() - PROGRESS_EVERY_MS;
    at.wake?.();
  }

  /**
   * Steps cancelled while in flight (race losers, a cancel signal) stop at once, the worker
   * tasks of abandoned blocks go, and the children of cancelled sub_sequence blocks are cancelled.
   */
  private async settleAbandoned(at: ActiveRun, pass: Env): Promise<void> {
    for (const [id, f] of at.inflight) {
      const node = at.run.tree.nodes[id];
      if (node?.status === "active" || f.abort.aborted) continue;
      f.abort.abort("cancelled");
      if (node) at.run.interruptAttempt(id, node, "cancelled");
    }
    if (pass.abandoned.length) await at.store.cancelWorkerTasks(pass.abandoned);
    for (const childId of pass.cancelledChildren) await cancelChild(at.store, childId);
  }

  /** The run's last commit: handed off first, as nothing of the run is left to do but that write. */
  private finish(at: ActiveRun, state: Progress["state"], extra?: Partial<Progress>): Promise<boolean> {
    const written = at.run.commit(this.deps.progress, state, extra);
    at.handOff();
    return written;
  }

  private async release(at: ActiveRun): Promise<RunEnd> {
    return (await this.finish(at, "scheduled", { nextFireAt: this.deps.now() })) ? "released" : "lease_lost";
  }

  private async failUnrunnable(claim: ClaimedInstance, row: ClaimedRow, handOff: () => void): Promise<RunEnd> {
    const written = this.deps.progress.commit({
      instanceId: claim.id, tenantId: claim.tenantId, leaseEpoch: claim.leaseEpoch, state: "failed", cursor: row.cursor,
    });
    handOff();
    this.deps.log.warn({ tenant_id: claim.tenantId, instance_id: claim.id }, "instance failed: its sequence is missing or invalid");
    return (await written) ? "failed" : "lease_lost";
  }
}

/** A child that has ended, or is not this tenant's, needs nothing (and answers as missing). */
async function cancelChild(store: RunStore, childId: string): Promise<void> {
  await store.signalInstance(childId, { type: "cancel", payload: null }).catch((error: unknown) => {
    if (!isAppError(error, "not_found") && !isAppError(error, "invalid_argument")) throw error;
  });
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
