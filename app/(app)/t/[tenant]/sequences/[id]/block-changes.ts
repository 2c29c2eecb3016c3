// Which blocks two versions do not share, by block id: for the graph diff. A composite is
// compared without its arms, so a change inside an arm marks the changed block, not its parents.
import { armsOf, getAt, isBlock, sagaSteps, type JsonBlock } from "../../../../../_components/sequence-graph/arms.ts";
import { canonicalJson } from "../editor/canonical-json.ts";

export type BlockChange = "same" | "changed" | "added" | "removed";

/** Every block of a tree (arms and saga parts included), by id. */
function blocksById(blocks: unknown): Map<string, JsonBlock> {
  const found = new Map<string, JsonBlock>();
  const visit = (list: unknown) => {
    if (!Array.isArray(list)) return;
    for (const block of list) {
      if (!isBlock(block)) continue;
      found.set(block.id, block);
      for (const arm of armsOf(block)) visit(getAt(block, arm.path));
      for (const step of sagaSteps(block)) visit([step.action?.block, step.compensation?.block]);
    }
  };
  visit(blocks);
  return found;
}

/** The block's own fields: its arms and saga steps' blocks left out. */
function own(block: JsonBlock): string {
  const copy: Record<string, unknown> = structuredClone(block);
  for (const arm of armsOf(block)) {
    const [key] = arm.path;
    if (typeof key === "string") copy[key] = null;
  }
  if (Array.isArray(copy.steps)) copy.steps = (copy.steps as unknown[]).map((step) => (typeof step === "object" && step !== null ? { ...step, action: null, compensation: null } : step));
  return canonicalJson(copy);
}

/** For each side, how each of its blocks compares with the other side. */
export function blockChanges(left: unknown, right: unknown): { left: Map<string, BlockChange>; right: Map<string, BlockChange> } {
  const [a, b] = [blocksById(left), blocksById(right)];
  const side = (mine: Map<string, JsonBlock>, theirs: Map<string, JsonBlock>, missing: BlockChange) =>
    new Map([...mine].map(([id, block]): [string, BlockChange] => {
      const other = theirs.get(id);
      return [id, !other ? missing : own(other) === own(block) ? "same" : "changed"];
    }));
  return { left: side(a, b, "removed"), right: side(b, a, "added") };
}
