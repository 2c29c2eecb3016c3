// C.2 race: all branches start at once. A branch wins when all its blocks finished without
// failure; then every other unfinished block is cancelled: it never starts, an in-flight loser
// records no output, and its worker tasks are deleted.
// - first_to_resolve (default): the first failing branch, before any win, fails the race at once.
// - first_to_succeed: failures only eliminate branches; the race fails when every branch is dead.
import type { RaceBlock } from "../../../sequence/schema.ts";
import { cancelBlocks } from "../cancel.ts";
import type { Evaluator } from "../evaluate.ts";
import { merge, settled, type Env, type Progress } from "../state.ts";

export function evaluateRace(block: RaceBlock, env: Env, ev: Evaluator): Progress {
  const branches = block.branches.map((branch) => ev.body(branch, env));
  const status = (i: number) => (branches[i]!.kind === "settled" ? (branches[i] as { status: string }).status : "active");
  const endWith = (outcome: "completed" | "failed", keep: number) => {
    block.branches.forEach((branch, i) => i !== keep && cancelBlocks(env, branch));
    return settled(outcome);
  };

  const winner = branches.findIndex((_, i) => status(i) === "completed");
  if (winner >= 0) return endWith("completed", winner);
  if (block.semantics === "first_to_resolve") {
    const loser = branches.findIndex((_, i) => status(i) === "failed");
    if (loser >= 0) return endWith("failed", loser);
  }
  if (branches.every((p) => p.kind === "settled")) {
    // No branch won. Failed branches make it failed; only cancelled ones, cancelled.
    return settled(branches.some((_, i) => status(i) === "failed") ? "failed" : "cancelled");
  }
  return merge(branches.filter((p) => p.kind === "active"));
}
