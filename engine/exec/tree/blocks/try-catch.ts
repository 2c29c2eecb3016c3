// C.6 try_catch: run `try_block`. If something in it failed and `catch_block` is non-empty, first
// write context.data._error = {failed_blocks, source: "try_catch", block_id}, then run the catch;
// Bulkhead adds what the catch needs to act on it: `message` (the first failed step's, so a catch
// reads `{{ context.data._error.message }}`) and `errors` (each failed step's error in full).
// an empty catch swallows the failure. `finally_block` runs in every outcome. Result: failed if
// the finally failed, or if the try failed and the catch failed too; otherwise completed. A
// recovered inner try_catch hides the failure from an outer one.
import type { Block, TryCatchBlock } from "../../../sequence/schema.ts";
import type { Evaluator } from "../evaluate.ts";
import { childrenOf, node, setData, settled, type Env, type Progress } from "../state.ts";

function failedIds(env: Env, blocks: readonly Block[]): string[] {
  return blocks.flatMap((b) => [...(env.cursor.nodes[b.id]?.status === "failed" ? [b.id] : []), ...failedIds(env, childrenOf(b))]);
}

/** The caught failure as the catch arm reads it. */
function caughtError(env: Env, block: TryCatchBlock) {
  const failed = failedIds(env, block.try_block);
  const errors = failed.flatMap((id) => {
    const failure = env.cursor.nodes[id]?.failure;
    if (!failure) return [];
    return [{
      block_id: id, message: failure.message, retryable: failure.retryable,
      ...(failure.code ? { code: failure.code } : {}), ...(failure.handler ? { handler: failure.handler } : {}),
      ...(failure.httpStatus ? { http_status: failure.httpStatus } : {}),
    }];
  });
  return { failed_blocks: failed, source: "try_catch", block_id: block.id, message: errors[0]?.message ?? null, errors };
}

export function evaluateTryCatch(block: TryCatchBlock, env: Env, ev: Evaluator): Progress {
  const state = node(env, block.id);
  state.phase ??= "try";
  if (state.phase === "try") {
    const attempt = ev.body(block.try_block, env);
    if (attempt.kind === "active") return attempt;
    if (attempt.status === "failed" && block.catch_block.length > 0) {
      setData(env, "_error", caughtError(env, block));
      state.tryFailed = true;
      state.phase = "catch";
    } else {
      // A cancelled try is not caught; it makes the try_catch cancelled after the finally.
      if (attempt.status === "cancelled") state.cancelRequested = true;
      state.phase = "finally";
    }
  }
  if (state.phase === "catch") {
    const recovery = ev.body(block.catch_block, env);
    if (recovery.kind === "active") return recovery;
    state.catchFailed = recovery.status !== "completed";
    state.phase = "finally";
  }
  if (block.finally_block?.length) {
    const cleanup = ev.body(block.finally_block, env);
    if (cleanup.kind === "active") return cleanup;
    if (cleanup.status === "failed") return settled("failed");
  }
  if (state.tryFailed && state.catchFailed) return settled("failed");
  return settled(state.cancelRequested ? "cancelled" : "completed");
}
