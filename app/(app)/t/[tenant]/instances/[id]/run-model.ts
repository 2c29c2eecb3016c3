// What the run view derives from one `instances.get` answer, computed once per answer (useMemo in
// the page): the tree's shape, each block's latest output, each step's times and liveness, and the
// failures worth saying at the top. Every lookup below is by map, so an instance of hundreds of
// nodes costs one pass, never a pass per node.
import { armLabelOf, isBlock, isRecord, type JsonBlock } from "../../../../../_components/sequence-graph/arms";
import type { DetailNode, InstanceDetailData } from "./detail-types";
import { isRealOutput } from "./run-format";

type Output = InstanceDetailData["outputs"][number];

/** A step's run in time: from its first attempt's start to its finish (null while it runs). */
export interface StepTiming {
  start: number | null;
  end: number | null;
  /** An attempt is open and the instance is not finished: the step is running (or waiting) now. */
  live: boolean;
  /** When the open attempt started (for "running for …"). */
  liveSince: number | null;
}

/** A failed step and, when a try_catch caught it, the try_catch (the run went on). */
export interface StepFailure {
  node: DetailNode;
  caughtBy: DetailNode | null;
}

export interface RunModel {
  byId: Map<string, DetailNode>;
  children: Map<string | null, DetailNode[]>;
  depth: Map<string, number>;
  /** The latest real output (not a marker row) of each block among the outputs the page got. */
  latestOutput: Map<string, Output>;
  timing: Map<string, StepTiming>;
  /** Leaves (steps, sub_sequences) in tree order. */
  leaves: DetailNode[];
  failures: StepFailure[];
  /** Something has started: an attempt, a step's start or an output. */
  started: boolean;
  /** Some step runs now: the live clock ticks only then. */
  live: boolean;
  /** The latest time the data knows of: "now" when the page has no clock (server render). */
  knownEnd: number;
  /** Which arm of its parent each node runs in, in the editor's words (branch 1, try, default). */
  armLabel: Map<string, string>;
}

/** The definition's blocks by id, nested ones included. */
function blocksById(blocks: unknown, found = new Map<string, JsonBlock>()): Map<string, JsonBlock> {
  if (Array.isArray(blocks)) for (const item of blocks) blocksById(item, found);
  else if (isRecord(blocks)) {
    if (isBlock(blocks) && typeof blocks.id === "string") found.set(blocks.id, blocks);
    for (const value of Object.values(blocks)) if (typeof value === "object") blocksById(value, found);
  }
  return found;
}

const LEAF_TYPES = new Set(["step", "sub_sequence"]);
const TERMINAL = new Set(["completed", "failed", "cancelled"]);
const ms = (iso: string | null | undefined) => (iso ? Date.parse(iso) : NaN);

export const isLeaf = (node: DetailNode) => LEAF_TYPES.has(node.blockType);

function timingOf(node: DetailNode, instanceFinished: boolean): StepTiming {
  const first = node.attempts[0];
  const last = node.attempts.at(-1);
  const start = ms(first?.startedAt ?? node.startedAt);
  const open = last !== undefined && last.finishedAt === null;
  const live = !instanceFinished && (open || node.state === "running" || node.state === "waiting");
  const finished = ms(node.completedAt ?? (open ? null : last?.finishedAt));
  return {
    start: Number.isNaN(start) ? null : start,
    end: live || Number.isNaN(finished) ? null : finished,
    live,
    liveSince: live ? (open ? ms(last.startedAt) : Number.isNaN(start) ? null : start) : null,
  };
}

/** The try_catch whose try arm holds `node`, if that try_catch did not fail itself (so it caught it). */
function catcherOf(node: DetailNode, byId: Map<string, DetailNode>): DetailNode | null {
  let child = node;
  for (let parent = child.parentId ? byId.get(child.parentId) : undefined; parent; parent = parent.parentId ? byId.get(parent.parentId) : undefined) {
    if (parent.blockType === "try_catch" && child.branchIndex === 0) return parent.state === "failed" ? null : parent;
    child = parent;
  }
  return null;
}

export function runModel(data: InstanceDetailData): RunModel {
  const instanceFinished = TERMINAL.has(data.instance.state);
  const byId = new Map<string, DetailNode>();
  const children = new Map<string | null, DetailNode[]>();
  const depth = new Map<string, number>();
  for (const node of data.nodes) {
    byId.set(node.id, node);
    // Parents come before their children (depth-first), so a parent's depth is known here.
    depth.set(node.id, node.parentId === null ? 0 : (depth.get(node.parentId) ?? 0) + 1);
    const siblings = children.get(node.parentId);
    if (siblings) siblings.push(node);
    else children.set(node.parentId, [node]);
  }

  const latestOutput = new Map<string, Output>();
  for (const output of data.outputs) {
    if (!isRealOutput(output.outputRef)) continue;
    const seen = latestOutput.get(output.blockId);
    if (!seen || seen.createdAt <= output.createdAt) latestOutput.set(output.blockId, output);
  }

  const timing = new Map<string, StepTiming>();
  const leaves: DetailNode[] = [];
  const failures: StepFailure[] = [];
  let knownEnd = ms(data.instance.updatedAt);
  for (const node of data.nodes) {
    if (!isLeaf(node)) continue;
    leaves.push(node);
    const t = timingOf(node, instanceFinished);
    timing.set(node.id, t);
    for (const a of node.attempts) knownEnd = Math.max(knownEnd, ms(a.startedAt), ms(a.finishedAt) || 0);
    if (node.state === "failed") failures.push({ node, caughtBy: catcherOf(node, byId) });
  }
  const started = data.outputs.length > 0 || leaves.some((leaf) => timing.get(leaf.id)!.start !== null);
  const live = leaves.some((leaf) => timing.get(leaf.id)!.live);
  const definitions = blocksById(data.blocks);
  const armLabel = new Map<string, string>();
  for (const node of data.nodes) {
    const parent = node.parentId ? byId.get(node.parentId) : undefined;
    const definition = parent && definitions.get(parent.blockId);
    const label = definition ? armLabelOf(definition, node.branchIndex) : null;
    if (label) armLabel.set(node.id, label);
  }
  return { byId, children, depth, latestOutput, timing, leaves, failures, started, live, knownEnd, armLabel };
}
