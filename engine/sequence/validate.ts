// Create-time validation of a sequence: the shape check of schema.ts, then the rules of
// wire-format A.14. The wire answers the two differently: a body without the shape of a sequence
// is `unprocessable` (422, plain text), a well-shaped one that breaks a rule is `invalid_argument`
// (400). Every rule message is written here; block-level ones read "block `<id>`: <problem>".
// No Node-only imports: the editor runs this in the browser.
import type { z } from "zod";
import { AppError } from "../errors.ts";
import { jsonSchemaProblem } from "./json-schema.ts";
import { Block, Sequence, type StepBlock } from "./schema.ts";
import { walkBlocks, type Path } from "./walk.ts";

export const LIMITS = {
  /** Enclosing blocks above a block; top-level blocks are at depth 0 (as in Orch8). */
  depth: 64,
  /** Blocks in all trees of a sequence together, cleanup trees included. */
  blocks: 5000,
  branches: 256,
  iterations: 100_000,
  /**
   * Nesting of the raw JSON, checked before anything walks it so no recursive code (the zod
   * parse, templates) can overflow the stack. 64 block levels need at most ~260.
   */
  jsonDepth: 512,
} as const;

/** Handlers run in-process; any other name becomes an external worker task (C.11). */
export const BUILTIN_HANDLERS: ReadonlySet<string> = new Set([
  "noop", "log", "sleep", "fail", "http_request", "llm_call", "self_modify", "emit_event", "send_signal",
  "query_instance", "human_review",
]);

export interface Problem {
  code: "unprocessable" | "invalid_argument";
  message: string;
  path: Path;
}

export interface SequenceCheck {
  /** Present when the input has the shape of a sequence (there may still be rule problems). */
  sequence?: Sequence;
  /** Empty when the sequence may be stored. Shape problems come alone, before any rule runs. */
  problems: Problem[];
  warnings: string[];
}

/** Every problem of `json` as a sequence definition, for callers that show them all (the editor). */
export function checkSequence(json: unknown): SequenceCheck {
  const shaped = shape(Sequence, json, []);
  if (!shaped.value) return { problems: shaped.problems, warnings: [] };
  const sequence = shaped.value;
  const report: Report = { problems: [], warnings: [] };
  if (sequence.blocks.length === 0) ruleProblem(report, ["blocks"], "sequence must have at least one block");
  // The cleanup trees run apart from the main tree: ids may repeat across trees, limits still count.
  let count = checkTree(sequence.blocks, ["blocks"], report, { ids: new Set() });
  if (sequence.on_failure) count += checkTree(sequence.on_failure, ["on_failure"], report, { ids: new Set() });
  if (sequence.on_cancel) count += checkTree(sequence.on_cancel, ["on_cancel"], report, { ids: new Set() });
  if (count > LIMITS.blocks) {
    ruleProblem(report, ["blocks"], `sequence has ${count} blocks, exceeding the maximum of ${LIMITS.blocks}`);
  }
  const schemaProblem = sequence.input_schema === undefined ? undefined : jsonSchemaProblem(sequence.input_schema);
  if (schemaProblem) ruleProblem(report, ["input_schema"], `input_schema is not a valid JSON Schema: ${schemaProblem}`);
  return { sequence, ...report };
}

/**
 * The body of `POST /sequences` (and its tRPC twin) as a sequence in canonical form, plus the
 * warnings to return with the 201. Throws the first problem as an AppError carrying its path.
 */
export function parseSequence(json: unknown): { sequence: Sequence; warnings: string[] } {
  const { sequence, problems, warnings } = checkSequence(json);
  return { sequence: orThrow(sequence, problems), warnings };
}

export interface BlocksContext {
  /** Ids already used in the tree the blocks join; they may not be reused. */
  ids?: Iterable<string>;
  /** Depth the blocks will sit at in that tree (0 = top level). */
  depth?: number;
  /** Blocks already in the sequence, toward the total limit. */
  blockCount?: number;
  /** Where the blocks come from, prefixed to problem paths. */
  path?: Path;
}

/**
 * Blocks added to a tree after creation (e.g. by `self_modify`), held to the same shape and rules
 * as a sequence's own, relative to where they are inserted. Throws the first problem.
 */
