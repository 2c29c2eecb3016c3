// Dispatch: one runnable leaf, from pre-flight to a result. A step passes pre-flight, then runs
// its handler from the registry, or, when the registry has none of that name, becomes an external
// worker task. A sub_sequence starts its child instance. Nothing here changes the run's cursor;
// the outcome module applies the result.
import { breakerPreflight } from "../breakers/preflight.ts";
import type { CircuitBreakerRegistry } from "../breakers/registry.ts";
import type { HandlerRegistry } from "../handlers/registry.ts";
import type { HandlerInput, HandlerOutcome } from "../handlers/types.ts";
import { lazyChild, type Logger } from "../logger.ts";
import type { TenantMetrics } from "../metrics/tenant-metrics.ts";
import { inputProblem } from "../sequence/input-schema.ts";
import type { HandlerCall, StepBlock, SubSequenceBlock } from "../sequence/schema.ts";
import { CredentialError, resolveCredentialRefs, scrub, type ResolvedParams } from "../secrets/credential-refs.ts";
import { resolveTemplates } from "../sequence/template.ts";
import type { RunStore } from "../storage/index.ts";
import type { BudgetedTenants } from "./budgeted-tenants.ts";
import { visibleContext } from "./context-access.ts";
import type { Interrupt } from "./interrupt.ts";
import { invokeHandler, type Interruption } from "./invoke.ts";
import { holdsSlot, type StepSlots } from "./step-slots.ts";
import { runPreflight } from "./preflight.ts";
import type { RunState } from "./run-state.ts";
import { inputGate } from "./tree/blocks/human-input.ts";
import { scopeOf, type NodeState } from "./tree/state.ts";

/** The outcome with the secrets put into its params taken out of what will be stored. */
function scrubbed(outcome: HandlerOutcome, secrets: readonly string[]): HandlerOutcome {
  if (secrets.length === 0) return outcome;
  if (outcome.kind === "success") return { ...outcome, output: scrub(outcome.output, secrets) };
  if (outcome.kind === "failure") return { ...outcome, message: scrub(outcome.message, secrets) };
  return outcome;
}

/** Block id of the output an on_deadline_breach escalation records (B.1 hides `_sla:*` from `outputs`). */
const SLA_OUTPUT_PREFIX = "_sla:";

export type StepResult =
  /** A handler answered; `handler` is the one that ran (a fallback or escalation handler, maybe). */
  | { kind: "handled"; handler: string; outcome: HandlerOutcome }
  /** The step failed before any handler ran (deadline, a template, a missing sub-sequence). */
  | { kind: "failure"; retryable: boolean; message: string; code: string }
  | { kind: "deferred"; until: Date; reason: string }
  | { kind: "worker"; taskId: string; handler: string }
  | { kind: "child"; childId: string }
  | { kind: "interrupted"; why: Interruption };

/** The run a leaf is dispatched for. */
export interface Dispatching {
  run: RunState;
  store: RunStore;
  log: Logger;
  /** Aborted with "lease_lost" or "shutdown". */
  interrupt: Interrupt;
}

export interface DispatchDeps {
  handlers: HandlerRegistry;
  /** This process's step slots, taken around every handler call and worker dispatch. */
  slots: StepSlots;
  /** Where each tenant's slot use is counted (absent: not counted). */
  metrics?: Pick<TenantMetrics, "step">;
  breakers: CircuitBreakerRegistry;
  /** Tenants known to have no budget skip the budget statement. */
  budgeted: Pick<BudgetedTenants, "has">;
  now: () => Date;
}

export class Dispatcher {
  constructor(private readonly deps: DispatchDeps) {}

  /**
   * Runs one step's pre-flight and handler (or hands it to a worker). `interrupt` is the step's own
   * signal: the runner aborts it when the step is cancelled or paused, and with the run's reason
   * when the run is interrupted. A handler stops either way; a cancelled step's result is dropped.
   */
  async step(at: Dispatching, step: StepBlock, state: NodeState, attempt: number, interrupt: Interrupt): Promise<StepResult> {
    const { run, store } = at;
    const tenantId = run.claim.tenantId;
    const now = this.deps.now();
    const decision = await runPreflight({
      step, timezone: run.row.timezone, instanceId: run.claim.id, now,
      reachedAt: new Date(state.reachedAt ?? now), startedAt: state.startedAt ? new Date(state.startedAt) : null,
      reservations: store, budgeted: this.deps.budgeted.has(tenantId),
      breaker: () => breakerPreflight(this.deps.breakers, tenantId, step, now.getTime()),
    });
    if (decision.kind === "defer") return { kind: "deferred", until: decision.until, reason: decision.reason };
    if (decision.kind === "fail") {
      if (decision.deadline && step.on_deadline_breach) await this.escalateDeadline(at, step, step.on_deadline_breach, attempt, interrupt);
      return { kind: "failure", retryable: false, message: decision.message, code: decision.deadline ? "deadline" : "preflight" };
    }
    state.startedAt ??= now.toISOString();
    run.beginAttempt(step.id, state, attempt);

    let params: unknown;
    try {
      params = resolveTemplates(step.params, scopeOf(run.env()));
    } catch (error) {
      return { kind: "failure", retryable: false, message: (error as Error).message, code: "template" };
    }
    // Checked here for worker tasks too, which keep the references: their claimant gets the values.
    let resolved: ResolvedParams;
    try {
      resolved = await resolveCredentialRefs(params, (ids) => store.resolveCredentials(ids));
    } catch (error) {
      if (error instanceof CredentialError) return { kind: "failure", retryable: false, message: error.message, code: "credentials" };
      throw error;
    }
    const handlerName = state.escalated ? inputGate(step)!.escalation_handler! : (decision.handler ?? step.handler);
    const handler = this.deps.handlers.get(handlerName);
    return this.withSlot(tenantId, handlerName, interrupt, async (): Promise<StepResult> => {
      if (!handler) {
        const taskId = await store.insertWorkerTask({
          blockId: step.id, handlerName, queueName: step.queue_name ?? null, params,
          context: visibleContext(run.context, step.context_access), attempt, timeoutMs: step.timeout ?? null,
        });
        return taskId ? { kind: "worker", taskId, handler: handlerName } : { kind: "interrupted", why: "lease_lost" };
      }
      const input = { ...this.input(at, step, step.id, attempt, resolved.params), humanInput: state.input };
      const outcome = await invokeHandler(handler, input, { timeoutMs: step.timeout, interrupt });
      // A vendor that echoes a secret back must not get it stored in outputs or errors.
      return outcome.kind === "interrupted" ? outcome : { kind: "handled", handler: handlerName, outcome: scrubbed(outcome, resolved.secrets) };
    });
  }

