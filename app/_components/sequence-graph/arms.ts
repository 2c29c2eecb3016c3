// What a block holds, in the order it runs: the arms of a fork (parallel/race branches, router
// routes then default, try/catch/finally, a/b variants) and a container's body. One place names
// every arm, so the editor's slots, its outline and the graphs use the same words.
// Plain JSON in, no React, no Node: the editor's draft (possibly invalid) and a stored sequence
// both go through here.
import type { Path } from "../../../engine/sequence/walk.ts";

export type { Path };

export interface JsonBlock {
  type: string;
  id: string;
  [field: string]: unknown;
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function isBlock(value: unknown): value is JsonBlock {
  return isRecord(value) && typeof value.type === "string" && "id" in value;
}

export function getAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const key of path) {
    if (Array.isArray(node) && typeof key === "number") node = node[key];
    else if (isRecord(node) && typeof key === "string") node = node[key];
    else return undefined;
  }
  return node;
}

export const pathKey = (path: Path) => JSON.stringify(path);

/**
 * How a block is drawn: a fork runs (or picks among) arms side by side and joins after them; a
 * container runs one body (a loop repeats it); a saga runs actions with compensations beside them.
 */
export type Shape = "fork" | "container" | "loop" | "saga" | "leaf";

export function shapeOf(block: JsonBlock): Shape {
  switch (block.type) {
    case "parallel":
    case "race":
    case "router":
    case "try_catch":
    case "a_b_split":
    case "ab_split":
      return "fork";
    case "loop":
    case "for_each":
      return "loop";
    case "cancellation_scope":
      return "container";
    case "saga":
      return "saga";
    default:
      return "leaf";
  }
}

export interface Arm {
  /** Relative to the block: `["branches", 1]`, `["body"]`, `["routes", 0, "blocks"]`… */
  path: Path;
  label: string;
  /** True for `default`/`finally_block`, which may be `null` (absent) rather than a list. */
  nullable?: boolean;
}

const text = (value: unknown) => (typeof value === "string" ? value : "");

/**
 * The block lists directly inside `block`, in execution order. A `default` or `finally_block`
 * that is absent (`null`) is no arm at all: nothing runs there, so nothing is drawn.
 * Saga steps hold single blocks, not lists: see `sagaSteps`.
 */
export function armsOf(block: JsonBlock): Arm[] {
  const array = (key: string) => (Array.isArray(block[key]) ? (block[key] as unknown[]) : []);
  const present = (key: string) => Array.isArray(block[key]);
  switch (block.type) {
    case "parallel":
    case "race":
      return array("branches").map((_, index) => ({ path: ["branches", index], label: `branch ${index + 1}` }));
    case "loop":
    case "for_each":
      return [{ path: ["body"], label: "body" }];
    case "router":
      return [
        ...array("routes").map((route, index) => {
          const condition = isRecord(route) ? text(route.condition) : "";
          return { path: ["routes", index, "blocks"], label: `route ${index + 1}${condition ? `: ${condition}` : ""}` };
        }),
        ...(present("default") ? [{ path: ["default"], label: "default", nullable: true }] : []),
      ];
    case "try_catch":
      return [
        { path: ["try_block"], label: "try" },
        { path: ["catch_block"], label: "catch" },
        ...(present("finally_block") ? [{ path: ["finally_block"], label: "finally", nullable: true }] : []),
      ];
    case "a_b_split":
    case "ab_split":
      return array("variants").map((variant, index) => ({
        path: ["variants", index, "blocks"],
        label: `variant ${(isRecord(variant) && text(variant.name)) || index + 1}`,
      }));
    case "cancellation_scope":
      return [{ path: ["blocks"], label: "blocks" }];
    default:
      return [];
  }
}

/**
 * The word for an arm given as the run view's read model numbers it (ExecutionNode.branch_index,
 * engine/exec/tree/nodes.ts): the same label `armsOf` gives, so the run view says "branch 1",
 * "try" or "default" where the editor does. null for no arm (top level, single-body blocks).
 */
