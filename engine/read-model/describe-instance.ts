// The engine's read model of an instance, for the web (tRPC) and REST alike: its execution tree
// and the human-input gates waiting for an answer, read off the stored definition and cursor the
// way the evaluator reads them. Callers outside the engine read instance structure here, never
// the evaluator's internals (engine/exec).
import { DEFAULT_CHOICES, HUMAN_INPUT_SIGNAL, inputGate } from "../exec/tree/blocks/human-input.ts";
import { readTreeCursor } from "../exec/tree/cursor.ts";
import { executionNodes, type ExecutionNode, type ExecutionNodeState } from "../exec/tree/nodes.ts";
import type { AttemptRecord, StepError } from "../exec/tree/state.ts";

import { Sequence, type Block, type HumanChoice } from "../sequence/schema.ts";
import { walkBlocks } from "../sequence/walk.ts";
import { isObject, isTerminal, type InstanceState } from "../model.ts";

export { HUMAN_INPUT_SIGNAL };
export type { AttemptRecord, ExecutionNode, ExecutionNodeState, HumanChoice, StepError };

/** What the cursor knows of one step's runs: its attempts (each with its error) and how it ended. */
export interface StepRun {
  attempts: AttemptRecord[];
  /** The error it failed with for good (also when a try_catch caught it). */
  failure: StepError | null;
  /** The attempt it is on (retries so far). */
  attempt: number;
  /** A pause abandoned it while it ran: it runs again after resume. */
  pausedWhileRunning: boolean;
}

/** The custom signal that answers the gate of step `blockId`. */
export const humanInputSignal = (blockId: string) => `${HUMAN_INPUT_SIGNAL}${blockId}`;

/** A human-input gate waiting for its answer. */
export interface PendingInput {
  blockId: string;
  handler: string;
  prompt: string;
  choices: HumanChoice[];
  allowComment: boolean;
  /** When the gate escalates (or fails the step) unanswered; null without a timeout. */
  timesOutAt: string | null;
  /** Since when the step has waited (its node's start); null when the cursor does not say. */
  waitingSince: string | null;
  timeoutMs: number | null;
  escalationHandler: string | null;
  /** Where the answer is stored in context.data (the block id when null). */
  storeAs: string | null;
}

export interface InstanceDescription {
  /**
   * False when the definition has no readable blocks (the sequence is missing, or was stored in a
   * form the schema no longer reads): then there is no tree and nothing is pending.
   */
  hasTree: boolean;
  /** One node per block of the main tree (wire-format E.13 `ExecutionNode`), depth-first, parents first. */
  nodes: ExecutionNode[];
  /** Gates the evaluator has reached that have neither an answer nor an escalation yet; none once the instance is terminal. */
  pendingInputs: PendingInput[];
  /** By block id, for the steps the cursor has a record of. */
  stepRuns: Record<string, StepRun>;
}

/** The instance's own fields the description reads. */
export interface DescribedInstance {
  id: string;
  /** F.1; `waiting` makes its active blocks read as waiting, a terminal state leaves nothing pending. */
  state: InstanceState;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The instance's structure from its sequence's stored `definition` (null when the sequence is
 * missing) and its stored `cursor`. Only the blocks are read, so a definition stored before it was
 * normalised still shows its tree; a hand-edited or corrupt cursor reads as not started.
 */
export function describeInstance(definition: unknown, cursor: unknown, instance: DescribedInstance): InstanceDescription {
  const blocks = blocksOf(definition);
  if (!blocks) return { hasTree: false, nodes: [], pendingInputs: [], stepRuns: {} };
  return {
    hasTree: true,
    nodes: executionNodes({ blocks }, cursor, instance),
    pendingInputs: pendingInputs(blocks, cursor, instance.state),
    stepRuns: stepRuns(blocks, cursor),
  };
}

function stepRuns(blocks: readonly Block[], cursor: unknown): Record<string, StepRun> {
  const tree = readTreeCursor(cursor, { blocks } as Sequence);
  const nodes: Record<string, unknown> = isObject(tree.nodes) ? tree.nodes : {};
  const runs: Record<string, StepRun> = {};
  walkBlocks(Array.isArray(tree.blocks) ? tree.blocks : blocks, (block) => {
    if (block.type !== "step" && block.type !== "sub_sequence") return;
    const node = Object.hasOwn(nodes, block.id) ? nodes[block.id] : undefined;
    if (!isObject(node)) return;
    runs[block.id] = {
      // Written by this engine only; a hand-edited cursor's odd entries are dropped, not shown.
      attempts: Array.isArray(node.attempts) ? node.attempts.filter((a): a is AttemptRecord => isObject(a) && typeof a.startedAt === "string") : [],
      failure: isObject(node.failure) && typeof node.failure.message === "string" ? (node.failure as unknown as StepError) : null,
      attempt: typeof node.attempt === "number" ? node.attempt : 0,
      pausedWhileRunning: node.pausedWhileRunning === true,
    };
  });
  return runs;
}

function blocksOf(definition: unknown): Block[] | null {
  const parsed = Sequence.shape.blocks.safeParse(isObject(definition) ? definition.blocks : undefined);
  return parsed.success ? parsed.data : null;
}

/** Steps with `wait_for_input` (or `human_review` steps) waiting, read off the cursor the way blocks/step.ts decides to wait. */
function pendingInputs(blocks: readonly Block[], cursor: unknown, state: InstanceState): PendingInput[] {
  if (isTerminal(state)) return [];
  const tree = readTreeCursor(cursor, { blocks } as Sequence);
  const nodes: Record<string, unknown> = isObject(tree.nodes) ? tree.nodes : {};
  const pending: PendingInput[] = [];
  walkBlocks(Array.isArray(tree.blocks) ? tree.blocks : blocks, (block) => {
    if (block.type !== "step") return;
    const gate = inputGate(block);
    const node = Object.hasOwn(nodes, block.id) ? nodes[block.id] : undefined;
    if (!gate || !isObject(node) || node.status !== "active" || node.taskId || node.input !== undefined || node.escalated) return;
    const reachedAt = typeof node.reachedAt === "string" ? Date.parse(node.reachedAt) : NaN;
    pending.push({
      blockId: block.id,
      handler: block.handler,
      prompt: gate.prompt,
      choices: gate.choices ?? [...DEFAULT_CHOICES],
      allowComment: gate.allow_comment,
      timesOutAt: gate.timeout === undefined || Number.isNaN(reachedAt) ? null : new Date(reachedAt + gate.timeout).toISOString(),
      waitingSince: Number.isNaN(reachedAt) ? null : new Date(reachedAt).toISOString(),
      timeoutMs: gate.timeout ?? null,
      escalationHandler: gate.escalation_handler ?? null,
      storeAs: gate.store_as ?? null,
    });
  });
  return pending;
}