export function validateBlocks(json: unknown, context: BlocksContext = {}): { blocks: Block[]; warnings: string[] } {
  const path = context.path ?? [];
  const shaped = shape(Block.array(), json, path);
  const report: Report = { problems: shaped.problems, warnings: [] };
  if (shaped.value) {
    const count = checkTree(shaped.value, path, report, { ids: new Set(context.ids), depth: context.depth });
    const total = count + (context.blockCount ?? 0);
    if (total > LIMITS.blocks) ruleProblem(report, path, `sequence has ${total} blocks, exceeding the maximum of ${LIMITS.blocks}`);
  }
  return { blocks: orThrow(shaped.value, report.problems), warnings: report.warnings };
}

interface Report {
  problems: Problem[];
  warnings: string[];
}

function orThrow<T>(value: T | undefined, problems: Problem[]): T {
  const [first] = problems;
  if (first) throw new AppError(first.code, first.message, first.path);
  if (value === undefined) throw new AppError("internal", "validation produced no value");
  return value;
}

function ruleProblem(report: Report, path: Path, message: string) {
  report.problems.push({ code: "invalid_argument", message, path });
}

/** Parses `json` with `schema`; what does not fit is `unprocessable`, reported with its path. */
function shape<T>(schema: z.ZodType<T>, json: unknown, path: Path): { value?: T; problems: Problem[] } {
  if (isDeeperThan(json, LIMITS.jsonDepth)) {
    const message = `JSON nesting exceeds the maximum depth of ${LIMITS.jsonDepth}`;
    return { problems: [{ code: "invalid_argument", message, path }] };
  }
  const result = schema.safeParse(json);
  if (result.success) return { value: result.data, problems: [] };
  return {
    problems: result.error.issues.map((issue) => {
      const at = [...path, ...issue.path.map((key) => (typeof key === "symbol" ? String(key) : key))];
      return { code: "unprocessable", message: at.length ? `${formatPath(at)}: ${issue.message}` : issue.message, path: at };
    }),
  };
}

/** `["blocks", 0, "body", 2, "handler"]` → `blocks[0].body[2].handler` */
function formatPath(path: Path): string {
  return path.map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? key : `.${key}`)).join("");
}

