// The shape of a sequence definition (wire-format A.1-A.13): field names, types and defaults.
// Parsing with these schemas gives the canonical form that is stored and returned: defaults
// filled in, durations in integer milliseconds, `ab_split` spelled `a_b_split`, unknown fields
// dropped. Shape only: the create-time rules of A.14 (non-empty bodies, ranges, unique ids...)
// live in validate.ts, because the wire answers them differently (400, not 422).
// Shared by the REST API, tRPC, the engine and the browser editor: no Node-only imports here.
import { z } from "zod";
import { durationMs } from "./duration.ts";

type Optional<T extends z.ZodType> = z.ZodPipe<
  z.ZodOptional<z.ZodNullable<T>>,
  z.ZodTransform<z.output<T> | undefined, z.output<T> | null | undefined>
>;
type OrNull<T extends z.ZodType> = z.ZodDefault<z.ZodNullable<T>>;

/** Optional on the wire. `null` reads as absent (as serde's `Option` does) and is dropped. */
function optional<T extends z.ZodType>(schema: T): Optional<T> {
  return schema.nullish().transform((value) => value ?? undefined);
}

/** Optional with a `null` default: always present in the output, `null` when not given. */
function orNull<T extends z.ZodType>(schema: T): OrNull<T> {
  return schema.nullable().default(null);
}

/** Any JSON value, `null` when absent (step `params`, sub_sequence `input`, handler params). */
const json = z.unknown().default(null);
/** Rust u32: negative or fractional values are body-shape errors (422), not rule violations. */
const u32 = z.uint32();
/** A JSON Schema document; checked for well-formedness by validate.ts (A.14). */
const jsonSchema = optional(z.unknown());

export const DelaySpec = z.object({
  duration: durationMs,
  business_days_only: z.boolean().default(false),
  jitter: optional(durationMs),
  /** "YYYY-MM-DD" dates skipped when `business_days_only`. */
  holidays: z.array(z.string()).default([]),
  /** Local ISO date-time; overrides `duration`. */
  fire_at_local: optional(z.string()),
  /** IANA zone for `fire_at_local`; the instance's zone when absent. */
  timezone: optional(z.string()),
});

export const RetryPolicy = z.object({
  /** Total number of runs (wire-format Appendix 13), > 0. */
  max_attempts: u32,
  initial_backoff: durationMs,
  max_backoff: durationMs,
  backoff_multiplier: z.number().default(2.0),
  /** Expression (B.2). */
  retry_if: optional(z.string()),
  non_retryable_codes: optional(z.array(z.string())),
});

export const SendWindow = z.object({
  start_hour: u32.default(9),
  /** Exclusive. */
  end_hour: u32.default(17),
  /** 0 = Monday ... 6 = Sunday; empty = every day. */
  days: z.array(u32).default([]),
});

export const ContextAccess = z.object({
  data: z.union([z.boolean(), z.enum(["all", "none"]), z.object({ fields: z.array(z.string()) })]).default(true),
  config: z.boolean().default(true),
  audit: z.boolean().default(false),
  runtime: z.boolean().default(false),
});

/**
 * Names and ids (sequence, namespace, block, handler, queue, rate-limit key): at most NAME_MAX
 * characters, so they fit the indexes that hold them and a megabyte "name" is a 422, not a 500.
 */
export const NAME_MAX = 255;
export const nameString = () => z.string().max(NAME_MAX, { message: `must be at most ${NAME_MAX} characters` });

export const HumanChoice = z.object({ label: z.string(), value: z.string() });

export const HumanInputDef = z.object({
  prompt: z.string().default(""),
  timeout: optional(durationMs),
  escalation_handler: optional(nameString()),
  /** Absent = Yes/No (values `yes`/`no`). */
  choices: optional(z.array(HumanChoice)),
  /** Key in `context.data` for the answer; the block id when absent. */
  store_as: optional(z.string()),
  allow_comment: z.boolean().default(false),
});

/** A handler invocation: deadline escalation, interceptors. */
export const HandlerCall = z.object({ handler: nameString(), params: json });

export const Compensation = z.object({
  handler: nameString(),
  params: json,
  depends_on: z.array(z.string()).default([]),
  verification: z.enum(["handler_result", "provider_receipt", "manual"]).default("handler_result"),
});

export const Interceptors = z.object({
  before_step: optional(HandlerCall),
  after_step: optional(HandlerCall),
  on_signal: optional(HandlerCall),
  on_complete: optional(HandlerCall),
  on_failure: optional(HandlerCall),
});

export const Sla = z.object({ max_runtime: optional(durationMs), max_step_runtime: optional(durationMs) });