export function armLabelOf(parent: JsonBlock, branchIndex: number | null): string | null {
  if (branchIndex === null) return null;
  if (parent.type === "saga") {
    const step = sagaSteps(parent)[Math.floor(branchIndex / 2)];
    const part = branchIndex % 2 === 0 ? "action" : "compensation";
    return step ? `step ${step.id || Math.floor(branchIndex / 2) + 1} ${part}` : part;
  }
  if (parent.type === "try_catch") return (["try", "catch", "finally"] as const)[branchIndex] ?? null;
  const arms = armsOf(parent);
  // Router: `default` is numbered after the routes; armsOf lists it there too.
  return arms[branchIndex]?.label ?? null;
}

/** The arm of its parent that the block at `path` (an editor path) sits in; null at the top level. */
export function armOfPath(doc: unknown, path: Path): string | null {
  for (let length = path.length - 1; length >= 2; length--) {
    const parent = getAt(doc, path.slice(0, length));
    if (typeof path[length - 1] !== "number" || !isBlock(parent)) continue;
    const inside = path.slice(length, -1);
    const arm = armsOf(parent).find((candidate) => pathKey(candidate.path) === pathKey(inside));
    if (arm) return arm.label;
    const index = inside[0] === "steps" ? inside[1] : undefined;
    const saga = typeof index === "number" ? sagaSteps(parent)[index] : undefined;
    // A saga's action or compensation ends its own path; a block inside one is found deeper first.
    if (saga && typeof index === "number") return `step ${saga.id || index + 1} ${String(path[length + 2])}`;
    return null;
  }
  return null;
}

export interface SagaStepParts {
  /** The saga step's own id (named in `_error.failed_step`). */
  id: string;
  action: { block: JsonBlock; path: Path } | null;
  compensation: { block: JsonBlock; path: Path } | null;
}

/** A saga's steps in order, each an action with its optional compensation (paths from the saga). */
export function sagaSteps(block: JsonBlock): SagaStepParts[] {
  const steps = Array.isArray(block.steps) ? block.steps : [];
  return steps.map((step, index) => {
    const part = (key: "action" | "compensation") => {
      const value = isRecord(step) ? step[key] : undefined;
      return isBlock(value) ? { block: value, path: ["steps", index, key] } : null;
    };
    return { id: isRecord(step) ? text(step.id) : "", action: part("action"), compensation: part("compensation") };
  });
}

/** A block that calls something (a handler, a sequence): its summary is a name, shown as code. */
export const isCall = (block: JsonBlock) => block.type === "step" || block.type === "sub_sequence";

/** One line under a block's name: what it calls, loops over or chooses between. */
export function summaryOf(block: JsonBlock): string | null {
  switch (block.type) {
    case "step":
      return text(block.handler) || "no handler";
    case "sub_sequence":
      return text(block.sequence_name) ? `runs ${text(block.sequence_name)}${typeof block.version === "number" ? ` v${block.version}` : ""}` : "no sequence";
    case "parallel":
      return "branches run at once";
    case "race":
      return block.semantics === "first_to_succeed" ? "first to succeed wins" : "first to resolve wins";
    case "router":
      return "first true route wins";
    case "try_catch":
      return Array.isArray(block.finally_block) ? "try, catch, finally" : "try, catch";
    case "loop":
      return text(block.condition) ? `while ${text(block.condition)}` : "no condition";
    case "for_each":
      return text(block.collection) ? `each ${text(block.item_var) || "item"} in ${text(block.collection)}` : "no collection";
    case "a_b_split":
    case "ab_split":
      return "one variant, by weight";
    case "cancellation_scope":
      return "ignores cancel signals";
    case "saga":
      return "undoes in reverse on failure";
    default:
      return null;
  }
}