/** True when `json` nests deeper than `limit`. Iterative, so the check itself cannot overflow. */
export function isDeeperThan(json: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[json, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== "object" || node === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}

/** Checks one tree (ids unique within `ids`), adds its problems and warnings; returns its block count. */
function checkTree(blocks: readonly Block[], path: Path, report: Report, tree: { ids: Set<string>; depth?: number }): number {
  let count = 0;
  const claim = (id: string, at: Path) => {
    if (id === "") ruleProblem(report, at, "block `(empty)`: block id must not be empty");
    else if (tree.ids.has(id)) ruleProblem(report, at, `duplicate block id: ${id}`);
    else tree.ids.add(id);
  };
  walkBlocks(
    blocks,
    (block, depth, at) => {
      count += 1;
      const fail = (message: string, ...field: Path) =>
        ruleProblem(report, [...at, ...field], `block \`${block.id || "(empty)"}\`: ${message}`);
      if (depth > LIMITS.depth) {
        fail(`block nesting exceeds the maximum depth of ${LIMITS.depth}`);
        return false;
      }
      claim(block.id, [...at, "id"]);
      // Saga step ids are not blocks but share the id space (A.13).
      if (block.type === "saga") block.steps.forEach((step, index) => claim(step.id, [...at, "steps", index, "id"]));
      blockRules(block, fail);
      if (block.type === "step" && block.handler !== "" && !BUILTIN_HANDLERS.has(block.handler)) {
        report.warnings.push(`block \`${block.id}\`: handler "${block.handler}" is not built in; it will run as an external worker task`);
      }
    },
    tree.depth,
    path,
  );
  return count;
}

type Fail = (message: string, ...field: Path) => void;

const isBlank = (text: string) => text.trim() === "";

/** The A.14 rules of one block, children excluded. */
function blockRules(block: Block, fail: Fail): void {
  switch (block.type) {
    case "step":
      return stepRules(block, fail);
    case "parallel":
    case "race":
      if (block.branches.length === 0) fail(`${block.type} must have at least one branch`, "branches");
      if (block.branches.length > LIMITS.branches) fail(`${block.type} must not have more than ${LIMITS.branches} branches`, "branches");
      return;
    case "loop":
      if (isBlank(block.condition)) fail("loop condition must not be empty", "condition");
      if (block.body.length === 0) fail("loop body must not be empty", "body");
      return iterationRules(block, fail);
    case "for_each":
      if (isBlank(block.collection)) fail("for_each collection must not be empty", "collection");
      if (isBlank(block.item_var)) fail("for_each item_var must not be empty", "item_var");
      if (block.body.length === 0) fail("for_each body must not be empty", "body");
      return iterationRules(block, fail);
    case "router":
      if (block.routes.length === 0 && block.default === null) fail("router must have at least one route or a default", "routes");
      block.routes.forEach((route, index) => {
        if (isBlank(route.condition)) fail("router route condition must not be empty", "routes", index, "condition");
      });
      return;
    case "try_catch":
      if (block.try_block.length === 0) fail("try_catch try_block must not be empty", "try_block");
      return;
    case "sub_sequence":
      if (isBlank(block.sequence_name)) fail("sub_sequence sequence_name must not be empty", "sequence_name");
      return;
    case "a_b_split": {
      if (block.variants.length < 2) fail("a_b_split must have at least 2 variants", "variants");
      if (block.variants.reduce((total, variant) => total + variant.weight, 0) === 0) fail("a_b_split total weight must be > 0", "variants");
      const names = new Set<string>();
      block.variants.forEach((variant, index) => {
        if (isBlank(variant.name)) fail("a_b_split variant name must not be empty", "variants", index, "name");
        else if (names.has(variant.name)) fail(`a_b_split duplicate variant name \`${variant.name}\``, "variants", index, "name");
        names.add(variant.name);
      });
      return;
    }
    case "cancellation_scope":
      if (block.blocks.length === 0) fail("cancellation_scope must have at least one block", "blocks");
      return;
    case "saga":
      return; // An empty saga is a valid no-op.
  }
}

function iterationRules(block: { type: string; max_iterations: number }, fail: Fail) {
  if (block.max_iterations === 0) fail(`${block.type} max_iterations must be > 0`, "max_iterations");
  if (block.max_iterations > LIMITS.iterations) {
    fail(`${block.type} max_iterations must not exceed ${LIMITS.iterations}`, "max_iterations");
  }
}

function stepRules(step: StepBlock, fail: Fail) {
  if (step.handler === "") fail("handler name must not be empty", "handler");
  if (step.compensation && isBlank(step.compensation.handler)) {
    fail("compensation.handler must not be empty", "compensation", "handler");
  }

  const { retry } = step;
  if (retry) {
    if (retry.max_attempts === 0) fail("retry.max_attempts must be > 0", "retry", "max_attempts");
    if (retry.max_backoff < retry.initial_backoff) {
      fail("retry.initial_backoff must be <= retry.max_backoff", "retry", "max_backoff");
    }
    if (!(retry.backoff_multiplier > 0)) fail("retry.backoff_multiplier must be > 0", "retry", "backoff_multiplier");
  }

  const window = step.send_window;
  if (window) {
    if (window.start_hour > 23) fail("send_window.start_hour must be 0-23", "send_window", "start_hour");
    if (window.end_hour > 23) fail("send_window.end_hour must be 0-23", "send_window", "end_hour");
    if (window.start_hour === window.end_hour) fail("send_window.start_hour must differ from end_hour", "send_window", "end_hour");
    window.days.forEach((day, index) => {
      if (day > 6) fail(`send_window.days value ${day} out of range 0-6`, "send_window", "days", index);
    });
  }

  const input = step.wait_for_input;
  if (input?.choices) {
    if (input.choices.length === 0) fail("wait_for_input.choices must not be empty when given", "wait_for_input", "choices");
    const values = new Set<string>();
    input.choices.forEach((choice, index) => {
      if (values.has(choice.value)) {
        fail(`wait_for_input has a duplicate choice value \`${choice.value}\``, "wait_for_input", "choices", index, "value");
      }
      values.add(choice.value);
    });
  }
  if (input?.store_as === "") fail("wait_for_input.store_as must not be empty", "wait_for_input", "store_as");

  const schemaProblem = step.output_schema === undefined ? undefined : jsonSchemaProblem(step.output_schema);
  if (schemaProblem) fail(`output_schema is not a valid JSON Schema: ${schemaProblem}`, "output_schema");
}
