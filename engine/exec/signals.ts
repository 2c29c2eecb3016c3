// Applying an instance's queued signals (wire-format G) to its run: pause and resume, cancel
// (with shielding, G.3), update_context, and the answers to input gates. The runner reads the
// queue at the start and every 250 ms while steps run; the next commit consumes what was applied.
import { isAppError } from "../errors.ts";
import { isObject } from "../model.ts";
import { injectInto } from "../sequence/inject-blocks.ts";
import type { PendingSignal } from "../storage/index.ts";
import type { RunState } from "./run-state.ts";
import { choiceValues, HUMAN_INPUT_SIGNAL, inputGate } from "./tree/blocks/human-input.ts";
import { requestCancel } from "./tree/cancel.ts";
import type { Env } from "./tree/state.ts";

/**
 * Applies the signals not applied yet, in arrival order. Returns the evaluator pass a cancel
 * changed, whose abandoned work the runner must stop, or null when nothing was cancelled.
 */
export function applySignals(run: RunState, signals: readonly PendingSignal[]): Env | null {
  let cancelled: Env | null = null;
  for (const signal of signals) {
    // Two reads in flight at once (the poller, the start) may both return a signal.
    if (run.isApplied(signal.id)) continue;
    run.markApplied(signal.id);
    const { type, payload } = signal;
    if (type === "cancel") {
      if (run.inCleanup) continue; // the cleanup tree runs to its end
      cancelled ??= run.env();
      requestCancel(cancelled, run.blocks());
    } else if (type === "pause") run.paused = true;
    else if (type === "resume") run.paused = false;
    else if (type === "update_context") {
      // G.3: only the top-level keys of payload.data are merged; anything else is ignored.
      if (isObject(payload) && isObject(payload.data)) run.mergeData(payload.data);
    } else if (type === "inject_blocks") injectQueued(run, payload); else if (type.custom.startsWith(HUMAN_INPUT_SIGNAL)) answerGate(run, type.custom.slice(HUMAN_INPUT_SIGNAL.length), payload);
    // Other custom signals have no built-in effect (G.3).
  }
  return cancelled;
}

/**
 * Blocks injected over REST, checked again against the run's blocks now (another injection may
 * have taken an id since the request was checked): one that no longer fits is dropped.
 */
function injectQueued(run: RunState, payload: unknown): void {
  if (run.inCleanup || !isObject(payload)) return;
  try {
    run.cursor.blocks = injectInto(run.blocks(), payload.blocks, typeof payload.position === "number" ? payload.position : null).blocks;
  } catch (error) {
    if (!isAppError(error)) throw error;
  }
}

/**
 * The answer to a step's input gate, even one the instance has not reached yet. R: the payload
 * must be an object whose `value` is one of the gate's choices (Yes/No by default); the value,
 * a string, is what context.data[store_as or block id] gets. Anything else is consumed and
 * dropped, and the gate keeps waiting. A comment travels in the signal, not in the context.
 */
function answerGate(run: RunState, blockId: string, payload: unknown): void {
  const step = run.findStep(blockId, run.blocks());
  const gate = step && inputGate(step);
  const state = run.cursor.nodes[blockId];
  if (!gate || state?.input !== undefined || state?.status === "completed" || state?.status === "failed") return;
  const value = isObject(payload) ? payload.value : undefined;
  if (typeof value !== "string" || !choiceValues(gate).includes(value)) return;
  (run.cursor.nodes[blockId] ??= {}).input = value;
  run.setData(gate.store_as ?? blockId, value);
}
