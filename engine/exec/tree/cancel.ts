// Cancellation (wire-format G.3): every cancellable unfinished block, pending or running, at any
// depth, is cancelled at once; shielded work runs on. Shielded: a cancellation_scope and all under
// it, a try_catch with a finally arm (until it settles) and all under it, a step with
// `cancellable: false`. A race uses cancelBlocks for its losers, where nothing is shielded.
import type { Block } from "../../sequence/schema.ts";
import { childrenOf, SETTLED, type Env } from "./state.ts";

function shielded(block: Block): boolean {
  return (
    block.type === "cancellation_scope" ||
    (block.type === "try_catch" && block.finally_block !== null && block.finally_block.length > 0) ||
    (block.type === "step" && !block.cancellable)
  );
}

/** The steps under `blocks` that signals do not interrupt: shielded ones and all under a shielded block. */
export function shieldedSteps(blocks: readonly Block[], underShield = false, into = new Set<string>()): Set<string> {
  for (const block of blocks) {
    const shield = underShield || shielded(block);
    if (block.type === "step" || block.type === "sub_sequence") {
      if (shield) into.add(block.id);
    } else shieldedSteps(childrenOf(block), shield, into);
  }
  return into;
}

/** A cancel signal: cancel what is cancellable under `blocks`, leave shielded work running. */
export function requestCancel(env: Env, blocks: readonly Block[]): void {
  for (const block of blocks) {
    const state = env.cursor.nodes[block.id];
    if ((state?.status && SETTLED.has(state.status)) || shielded(block)) continue;
    if (block.type === "step" || block.type === "sub_sequence") cancelStep(env, block.id);
    else {
      (env.cursor.nodes[block.id] ??= {}).cancelRequested = true;
      requestCancel(env, childrenOf(block));
    }
  }
}

/** Cancels every unfinished block under `blocks`, shielded or not (a race's losing branches). */
export function cancelBlocks(env: Env, blocks: readonly Block[]): void {
  for (const block of blocks) {
    const state = env.cursor.nodes[block.id];
    if (state?.status && SETTLED.has(state.status)) continue;
    if (block.type === "step" || block.type === "sub_sequence") cancelStep(env, block.id);
    else {
      env.cursor.nodes[block.id] = { ...state, status: "cancelled" };
      cancelBlocks(env, childrenOf(block));
    }
  }
}

function cancelStep(env: Env, id: string): void {
  const state = env.cursor.nodes[id];
  if (state?.taskId) env.abandoned.push(id);
  if (state?.childId) env.cancelledChildren.push(state.childId);
  env.cursor.nodes[id] = { ...state, status: "cancelled" };
}
