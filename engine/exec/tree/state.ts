// The one state model of the block-tree evaluator. An instance's cursor holds a NodeState per
// block id (ids are unique across a sequence's tree, A.2); a block with no entry has not started.
// Every block module reads and writes only its own node and asks the evaluator about children.
import type { Block, StepBlock, SubSequenceBlock } from "../../sequence/schema.ts";
import type { Scope } from "../../sequence/paths.ts";
import { isObject } from "../../model.ts";
import type { OutputRow } from "../../storage/index.ts";

export type Settled = "completed" | "failed" | "cancelled";

/** Why a step attempt failed, kept on its node and attempt even when a retry, a catch or a race swallows it. */
export interface StepError {
  message: string;
  retryable: boolean;
  /** What kind of failure: handler (its own answer), http_status, timeout, handler_error, output, template, deadline, worker, ... */
  code?: string;
  /** The handler that answered (a fallback or escalation handler, maybe). */
  handler?: string;
  /** http_request and llm_call: the vendor's status code. */
  httpStatus?: number;
}

/** One run of a step: when it started and ended, who ran it (a worker task's worker) and how it failed. */
export interface AttemptRecord {
  attempt: number;
  startedAt: string;
  finishedAt?: string;
  workerId?: string;
  error?: StepError;
  /** A pause or cancel stopped it while it ran (a paused one runs again, as a new record). */
  interrupted?: "paused" | "cancelled";
}

/** Attempts a node keeps (the latest ones): a step retried without end must not grow its cursor without end. */
export const KEPT_ATTEMPTS = 20;

export interface NodeState {
  /** Absent: not started (or reset for a new loop iteration). */
  status?: "active" | Settled | "skipped";
  /** Set by a cancel signal on an unshielded composite: it ends `cancelled` once drained. */
  cancelRequested?: boolean;
  // step
  attempt?: number;
  reachedAt?: string;
  startedAt?: string;
  /** When the step completed or failed for good. */
  finishedAt?: string;
  /** Its runs, oldest first (at most KEPT_ATTEMPTS). */
  attempts?: AttemptRecord[];
  /** Not due before this time (delay, send window, rate limit, retry backoff). */
  notBefore?: string;
  deferReason?: string;
  /** A pause abandoned this step while it ran: it runs again, the same attempt, after resume. */
  pausedWhileRunning?: boolean;
  /** The worker task this step's current attempt was handed to. */
  taskId?: string;
  /** The handler that task runs (the fallback, when the breaker chose it). */
  handler?: string;
  /** sub_sequence: the child instance it waits for. */
  childId?: string;
  /** Human input (wait_for_input, human_review): the answer, once the signal brought it. */
  input?: unknown;
  /** The input gate timed out and the step runs its escalation handler instead. */
  escalated?: boolean;
  failure?: StepError;
  // loop, for_each
  iteration?: number;
  inIteration?: boolean;
  items?: unknown[];
  // router (-1 = default, null = nothing matched), a_b_split
  route?: number | null;
  variant?: number;
  // try_catch
  phase?: "try" | "catch" | "finally";
  tryFailed?: boolean;
  catchFailed?: boolean;
  // saga
  failedStep?: number;
  compensating?: number;
}

export interface TreeCursor {
  v: 2;
  nodes: Record<string, NodeState>;
  /** This instance's own top-level blocks, once a `self_modify` step has added some. */
  blocks?: Block[];
  /**
   * Set once the main tree ended failed or cancelled and its cleanup tree (on_failure /
   * on_cancel) runs: the status the instance will end with, and the cleanup tree's own nodes.
   */
  cleanup?: { status: "failed" | "cancelled"; nodes: Record<string, NodeState> };
}

/** What a block (or a body of blocks) amounts to right now. */
export type Progress =
  | { kind: "settled"; status: Settled }
  | {
      kind: "active";
      /** Leaves that may run now. */
      runnable: Leaf[];
      /** Waiting for something outside the engine (a worker, a child instance). */
      waiting: boolean;
      /** The earliest time something blocked on time becomes due, in ms since the epoch. */
      until: number | null;
    };

/** Blocks the runner executes: a step runs a handler, a sub_sequence starts a child instance. */
export type Leaf = StepBlock | SubSequenceBlock;

export const SETTLED = new Set(["completed", "failed", "cancelled", "skipped"]);

export function settled(status: Settled): Progress {
  return { kind: "settled", status };
}

