// The editor's model: the sequence document exactly as it will be sent (plain JSON, the wire
// shape of A.1), and pure operations on its block tree. Blocks are addressed by the same paths the
// validator reports (`["blocks", 0, "branches", 1, 0]`), block lists by the path of the array.
// No React, no Node: unit-tested on its own (model.test.ts).
import type { BlockType } from "../../../../../../engine/sequence/schema.ts";
import type { Path } from "../../../../../../engine/sequence/walk.ts";
import { armsOf, getAt, isBlock, isRecord, pathKey, sagaSteps, type Arm, type JsonBlock } from "../../../../../_components/sequence-graph/arms.ts";

export type { Path, JsonBlock };
export { getAt, isBlock, pathKey };

export interface SequenceDoc {
  blocks: JsonBlock[];
  [field: string]: unknown;
}

/** Every block type, in palette order. */
export const BLOCK_TYPES: readonly BlockType[] = [
  "step", "parallel", "race", "router", "loop", "for_each", "try_catch", "sub_sequence", "a_b_split", "cancellation_scope", "saga",
];

// ------------------------------------------------------------------ paths

/** A copy of `root` with the value at `path` replaced (copy on write along the path only). */
export function setAt<T>(root: T, path: Path, value: unknown): T {
  if (path.length === 0) return value as T;
  const [key, ...rest] = path;
  if (Array.isArray(root) && typeof key === "number") {
    const copy = [...(root as unknown[])];
    copy[key] = setAt(copy[key], rest, value);
    return copy as T;
  }
  if (isRecord(root) && typeof key === "string") return { ...root, [key]: setAt(root[key], rest, value) } as T;
  throw new Error(`no ${String(key)} at this path`);
}

export const samePath = (a: Path, b: Path) => a.length === b.length && a.every((key, index) => key === b[index]);
const startsWith = (path: Path, prefix: Path) => prefix.length <= path.length && prefix.every((key, index) => key === path[index]);

/** The list a block sits in and its index there. */
export function splitBlockPath(path: Path): { list: Path; index: number } {
  const index = path[path.length - 1];
  if (typeof index !== "number") throw new Error("not a block path");
  return { list: path.slice(0, -1), index };
}

// ------------------------------------------------------------------ the slots of a block

export type Slot = Arm;

/**
 * The block lists directly inside `block`, in execution order (saga steps hold single blocks and
 * are edited as JSON). An absent default/finally is no slot: the inspector's checkbox adds it.
 */
export const slotsOf = (block: JsonBlock): Slot[] => armsOf(block);

/** The blocks of a slot (a `null` default/finally reads as empty). */
export function slotBlocks(block: JsonBlock, slot: Path): JsonBlock[] {
  const value = getAt(block, slot);
  return Array.isArray(value) ? value.filter(isBlock) : [];
}

// ------------------------------------------------------------------ visiting

/** The block trees of a sequence: the main one and the cleanup trees (each its own id space, A.2). */
export const TREES = ["blocks", "on_failure", "on_cancel"] as const;
export type Tree = (typeof TREES)[number];

/** Every block of one tree (the main one by default) with its path, parents first; saga actions and compensations included. */
export function allBlocks(doc: SequenceDoc, tree: Tree = "blocks"): { block: JsonBlock; path: Path }[] {
  const found: { block: JsonBlock; path: Path }[] = [];
  const visitBlock = (block: JsonBlock, path: Path) => {
    found.push({ block, path });
    for (const slot of slotsOf(block)) visit(getAt(block, slot.path), [...path, ...slot.path]);
    for (const step of sagaSteps(block)) {
      for (const part of [step.action, step.compensation]) if (part) visitBlock(part.block, [...path, ...part.path]);
    }
  };
  const visit = (list: unknown, at: Path) => {
    if (!Array.isArray(list)) return;
    list.forEach((block, index) => {
      if (isBlock(block)) visitBlock(block, [...at, index]);
    });
  };
  visit(doc[tree], [tree]);
  return found;
}

/** Every id used anywhere in the document (blocks and saga steps, in every tree). */
function usedIds(doc: SequenceDoc): Set<string> {
  const ids = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (isRecord(value)) {
      if (typeof value.id === "string") ids.add(value.id);
      Object.values(value).forEach(visit);
    }
  };
  for (const tree of TREES) visit(doc[tree]);
  return ids;
}

