// From a zod schema to the form that edits its values: the schema goes through zod's own
// z.toJSONSchema (the input side: what may be written), and the JSON Schema is read into a small
// tree of field kinds. Block lists (`$ref` to the recursive Block) are the canvas's business;
// whatever has no control of its own is edited as JSON. No React: unit-tested (form-spec.test.ts).
import { z } from "zod";
import { handlerDescriptor } from "../../../../../../engine/handlers/descriptors.ts";
import * as Blocks from "../../../../../../engine/sequence/schema.ts";

export type FieldSpec =
  | { kind: "text"; pattern?: string }
  | { kind: "number"; integer: boolean; min?: number; max?: number }
  | { kind: "boolean" }
  | { kind: "enum"; options: string[] }
  | { kind: "object"; fields: FieldEntry[] }
  | { kind: "record"; values: FieldSpec }
  | { kind: "array"; items: FieldSpec }
  | { kind: "union"; variants: FieldSpec[] }
  /** A list of blocks: drawn and edited on the canvas. */
  | { kind: "blocks" }
  /** The `type` tag of a block. */
  | { kind: "const"; value: unknown }
  | { kind: "json" };

export interface FieldEntry {
  name: string;
  spec: FieldSpec;
  /** Must be written (required and without a default). */
  required: boolean;
  /** `null` is allowed and reads as absent. */
  nullable: boolean;
  description?: string;
  default?: unknown;
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const BIG = 2 ** 31;

/** Drops `null` from a schema: whether null is allowed is the field's business. */
function withoutNull(schema: Json): { schema: Json; nullable: boolean } {
  if (Array.isArray(schema.type) && schema.type.includes("null")) {
    const rest = schema.type.filter((type) => type !== "null");
    return { schema: { ...schema, type: rest.length === 1 ? rest[0] : rest }, nullable: true };
  }
  const options = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(options) && options.some((option) => isRecord(option) && option.type === "null")) {
    const rest = options.filter((option) => !(isRecord(option) && option.type === "null"));
    const { anyOf: _a, oneOf: _o, ...outer } = schema;
    return { schema: rest.length === 1 ? { ...outer, ...(rest[0] as Json) } : { ...outer, anyOf: rest }, nullable: true };
  }
  return { schema, nullable: false };
}

const isRef = (schema: unknown) => isRecord(schema) && typeof schema.$ref === "string";

/** A JSON Schema (as z.toJSONSchema writes it) as a field kind. */
export function specOf(input: unknown): FieldSpec {
  if (!isRecord(input)) return { kind: "json" };
  const { schema } = withoutNull(input);
  if ("const" in schema) return { kind: "const", value: schema.const };
  if (Array.isArray(schema.enum) && schema.enum.every((option) => typeof option === "string")) return { kind: "enum", options: schema.enum as string[] };
  const variants = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(variants)) return { kind: "union", variants: variants.map(specOf) };
  if (Array.isArray(schema.type)) return { kind: "union", variants: schema.type.map((type) => specOf({ ...schema, type })) };
  switch (schema.type) {
    case "string":
      return typeof schema.pattern === "string" ? { kind: "text", pattern: schema.pattern } : { kind: "text" };
    case "number":
    case "integer": {
      const min = typeof schema.minimum === "number" ? schema.minimum : typeof schema.exclusiveMinimum === "number" ? schema.exclusiveMinimum : undefined;
      const max = typeof schema.maximum === "number" && schema.maximum < BIG ? schema.maximum : undefined;
      return { kind: "number", integer: schema.type === "integer", ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
    }
    case "boolean":
      return { kind: "boolean" };
    case "array": {
      const items = schema.items;
      if (isRef(items) || (isRecord(items) && items.type === "array" && isRef(items.items))) return { kind: "blocks" };
      return { kind: "array", items: specOf(items) };
    }
    case "object": {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
      if (Object.keys(properties).length === 0) {
        return isRecord(schema.additionalProperties) && Object.keys(schema.additionalProperties).length > 0
          ? { kind: "record", values: specOf(schema.additionalProperties) }
          : { kind: "json" };
      }
      return {
        kind: "object",
        fields: Object.entries(properties).map(([name, raw]) => {
          const property = isRecord(raw) ? raw : {};
          const { nullable } = withoutNull(property);
          return {
            name,
            spec: specOf(property),
            required: required.has(name) && !("default" in property),
            nullable,
            ...(typeof property.description === "string" ? { description: property.description } : {}),
            ...("default" in property ? { default: property.default } : {}),
          };
        }),
      };
    }
    default:
      return { kind: "json" };
  }
}

/** The form for values of a zod schema: its input side (what a writer may put). */
export function specOfZod(schema: z.ZodType): FieldSpec {
  return specOf(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }));
}

