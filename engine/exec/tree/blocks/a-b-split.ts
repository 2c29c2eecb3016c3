// C.8 a_b_split: pick one variant deterministically: SHA-256 over (the 16 bytes of the instance
// UUID, a 0x00 byte, the UTF-8 block id); the first 8 digest bytes as a big-endian unsigned
// integer, modulo the total weight; the first variant whose cumulative weight exceeds it wins.
// Records {"variant", "variant_index"} under the split's id, runs the chosen variant, fails iff
// it fails. The block id is in the hash, so nested splits decide independently.
import type { ABSplitBlock } from "../../../sequence/schema.ts";
import { sha256Hex } from "../../../sequence/template.ts";
import type { Evaluator } from "../evaluate.ts";
import { node, type Env, type Progress } from "../state.ts";

export function chooseVariant(instanceId: string, blockId: string, weights: readonly number[]): number {
  const uuid = instanceId.replace(/-/g, "");
  const id = new TextEncoder().encode(blockId);
  const input = new Uint8Array(16 + 1 + id.length);
  for (let i = 0; i < 16; i++) input[i] = parseInt(uuid.slice(i * 2, i * 2 + 2), 16);
  input.set(id, 17);
  const value = BigInt(`0x${sha256Hex(input).slice(0, 16)}`) % BigInt(weights.reduce((a, b) => a + b, 0));
  let cumulative = 0n;
  return weights.findIndex((weight) => value < (cumulative += BigInt(weight)));
}

export function evaluateABSplit(block: ABSplitBlock, env: Env, ev: Evaluator): Progress {
  const state = node(env, block.id);
  if (state.variant === undefined) {
    state.variant = chooseVariant(env.instanceId, block.id, block.variants.map((v) => v.weight));
    env.newOutputs.push({ blockId: block.id, output: { variant: block.variants[state.variant]!.name, variant_index: state.variant }, attempt: 0 });
  }
  return ev.body(block.variants[state.variant]!.blocks, env);
}