/** `<type>_<n>`, the first not used in `doc`. */
export function uniqueId(doc: SequenceDoc, type: string): string {
  const ids = usedIds(doc);
  for (let n = 1; ; n++) if (!ids.has(`${type}_${n}`)) return `${type}_${n}`;
}

/**
 * The block a validation problem concerns: the deepest block on its path. `null` for problems
 * about the sequence itself (name, version, an empty `blocks`…).
 */
export function blockPathOf(doc: unknown, problemPath: Path): Path | null {
  let found: Path | null = null;
  for (let length = 2; length <= problemPath.length; length++) {
    const prefix = problemPath.slice(0, length);
    if (typeof prefix[length - 1] === "number" || prefix[length - 1] === "action" || prefix[length - 1] === "compensation") {
      if (isBlock(getAt(doc, prefix))) found = prefix;
    }
  }
  return found;
}

// ------------------------------------------------------------------ new blocks

/** A fresh block of `type`, with the fields the editor shows filled in. */
export function newBlock(type: string, id: string): JsonBlock {
  switch (type) {
    case "step":
      return { type, id, handler: "", params: null };
    case "parallel":
      return { type, id, branches: [[], []] };
    case "race":
      return { type, id, branches: [[], []], semantics: "first_to_resolve" };
    case "loop":
      return { type, id, condition: "", body: [], max_iterations: 1000 };
    case "for_each":
      return { type, id, collection: "", item_var: "item", body: [], max_iterations: 1000 };
    case "router":
      return { type, id, routes: [{ condition: "true", blocks: [] }], default: [] };
    case "try_catch":
      return { type, id, try_block: [], catch_block: [], finally_block: null };
    case "sub_sequence":
      return { type, id, sequence_name: "", input: null };
    case "a_b_split":
      return { type, id, variants: [{ name: "a", weight: 50, blocks: [] }, { name: "b", weight: 50, blocks: [] }] };
    case "cancellation_scope":
      return { type, id, blocks: [] };
    case "saga":
      return { type, id, steps: [] };
    default:
      throw new Error(`unknown block type ${type}`);
  }
}

// ------------------------------------------------------------------ operations

function listAt(doc: SequenceDoc, list: Path): unknown[] {
  const value = getAt(doc, list);
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new Error(`no block list at ${pathKey(list)}`);
  return value;
}

/** Inserts `block` into the list at `list`, before `index` (clamped; the end when omitted). */
export function insertBlock(doc: SequenceDoc, list: Path, block: JsonBlock, index?: number): SequenceDoc {
  const blocks = [...listAt(doc, list)];
  const at = index === undefined ? blocks.length : Math.max(0, Math.min(index, blocks.length));
  blocks.splice(at, 0, block);
  return setAt(doc, list, blocks);
}

/** Adds a new block of `type` after the block at `after` (after its saga, for a saga part), or into the list `into` at `index` (default: the end). */
export function addBlock(doc: SequenceDoc, type: string, where: { after: Path } | { into: Path; index?: number }): { doc: SequenceDoc; path: Path } {
  const block = newBlock(type, uniqueId(doc, type));
  if ("after" in where) {
    const { list, index } = placeAfter(where.after);
    return { doc: insertBlock(doc, list, block, index), path: [...list, index] };
  }
  const length = listAt(doc, where.into).length;
  const index = Math.min(Math.max(where.index ?? length, 0), length);
  return { doc: insertBlock(doc, where.into, block, index), path: [...where.into, index] };
}

/**
 * A saga's action or compensation: a single block, not an item of a list. It cannot be moved or
 * have a block added after it in place (that goes after its saga).
 */
export const isSagaPart = (path: Path) => path[path.length - 1] === "action" || path[path.length - 1] === "compensation";
/** The block that sits in a list for `path`: itself, or for a saga part its saga (the outermost, when nested). */
export const listedPath = (path: Path): Path => (isSagaPart(path) ? listedPath(path.slice(0, -3)) : path);

/** Where a block dropped on the block at `path` goes: right after it (after its saga, for a saga part). */
export function placeAfter(path: Path): { list: Path; index: number } {
  const { list, index } = splitBlockPath(listedPath(path));
  return { list, index: index + 1 };
}

/** Removes a block; a saga's compensation goes alone, a saga's action takes its saga step with it. */
export function removeBlock(doc: SequenceDoc, path: Path): SequenceDoc {
  if (isSagaPart(path)) {
    const [stepIndex, part] = path.slice(-2) as [number, string];
    const saga = path.slice(0, -3);
    if (part === "compensation") return setAt(doc, path.slice(0, -1), withoutKey(getAt(doc, path.slice(0, -1)), "compensation"));
    return removeSagaStep(doc, saga, stepIndex);
  }
  const { list, index } = splitBlockPath(path);
  const blocks = [...listAt(doc, list)];
  blocks.splice(index, 1);
  return setAt(doc, list, blocks);
}