export const StepBlock = z.object({
  type: z.literal("step"),
  id: nameString(),
  handler: nameString(),
  params: json,
  delay: orNull(DelaySpec),
  retry: orNull(RetryPolicy),
  timeout: optional(durationMs),
  rate_limit_key: optional(nameString()),
  send_window: optional(SendWindow),
  /** Absent = all of data and config. */
  context_access: optional(ContextAccess),
  cancellable: z.boolean().default(true),
  wait_for_input: optional(HumanInputDef),
  queue_name: optional(nameString()),
  deadline: optional(durationMs),
  on_deadline_breach: optional(HandlerCall),
  fallback_handler: optional(nameString()),
  /** Template (B.1). */
  cache_key: optional(z.string()),
  output_schema: jsonSchema,
  /** Expression (B.2). */
  when: optional(z.string()),
  compensation: optional(Compensation),
});

// The composites refer to `Block` through getters, zod 4's way of declaring recursive schemas:
// a getter runs only when the schema is used, after `Block` exists. Their return types are
// spelled out (`BlockSchema`, and the interfaces below) because TypeScript cannot infer a type
// that contains itself.

export const ParallelBlock = z.object({
  type: z.literal("parallel"),
  id: nameString(),
  get branches(): z.ZodArray<z.ZodArray<BlockSchema>> {
    return z.array(z.array(Block));
  },
});

export const RaceBlock = z.object({
  type: z.literal("race"),
  id: nameString(),
  get branches(): z.ZodArray<z.ZodArray<BlockSchema>> {
    return z.array(z.array(Block));
  },
  semantics: z.enum(["first_to_resolve", "first_to_succeed"]).default("first_to_resolve"),
});

export const LoopBlock = z.object({
  type: z.literal("loop"),
  id: nameString(),
  /** Expression (B.2). */
  condition: z.string(),
  get body(): z.ZodArray<BlockSchema> {
    return z.array(Block);
  },
  max_iterations: u32.default(1000),
  /** Expression (B.2). */
  break_on: optional(z.string()),
  continue_on_error: z.boolean().default(false),
  /** Whole seconds, not a duration. */
  poll_interval: optional(z.int().min(0)),
  retain_iterations: optional(u32),
});

export const ForEachBlock = z.object({
  type: z.literal("for_each"),
  id: nameString(),
  /** Dotted path under `context.data`, or a `{{…}}` template yielding an array. */
  collection: z.string(),
  item_var: z.string().default("item"),
  get body(): z.ZodArray<BlockSchema> {
    return z.array(Block);
  },
  max_iterations: u32.default(1000),
  retain_iterations: optional(u32),
});

export const Route = z.object({
  /** Expression (B.2); the first truthy route wins. */
  condition: z.string(),
  get blocks(): z.ZodArray<BlockSchema> {
    return z.array(Block);
  },
});

export const RouterBlock = z.object({
  type: z.literal("router"),
  id: nameString(),
  routes: z.array(Route),
  get default(): OrNull<z.ZodArray<BlockSchema>> {
    return orNull(z.array(Block));
  },
});

export const TryCatchBlock = z.object({
  type: z.literal("try_catch"),
  id: nameString(),
  get try_block(): z.ZodArray<BlockSchema> {
    return z.array(Block);
  },
  get catch_block(): z.ZodArray<BlockSchema> {
    return z.array(Block);
  },
  get finally_block(): OrNull<z.ZodArray<BlockSchema>> {
    return orNull(z.array(Block));
  },
});

export const SubSequenceBlock = z.object({
  type: z.literal("sub_sequence"),
  id: nameString(),
  sequence_name: nameString(),
  /** Absent = latest non-deprecated version. */
  version: optional(z.int32()),
  /** The child's `context.data`; not templated. */
  input: json,
});

export const ABVariant = z.object({
  name: z.string(),
  weight: u32,
  get blocks(): z.ZodArray<BlockSchema> {
    return z.array(Block);
  },
});

export const ABSplitBlock = z.object({
  // Orch8's prose docs spell it `ab_split`; its decoder only knows `a_b_split` (A.2).
  type: z.enum(["a_b_split", "ab_split"]).transform(() => "a_b_split" as const),
  id: nameString(),
  variants: z.array(ABVariant),
});

export const CancellationScopeBlock = z.object({
  type: z.literal("cancellation_scope"),
  id: nameString(),
  get blocks(): z.ZodArray<BlockSchema> {
    return z.array(Block);
  },
});

export const SagaStep = z.object({
  id: nameString(),
  get action(): BlockSchema {
    return Block;
  },
  get compensation(): Optional<BlockSchema> {
    return optional(Block);
  },
});

export const SagaBlock = z.object({
  type: z.literal("saga"),
  id: nameString(),
  steps: z.array(SagaStep),
});

