// Runs one claimed instance of a flat sequence (top-level steps only) as far as it can go:
// step after step until it completes, fails, waits for a worker, or is deferred. Every step's
// result is committed before the next starts, fenced by the lease epoch, so a crash at any point
// loses at most the step in flight, which then runs again.
import type { HandlerRegistry } from "../handlers/registry.ts";
import type { Logger } from "../logger.ts";
import type { Sequence, StepBlock } from "../sequence/schema.ts";
import type { ClaimedInstance } from "../storage/claim.ts";
import { createWorkerTaskAndWait, type ClaimedRow, type Progress } from "../storage/execution.ts";
import { releaseLease } from "../storage/leases.ts";
import type pg from "pg";
import { nextStep, readCursor, type FlatCursor } from "./cursor.ts";
import { invokeHandler } from "./invoke.ts";
import { nextAttemptAt } from "./retry.ts";

/** What pre-flight decided for a step (engine/exec/preflight.ts makes it). */
export type PreflightOutcome =
  | { kind: "proceed" }
  | { kind: "defer"; until: Date; reason: string }
  | { kind: "fail"; message: string };

export interface PreflightInput {
  step: StepBlock;
  tenantId: string;
  instanceId: string;
  timezone: string;
  cursor: FlatCursor;
  now: Date;
  db: Pick<pg.Pool, "query">;
}

export interface RunDeps {
  db: Pick<pg.Pool, "query">;
  /** Writes a step's progress (grouped with others by the scheduler); false when the lease was lost. */
  commit: (progress: Progress) => Promise<boolean>;
  handlers: HandlerRegistry;
  preflight: (input: PreflightInput) => Promise<PreflightOutcome>;
  log: Logger;
  now: () => Date;
  /** Aborted with "lease_lost" or "shutdown": the run stops without recording a failure. */
  interrupt: AbortSignal;
}

interface Fence {
  instanceId: string;
  tenantId: string;
  leaseEpoch: number;
}

/** How the run ended, for the scheduler's counters and logs. */
export type RunEnd = "completed" | "failed" | "scheduled" | "deferred" | "waiting" | "released" | "lease_lost";

export async function runInstance(claim: ClaimedInstance, row: ClaimedRow, sequence: Sequence, deps: RunDeps): Promise<RunEnd> {
  const { db, log } = deps;
  const fence: Fence = { instanceId: claim.id, tenantId: claim.tenantId, leaseEpoch: claim.leaseEpoch };
  const context = (row.context ?? {}) as { data?: unknown; config?: unknown };
  let cursor = readCursor(row.cursor, deps.now());

  const fail = async (step: StepBlock, message: string, retryable: boolean): Promise<RunEnd> => {
    const committed = await deps.commit({
      ...fence, state: "failed", cursor,
      // The failed step's marker row (wire-format C.12).
      outputs: [{ blockId: step.id, output: { __error__: true, retryable, message }, outputRef: "__error__", attempt: cursor.attempt }],
    });
    return committed ? "failed" : "lease_lost";
  };

  for (;;) {
    const block = sequence.blocks[cursor.index];
    if (!block) {
      return (await deps.commit({ ...fence, state: "completed", cursor })) ? "completed" : "lease_lost";
    }
    if (deps.interrupt.aborted) return release(deps, fence, cursor);
    if (block.type !== "step") {
      // Composite blocks are executed by the block-tree evaluator, which is not built yet.
      return fail({ id: block.id } as StepBlock, `block type "${block.type}" is not supported by this engine yet`, false);
    }

    const now = deps.now();
    const decision = await deps.preflight({ step: block, tenantId: claim.tenantId, instanceId: claim.id, timezone: row.timezone, cursor, now, db });
    if (decision.kind === "defer") {
      return (await releaseLease(db, claim.id, claim.leaseEpoch, decision.until, decision.reason)) ? "deferred" : "lease_lost";
    }
    if (decision.kind === "fail") return fail(block, decision.message, false);

    cursor = { ...cursor, startedAt: cursor.startedAt ?? now.toISOString() };
    const handler = deps.handlers.get(block.handler);
    if (!handler) {
      const handed = await createWorkerTaskAndWait(db, {
        ...fence, cursor, blockId: block.id, handlerName: block.handler, queueName: block.queue_name ?? null,
        params: block.params, context, attempt: cursor.attempt, timeoutMs: block.timeout ?? null,
      });
      return handed ? "waiting" : "lease_lost";
    }

    const result = await invokeHandler(
      handler,
      {
        tenantId: claim.tenantId, instanceId: claim.id, blockId: block.id, attempt: cursor.attempt,
        params: block.params, context: { data: context.data ?? null, config: context.config ?? null },
        log: log.child({ block_id: block.id }),
      },
      { timeoutMs: block.timeout, interrupt: deps.interrupt },
    );

    if (result.kind === "interrupted") {
      return result.why === "shutdown" ? release(deps, fence, cursor) : "lease_lost";
    }
    if (result.kind === "success") {
      const next = nextStep(cursor, deps.now());
      const done = next.index >= sequence.blocks.length;
      const committed = await deps.commit({
        ...fence, state: done ? "completed" : "running", cursor: next,
        outputs: [{ blockId: block.id, output: result.output, attempt: cursor.attempt }],
      });
      if (!committed) return "lease_lost";
      if (done) return "completed";
      cursor = next;
      continue;
    }

    const retryAt = nextAttemptAt(block.retry, cursor.attempt, result.retryable, deps.now());
    if (!retryAt) return fail(block, result.message, result.retryable);
    log.debug({ block_id: block.id, attempt: cursor.attempt, message: result.message }, "step failed, will retry");
    const committed = await deps.commit({
      ...fence, state: "scheduled", nextFireAt: retryAt, deferReason: "retry",
      cursor: { ...cursor, attempt: cursor.attempt + 1 },
    });
    return committed ? "scheduled" : "lease_lost";
  }
}

/** Gives the instance back, due now, at the step it stood on: nothing is recorded as failed. */
async function release(deps: RunDeps, fence: Fence, cursor: FlatCursor): Promise<RunEnd> {
  const released = await deps.commit({ ...fence, state: "scheduled", nextFireAt: deps.now(), cursor });
  return released ? "released" : "lease_lost";
}
