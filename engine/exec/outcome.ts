// Outcome: what a dispatched leaf's result does to the run. Every answer of a handler counts on
// its (tenant, handler) breaker (count); then (apply) a success is checked against the step's output_schema and
// stored, a failure is retried or fails the step, a snooze waits, a cancel cancels the step.
// The runner's next commit writes it all, fenced by the lease.
import type { CircuitBreakerRegistry } from "../breakers/registry.ts";
import type { HandlerOutcome } from "../handlers/types.ts";
import { schemaViolation } from "../sequence/json-schema.ts";
import type { StepBlock } from "../sequence/schema.ts";
import type { RunStore } from "../storage/index.ts";
import type { StepResult } from "./dispatch.ts";
import type { RunState } from "./run-state.ts";
import type { Leaf, NodeState } from "./tree/state.ts";
import { describeTextProblem, storableText, unstorableText } from "../text-hygiene.ts";

export class Outcomes {
  constructor(
    private readonly breakers: CircuitBreakerRegistry,
    private readonly now: () => Date,
  ) {}

  /** Applies a settled dispatch (not an interruption) to the leaf's node. */
  apply(run: RunState, leaf: Leaf, state: NodeState, result: Exclude<StepResult, { kind: "interrupted" }>): void {
    const step = leaf.type === "step" ? leaf : undefined;
    switch (result.kind) {
      case "deferred":
        state.notBefore = result.until.toISOString();
        state.deferReason = result.reason;
        return;
      case "worker":
        state.taskId = result.taskId;
        state.handler = result.handler;
        return;
      case "child":
        state.childId = result.childId;
        return;
      case "failure":
        return run.fail(leaf.id, step, state, { message: result.message, retryable: result.retryable, code: result.code });
      case "handled":
        return this.handled(run, step, leaf.id, state, result.handler, result.outcome);
    }
  }

  /**
   * At the start of a run: the results of the steps it handed away, worker tasks and child
   * instances, that have come in since. Worker-reported failures count against the breaker like
   * in-process ones (I, Appendix 14).
   */
  async takeExternal(run: RunState, store: RunStore): Promise<void> {
    for (const [id, state] of Object.entries(run.tree.nodes)) {
      if (state.status !== "active") continue;
      if (state.childId) {
        const ended = await store.childOutcome(state.childId);
        if (!ended) continue;
        if (ended.state === "completed") run.succeed(id, state, ended.outputs, false);
        else {
          state.status = "failed";
          state.failure = { message: `sub-sequence instance ${state.childId} ${ended.state}`, retryable: false, code: "sub_sequence" };
          state.finishedAt = this.now().toISOString();
        }
        delete state.childId;
        continue;
      }
      if (!state.taskId) continue;
      const result = await store.workerResult(state.taskId);
      if (result?.state !== "completed" && result?.state !== "failed") continue;
      delete state.taskId;
      const step = run.findStep(id);
      const handler = state.handler ?? step?.handler;
      if (result.state === "completed") {
        if (handler) this.breakers.recordSuccess(run.claim.tenantId, handler, this.now().getTime());
        const problem = outputProblem(step, result.output);
        if (problem) run.fail(id, step, state, { message: problem, retryable: false, code: "output", handler }, result.workerId);
        else run.succeed(id, state, result.output, true, result.workerId);
      } else {
        if (handler) this.breakers.recordFailure(run.claim.tenantId, handler, this.now().getTime());
        run.fail(id, step, state, { message: storableText(result.message), retryable: result.retryable, code: "worker", handler }, result.workerId);
      }
    }
  }

  /** Both failure kinds count; any other answer says the handler's dependency is there. */
  count(run: RunState, handler: string, outcome: HandlerOutcome): void {
    const at = this.now().getTime();
    if (outcome.kind === "failure") this.breakers.recordFailure(run.claim.tenantId, handler, at);
    else this.breakers.recordSuccess(run.claim.tenantId, handler, at);
  }

  private handled(run: RunState, step: StepBlock | undefined, id: string, state: NodeState, handler: string, outcome: HandlerOutcome): void {
    switch (outcome.kind) {
      case "success": {
        const problem = outputProblem(step, outcome.output);
        if (problem) return run.fail(id, step, state, { message: problem, retryable: false, code: "output", handler });
        if (outcome.blocks) run.cursor.blocks = outcome.blocks;
        return run.succeed(id, state, outcome.output, false);
      }
      case "failure": {
        const { message, retryable, code, httpStatus } = outcome;
        return run.fail(id, step, state, { message: storableText(message), retryable, code: code ?? "handler", handler, ...(httpStatus ? { httpStatus } : {}) });
      }
      case "snooze":
        state.notBefore = outcome.until.toISOString();
        state.deferReason = "snooze";
        return;
      case "cancel":
        state.status = "cancelled";
        return;
    }
  }
}

/**
 * A step's output must be text PostgreSQL can store, and (A.3) match its output_schema; either
 * problem is a permanent failure (no retry).
 */
function outputProblem(step: StepBlock | undefined, output: unknown): string | undefined {
  // Text PostgreSQL cannot store would fail the commit of every step in its batch: the step fails instead.
  const unstorable = unstorableText(output, "output");
  if (unstorable) return `the handler's output cannot be stored: ${describeTextProblem(unstorable)}`;
  if (step?.output_schema === undefined || step.output_schema === null) return undefined;
  const violation = schemaViolation(step.output_schema, output);
  return violation && `output does not match the step's output_schema: ${violation}`;
}