// Interfaces, unlike type aliases, may refer to themselves through `Block`. Each is exactly what
// its schema outputs (or, `…Input`, accepts).
/* eslint-disable @typescript-eslint/no-empty-object-type */
export interface ParallelBlock extends z.output<typeof ParallelBlock> {}
export interface RaceBlock extends z.output<typeof RaceBlock> {}
export interface LoopBlock extends z.output<typeof LoopBlock> {}
export interface ForEachBlock extends z.output<typeof ForEachBlock> {}
export interface Route extends z.output<typeof Route> {}
export interface RouterBlock extends z.output<typeof RouterBlock> {}
export interface TryCatchBlock extends z.output<typeof TryCatchBlock> {}
export interface ABVariant extends z.output<typeof ABVariant> {}
export interface ABSplitBlock extends z.output<typeof ABSplitBlock> {}
export interface CancellationScopeBlock extends z.output<typeof CancellationScopeBlock> {}
export interface SagaStep extends z.output<typeof SagaStep> {}
export interface SagaBlock extends z.output<typeof SagaBlock> {}
interface ParallelInput extends z.input<typeof ParallelBlock> {}
interface RaceInput extends z.input<typeof RaceBlock> {}
interface LoopInput extends z.input<typeof LoopBlock> {}
interface ForEachInput extends z.input<typeof ForEachBlock> {}
interface RouterInput extends z.input<typeof RouterBlock> {}
interface TryCatchInput extends z.input<typeof TryCatchBlock> {}
interface ABSplitInput extends z.input<typeof ABSplitBlock> {}
interface CancellationScopeInput extends z.input<typeof CancellationScopeBlock> {}
interface SagaInput extends z.input<typeof SagaBlock> {}
/* eslint-enable @typescript-eslint/no-empty-object-type */

export type StepBlock = z.output<typeof StepBlock>;
export type SubSequenceBlock = z.output<typeof SubSequenceBlock>;

export type Block =
  | StepBlock
  | ParallelBlock
  | RaceBlock
  | LoopBlock
  | ForEachBlock
  | RouterBlock
  | TryCatchBlock
  | SubSequenceBlock
  | ABSplitBlock
  | CancellationScopeBlock
  | SagaBlock;

/** A block as a client may send it (defaults unapplied, `ab_split` allowed, float durations). */
export type BlockInput =
  | z.input<typeof StepBlock>
  | ParallelInput
  | RaceInput
  | LoopInput
  | ForEachInput
  | RouterInput
  | TryCatchInput
  | z.input<typeof SubSequenceBlock>
  | ABSplitInput
  | CancellationScopeInput
  | SagaInput;

export type BlockType = Block["type"];
type BlockSchema = z.ZodType<Block, BlockInput>;

/** Any block, told apart by `type`; any other `type` is a body-shape error (422). */
export const Block: BlockSchema = z.discriminatedUnion(
  "type",
  [
    StepBlock,
    ParallelBlock,
    RaceBlock,
    LoopBlock,
    ForEachBlock,
    RouterBlock,
    TryCatchBlock,
    SubSequenceBlock,
    ABSplitBlock,
    CancellationScopeBlock,
    SagaBlock,
  ],
  { error: (issue) => (issue.code === "invalid_union" ? unknownType(issue.input) : undefined) },
);

function unknownType(block: unknown): string {
  const type = (block as { type?: unknown }).type;
  return type === undefined ? "missing block type" : `unknown block type ${JSON.stringify(type)}`;
}

export const SEQUENCE_STATUSES = ["draft", "staging", "production", "unpublished"] as const;

export const Sequence = z.object({
  /** Client-chosen; any UUID form is accepted (Orch8 mints v7). */
  id: z.guid(),
  tenant_id: z.string().refine((value) => value.trim() !== "", "tenant_id must not be blank"),
  namespace: nameString(),
  name: nameString(),
  version: z.int32(),
  /** Top-level blocks, run strictly in order. */
  blocks: z.array(Block),
  deprecated: z.boolean().default(false),
  status: z.enum(SEQUENCE_STATUSES).default("production"),
  interceptors: optional(Interceptors),
  /** Checked against `context.data` when an instance is created. */
  input_schema: jsonSchema,
  /** Alert-only. */
  sla: optional(Sla),
  /** Cleanup trees; each has its own block-id space. */
  on_failure: optional(z.array(Block)),
  on_cancel: optional(z.array(Block)),
  created_at: z.iso.datetime({ offset: true }),
});

export type Sequence = z.output<typeof Sequence>;
/** What a client may send; `Sequence` is what parsing makes of it. */
export type SequenceInput = z.input<typeof Sequence>;
export type DelaySpec = z.output<typeof DelaySpec>;
export type RetryPolicy = z.output<typeof RetryPolicy>;
export type SendWindow = z.output<typeof SendWindow>;
export type ContextAccess = z.output<typeof ContextAccess>;
export type HumanChoice = z.output<typeof HumanChoice>;
export type HumanInputDef = z.output<typeof HumanInputDef>;
export type HandlerCall = z.output<typeof HandlerCall>;
export type Compensation = z.output<typeof Compensation>;
export type Interceptors = z.output<typeof Interceptors>;
export type Sla = z.output<typeof Sla>;