/** Moves a block one place up (-1) or down (+1) in its list; the path it ends at. */
export function moveBlock(doc: SequenceDoc, path: Path, delta: -1 | 1): { doc: SequenceDoc; path: Path } {
  if (isSagaPart(path)) return { doc, path };
  const { list, index } = splitBlockPath(path);
  const blocks = [...listAt(doc, list)];
  const target = index + delta;
  if (target < 0 || target >= blocks.length) return { doc, path };
  [blocks[index], blocks[target]] = [blocks[target], blocks[index]];
  return { doc: setAt(doc, list, blocks), path: [...list, target] };
}

/**
 * Moves the block at `from` into the list `to`, before `index` (as counted before the move).
 * A block cannot move into itself or its descendants: the document comes back unchanged.
 */
export function moveBlockTo(doc: SequenceDoc, from: Path, to: Path, index: number): { doc: SequenceDoc; path: Path } {
  if (isSagaPart(from) || startsWith(to, from)) return { doc, path: from };
  const block = getAt(doc, from);
  if (!isBlock(block)) return { doc, path: from };
  const source = splitBlockPath(from);
  let target = to;
  let at = index;
  // Removing the block shifts what follows it in its list, including lists nested further on.
  if (startsWith(to, source.list) && to.length > source.list.length) {
    const step = to[source.list.length];
    if (typeof step === "number" && step > source.index) target = [...to.slice(0, source.list.length), step - 1, ...to.slice(source.list.length + 1)];
  }
  if (samePath(to, source.list) && index > source.index) at = index - 1;
  const removed = removeBlock(doc, from);
  const length = listAt(removed, target).length;
  const clamped = Math.max(0, Math.min(at, length));
  return { doc: insertBlock(removed, target, block, clamped), path: [...target, clamped] };
}

/** Moves the block at `from` to right after the block at `onto` (dropped on it); same rules as moveBlockTo. */
export function moveAfter(doc: SequenceDoc, from: Path, onto: Path): { doc: SequenceDoc; path: Path } {
  if (samePath(from, onto)) return { doc, path: from };
  const { list, index } = placeAfter(onto);
  return moveBlockTo(doc, from, list, index);
}

/**
 * Nests a block into the composite just above it (at the end of its last slot); returns the
 * document unchanged when the previous sibling is not a composite with a slot.
 */
export function indentBlock(doc: SequenceDoc, path: Path): { doc: SequenceDoc; path: Path } {
  if (isSagaPart(path)) return { doc, path };
  const { list, index } = splitBlockPath(path);
  const previous = index > 0 ? getAt(doc, [...list, index - 1]) : undefined;
  if (!isBlock(previous)) return { doc, path };
  const slots = slotsOf(previous);
  const slot = slots[0];
  if (!slot) return { doc, path };
  const into = [...list, index - 1, ...slot.path];
  return moveBlockTo(doc, path, into, slotBlocks(previous, slot.path).length);
}

/** Moves a nested block out, to just after the composite that holds it. */
export function outdentBlock(doc: SequenceDoc, path: Path): { doc: SequenceDoc; path: Path } {
  if (isSagaPart(path)) return { doc, path };
  const parent = parentBlockPath(doc, path);
  if (!parent) return { doc, path };
  const { list, index } = splitBlockPath(parent);
  return moveBlockTo(doc, path, list, index + 1);
}

/** The path of the composite holding the block at `path`, null at the top level. */
export function parentBlockPath(doc: SequenceDoc, path: Path): Path | null {
  for (let length = path.length - 1; length >= 2; length--) {
    const prefix = path.slice(0, length);
    if (typeof prefix[length - 1] === "number" && isBlock(getAt(doc, prefix))) return prefix;
  }
  return null;
}

/** Sets fields of the block at `path`; `undefined` removes a field. */
export function updateBlock(doc: SequenceDoc, path: Path, fields: Record<string, unknown>): SequenceDoc {
  const block = getAt(doc, path);
  if (!isBlock(block)) throw new Error("no block at this path");
  const next: Record<string, unknown> = { ...block };
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) delete next[key];
    else next[key] = value;
  }
  return setAt(doc, path, next);
}