const BLOCK_SCHEMAS: Record<string, z.ZodType> = {
  step: Blocks.StepBlock, parallel: Blocks.ParallelBlock, race: Blocks.RaceBlock, loop: Blocks.LoopBlock,
  for_each: Blocks.ForEachBlock, router: Blocks.RouterBlock, try_catch: Blocks.TryCatchBlock,
  sub_sequence: Blocks.SubSequenceBlock, a_b_split: Blocks.ABSplitBlock, ab_split: Blocks.ABSplitBlock,
  cancellation_scope: Blocks.CancellationScopeBlock, saga: Blocks.SagaBlock,
};

const cache = new Map<string, FieldSpec | null>();
function cached(key: string, make: () => FieldSpec | null): FieldSpec | null {
  if (!cache.has(key)) cache.set(key, make());
  return cache.get(key)!;
}

/** Every field of a block type, from the engine's block schema (wire-format A). */
export function blockSpec(type: string): FieldSpec | null {
  return cached(`block:${type}`, () => (BLOCK_SCHEMAS[type] ? specOfZod(BLOCK_SCHEMAS[type]) : null));
}

/** A field of the sequence itself (wire-format A.1: `sla`, `interceptors`...), from the engine's Sequence schema. */
export function sequenceField(name: string): FieldEntry | null {
  const spec = cached("sequence", () => specOfZod(Blocks.Sequence));
  return (spec?.kind === "object" && spec.fields.find((field) => field.name === name)) || null;
}

/** The params form of a built-in handler; null for a worker's handler (free JSON). */
export function paramsSpec(handler: string): FieldSpec | null {
  return cached(`handler:${handler}`, () => {
    const descriptor = handlerDescriptor(handler);
    return descriptor ? specOfZod(descriptor.params) : null;
  });
}

/** The unit of wire-format A's numbers that have one: durations are milliseconds, a loop's poll_interval seconds. */
const UNITS: Record<string, string> = {
  ...Object.fromEntries(
    ["duration", "jitter", "initial_backoff", "max_backoff", "timeout", "deadline", "max_runtime", "max_step_runtime"].map((name) => [name, "in milliseconds"]),
  ),
  poll_interval: "in seconds",
};

/**
 * The line under a field: its description, or its unit and a default worth saying (a checkbox
 * shows its own, an empty one says nothing). A handler's params (`inParams`) say their own units.
 */
export function fieldHint(field: FieldEntry, inParams: boolean): string | undefined {
  if (field.description) return field.description;
  const unit = !inParams && field.spec.kind === "number" ? UNITS[field.name] : undefined;
  const shownDefault = typeof field.default === "number" || (typeof field.default === "string" && field.default !== "") ? `default ${JSON.stringify(field.default)}` : undefined;
  return [unit, shownDefault].filter(Boolean).join(", ") || undefined;
}

/** Starting values for a field that is switched on, so it reads right at once. */
const PRESETS: Record<string, unknown> = {
  retry: { max_attempts: 3, initial_backoff: 1000, max_backoff: 60_000, backoff_multiplier: 2 },
  delay: { duration: 1000 },
  send_window: { start_hour: 9, end_hour: 17, days: [] },
  wait_for_input: { prompt: "" },
  context_access: { data: true, config: true },
  compensation: { handler: "", params: null },
  on_deadline_breach: { handler: "", params: null },
};

/** A new value for `spec`: required fields filled, optional ones left out. */
export function initialValue(spec: FieldSpec, name?: string): unknown {
  if (name && name in PRESETS) return structuredClone(PRESETS[name]);
  switch (spec.kind) {
    case "text":
      return "";
    case "number":
      return spec.min ?? 0;
    case "boolean":
      return false;
    case "enum":
      return spec.options[0] ?? "";
    case "object":
      return Object.fromEntries(spec.fields.filter((field) => field.required).map((field) => [field.name, initialValue(field.spec, field.name)]));
    case "record":
      return {};
    case "array":
    case "blocks":
      return [];
    case "union":
      return spec.variants[0] ? initialValue(spec.variants[0]) : null;
    case "const":
      return spec.value;
    case "json":
      return null;
  }
}

/** Whether `value` has the shape `spec` edits (picks a union's variant). */
export function fits(spec: FieldSpec, value: unknown): boolean {
  switch (spec.kind) {
    case "text":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "enum":
      return typeof value === "string" && spec.options.includes(value);
    case "object":
      return isRecord(value) && spec.fields.filter((field) => field.required).every((field) => field.name in value);
    case "record":
      return isRecord(value);
    case "array":
    case "blocks":
      return Array.isArray(value);
    case "union":
      return spec.variants.some((variant) => fits(variant, value));
    case "const":
      return value === spec.value;
    case "json":
      return true;
  }
}

/** A short name for a union's variant, for the picker. */
export function variantLabel(spec: FieldSpec): string {
  switch (spec.kind) {
    case "boolean":
      return "true / false";
    case "enum":
      return spec.options.join(" / ");
    case "object":
      return `{${spec.fields.map((field) => field.name).join(", ")}}`;
    case "array":
      return "list";
    default:
      return spec.kind;
  }
}