export function active(parts: Partial<Omit<Extract<Progress, { kind: "active" }>, "kind">> = {}): Progress {
  return { kind: "active", runnable: parts.runnable ?? [], waiting: parts.waiting ?? false, until: parts.until ?? null };
}

/** Several children active at once (parallel branches): everything any of them can do. */
export function merge(progress: Progress[]): Progress {
  const open = progress.filter((p): p is Extract<Progress, { kind: "active" }> => p.kind === "active");
  const untils = open.map((p) => p.until).filter((u): u is number => u !== null);
  return active({
    runnable: open.flatMap((p) => p.runnable),
    waiting: open.some((p) => p.waiting),
    until: untils.length ? Math.min(...untils) : null,
  });
}

/** How settled children combine: a failure outweighs a cancellation, which outweighs success. */
export function worst(statuses: Settled[]): Settled {
  if (statuses.includes("failed")) return "failed";
  if (statuses.includes("cancelled")) return "cancelled";
  return "completed";
}

/** Everything a pass of the evaluator reads and changes. */
export interface Env {
  cursor: TreeCursor;
  /** The instance context; blocks may change `context.data` (for_each variables, `_error`). */
  context: { data: unknown; config: unknown; [section: string]: unknown };
  /** Latest output per block id, for templates and conditions. */
  outputs: Record<string, unknown>;
  instanceId: string;
  now: Date;
  /** Output rows blocks add (marker rows), written with the next commit. */
  newOutputs: OutputRow[];
  /** Blocks whose worker tasks must go (race losers, loop resets). */
  abandoned: string[];
  /** Child instances of cancelled sub_sequence blocks: each is sent a cancel signal. */
  cancelledChildren: string[];
  /** The keys of context.data blocks changed, written with the next commit (see DataPatch). */
  dataPatch: DataPatch;
}

/** Changes to top-level keys of context.data, applied key by key on commit. */
export interface DataPatch {
  set: Record<string, unknown>;
  unset: string[];
}

export function node(env: Env, id: string): NodeState {
  return (env.cursor.nodes[id] ??= {});
}

export function scopeOf(env: Env): Scope {
  return { context: env.context, outputs: env.outputs, instanceId: env.instanceId, runtime: {}, state: {} };
}

/** The blocks directly inside `block`, in every arm (for resets and cancellation walks). */
export function childrenOf(block: Block): Block[] {
  switch (block.type) {
    case "step":
      return [];
    case "parallel":
    case "race":
      return block.branches.flat();
    case "loop":
    case "for_each":
      return block.body;
    case "router":
      return [...block.routes.flatMap((r) => r.blocks), ...(block.default ?? [])];
    case "try_catch":
      return [...block.try_block, ...block.catch_block, ...(block.finally_block ?? [])];
    case "a_b_split":
      return block.variants.flatMap((v) => v.blocks);
    case "cancellation_scope":
      return block.blocks;
    case "saga":
      return block.steps.flatMap((s) => (s.compensation ? [s.action, s.compensation] : [s.action]));
    case "sub_sequence":
      return [];
  }
}

/** Forgets `blocks` and everything under them (a loop's next iteration starts them afresh). */
export function reset(env: Env, blocks: readonly Block[]): void {
  for (const block of blocks) {
    if (env.cursor.nodes[block.id]?.taskId) env.abandoned.push(block.id);
    delete env.cursor.nodes[block.id];
    reset(env, childrenOf(block));
  }
}

/** Writes a top-level key of context.data (an object is made when it is not one). */
export function setData(env: Pick<Env, "context" | "dataPatch">, key: string, value: unknown): void {
  const data = isObject(env.context.data) ? { ...env.context.data } : {};
  const { dataPatch } = env;
  dataPatch.unset = dataPatch.unset.filter((k) => k !== key);
  if (value === undefined) {
    delete data[key];
    delete dataPatch.set[key];
    dataPatch.unset.push(key);
  } else {
    data[key] = value;
    dataPatch.set[key] = value;
  }
  env.context.data = data;
}


/**
 * A retried instance (POST /retry, wire-format E.14) comes back with its failed blocks: forget
 * their failures so they run again, keeping everything that completed and loop counters.
 */
export function resetFailures(cursor: TreeCursor, blocks: readonly Block[]): void {
  for (const block of blocks) {
    const state = cursor.nodes[block.id];
    if (state?.status !== "failed") continue;
    if (block.type === "step") delete cursor.nodes[block.id];
    else if (block.type === "loop" || block.type === "for_each") {
      delete state.status;
      delete state.failure;
    } else delete cursor.nodes[block.id];
    resetFailures(cursor, childrenOf(block));
  }
}