/** Sets (or with `undefined` removes) a top-level field of the sequence. */
export function updateSequence(doc: SequenceDoc, fields: Record<string, unknown>): SequenceDoc {
  const next: SequenceDoc = { ...doc };
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** Adds a branch / route / variant to a parallel, race, router or a_b_split. */
export function addBranch(doc: SequenceDoc, path: Path): SequenceDoc {
  const block = getAt(doc, path);
  if (!isBlock(block)) return doc;
  const list = (key: string) => (Array.isArray(block[key]) ? (block[key] as unknown[]) : []);
  switch (block.type) {
    case "parallel":
    case "race":
      return updateBlock(doc, path, { branches: [...list("branches"), []] });
    case "router":
      return updateBlock(doc, path, { routes: [...list("routes"), { condition: "", blocks: [] }] });
    case "a_b_split": {
      const variants = list("variants");
      return updateBlock(doc, path, { variants: [...variants, { name: `v${variants.length + 1}`, weight: 0, blocks: [] }] });
    }
    default:
      return doc;
  }
}

/** Removes branch / route / variant `index` (with its blocks). */
export function removeBranch(doc: SequenceDoc, path: Path, index: number): SequenceDoc {
  const block = getAt(doc, path);
  if (!isBlock(block)) return doc;
  const key = block.type === "router" ? "routes" : block.type === "a_b_split" ? "variants" : "branches";
  const list = Array.isArray(block[key]) ? [...(block[key] as unknown[])] : [];
  list.splice(index, 1);
  return updateBlock(doc, path, { [key]: list });
}

// ------------------------------------------------------------------ saga steps

const withoutKey = (value: unknown, key: string) => {
  const { [key]: _, ...rest } = isRecord(value) ? value : {};
  return rest;
};

function sagaStepList(doc: SequenceDoc, saga: Path): unknown[] {
  const steps = getAt(doc, [...saga, "steps"]);
  return Array.isArray(steps) ? steps : [];
}

/** Adds a step to the saga at `saga`, its action a new block of `type` (a step by default). */
export function addSagaStep(doc: SequenceDoc, saga: Path, type = "step"): SequenceDoc {
  const step = { id: uniqueId(doc, "saga_step"), action: newBlock(type, uniqueId(doc, type)) };
  return setAt(doc, [...saga, "steps"], [...sagaStepList(doc, saga), step]);
}

export function removeSagaStep(doc: SequenceDoc, saga: Path, index: number): SequenceDoc {
  return setAt(doc, [...saga, "steps"], sagaStepList(doc, saga).filter((_, at) => at !== index));
}

/** Renames saga step `index` (its own id, not its action's). */
export function setSagaStepId(doc: SequenceDoc, saga: Path, index: number, id: string): SequenceDoc {
  return setAt(doc, [...saga, "steps", index, "id"], id);
}

/**
 * Puts a new block of `type` as saga step `index`'s action or compensation (replacing what was
 * there, its id kept), or with `type` null removes the compensation.
 */
export function setSagaPart(doc: SequenceDoc, saga: Path, index: number, part: "action" | "compensation", type: string | null): SequenceDoc {
  const stepPath = [...saga, "steps", index];
  const step = getAt(doc, stepPath);
  if (!isRecord(step)) return doc;
  if (type === null) return part === "compensation" ? setAt(doc, stepPath, withoutKey(step, "compensation")) : doc;
  const current = step[part];
  const id = isBlock(current) && current.id ? current.id : uniqueId(doc, type);
  return setAt(doc, [...stepPath, part], newBlock(type, id));
}

// ------------------------------------------------------------------ history

export interface History {
  past: SequenceDoc[];
  present: SequenceDoc;
  future: SequenceDoc[];
}

export const HISTORY_LIMIT = 200;

export const startHistory = (doc: SequenceDoc): History => ({ past: [], present: doc, future: [] });

/** Records `doc` as the new present; a change that changes nothing is not recorded. */
export function commit(history: History, doc: SequenceDoc): History {
  if (doc === history.present) return history;
  return { past: [...history.past, history.present].slice(-HISTORY_LIMIT), present: doc, future: [] };
}

export function undo(history: History): History {
  const previous = history.past[history.past.length - 1];
  if (!previous) return history;
  return { past: history.past.slice(0, -1), present: previous, future: [history.present, ...history.future] };
}

export function redo(history: History): History {
  const [next, ...future] = history.future;
  if (!next) return history;
  return { past: [...history.past, history.present], present: next, future };
}