  /** Runs `work` holding one of the tenant's step slots (timer handlers need none). */
  private async withSlot(tenantId: string, handler: string, interrupt: Interrupt, work: () => Promise<StepResult>): Promise<StepResult> {
    if (!holdsSlot(handler)) return work();
    const slot = await this.deps.slots.acquire(tenantId, interrupt);
    if (!slot) return { kind: "interrupted", why: interrupt.reason as Interruption };
    this.deps.metrics?.step(tenantId, this.deps.slots.running(tenantId), slot.waited);
    try {
      return await work();
    } finally {
      slot.release();
    }
  }

  /** C.7: finds the child's sequence, checks its input, and creates the child instance. */
  async child(at: Dispatching, block: SubSequenceBlock): Promise<StepResult> {
    const sequence = await at.store.findSubSequence(block.sequence_name, block.version);
    if (!sequence) return { kind: "failure", retryable: false, message: `sub-sequence not found: ${block.sequence_name}`, code: "sub_sequence" };
    const problem = inputProblem(sequence.inputSchema, block.input);
    if (problem) return { kind: "failure", retryable: false, message: `sub-sequence ${block.sequence_name}: ${problem}`, code: "sub_sequence" };
    const created = await at.store.createChild({ sequenceId: sequence.id, blockId: block.id, input: block.input });
    if ("childId" in created) return { kind: "child", childId: created.childId };
    if (created.error === "depth") return { kind: "failure", retryable: false, message: "sub-sequence depth limit (16) reached", code: "sub_sequence" };
    return { kind: "interrupted", why: "lease_lost" };
  }

  private input(at: Dispatching, step: StepBlock, blockId: string, attempt: number, params: unknown): Omit<HandlerInput, "signal"> {
    const { run, store } = at;
    return {
      tenantId: run.claim.tenantId, instanceId: run.claim.id, blockId: step.id, attempt, params,
      context: visibleContext(run.context, step.context_access) as HandlerInput["context"],
      log: lazyChild(at.log, { block_id: blockId }), instances: store, blocks: run.blocks(),
    };
  }

  /**
   * A.3 on_deadline_breach: the escalation handler runs once, best effort, before the step fails;
   * what it answered (or why it could not run) is recorded under `_sla:<step id>`. In-process
   * handlers only: an unknown name is recorded as not found rather than queued for a worker.
   */
  private async escalateDeadline(at: Dispatching, step: StepBlock, call: HandlerCall, attempt: number, interrupt: Interrupt): Promise<void> {
    const blockId = `${SLA_OUTPUT_PREFIX}${step.id}`;
    const record = (output: unknown) => at.run.record({ blockId, output, attempt });
    const handler = this.deps.handlers.get(call.handler);
    if (!handler) return void record({ __error__: true, retryable: false, message: `escalation handler not found: ${call.handler}` });
    let params: unknown;
    try {
      params = resolveTemplates(call.params, scopeOf(at.run.env()));
    } catch (error) {
      return void record({ __error__: true, retryable: false, message: (error as Error).message });
    }
    const result = await this.withSlot(at.run.claim.tenantId, call.handler, interrupt, async () => {
      const outcome = await invokeHandler(handler, this.input(at, step, blockId, attempt, params), { timeoutMs: step.timeout, interrupt });
      return outcome.kind === "interrupted" ? outcome : { kind: "handled", handler: call.handler, outcome };
    });
    if (result.kind !== "handled") return;
    if (result.outcome.kind === "success") record(result.outcome.output);
    else if (result.outcome.kind === "failure") record({ __error__: true, retryable: result.outcome.retryable, message: result.outcome.message });
  }
}
