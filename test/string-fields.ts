// Every string field of a zod schema, each as one input: a minimal value of the schema with that one
// field set to a probe, so a bad-input matrix covers real fields without listing them by hand.
// Walks the input side of z.toJSONSchema; a schema recursing into itself (blocks in blocks) is
// is walked once, which reaches every field of every block type.
import { z } from "zod";

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  additionalProperties?: JsonSchema | boolean;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minimum?: number;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
};

/** What a minimal input's ids and texts are; a caller may make them unique per call (names, ids). */
export const SAMPLE_UUID = "00000000-0000-4000-8000-000000000000";
export const SAMPLE_TEXT = "sample";

const FORMAT_SAMPLES: Record<string, string> = {
  uuid: SAMPLE_UUID,
  "date-time": "2026-01-01T00:00:00.000Z",
  date: "2026-01-01",
  email: "probe@example.test",
  uri: "http://localhost/",
};

export interface StringFieldCase {
  /** The field, as the hygiene and shape errors name it: `blocks[0].handler`. */
  path: string;
  input: unknown;
}

/** Values a minimal input takes for fields of these names (ids that must exist, the acting tenant). */
export type KnownValues = Readonly<Record<string, unknown>>;

export function stringFieldCases(schema: z.ZodType, probe: string, known: KnownValues = {}): StringFieldCase[] {
  const root = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const walker = new Walker(root.$defs ?? {}, probe, known);
  const byPath = new Map<string, StringFieldCase>();
  for (const found of walker.cases(root, "", [])) if (!byPath.has(found.path)) byPath.set(found.path, found);
  return [...byPath.values()];
}

class Walker {
  constructor(
    private readonly defs: Record<string, JsonSchema>,
    private readonly probe: string,
    private readonly known: KnownValues,
  ) {}

  private resolve(node: JsonSchema, seen: readonly string[]): { node: JsonSchema; seen: readonly string[] } | null {
    if (node.allOf) return this.resolve(this.mergeAll(node.allOf, seen), seen);
    if (!node.$ref) return { node, seen };
    const name = node.$ref.replace(/^#\/\$defs\//, "");
    if (seen.includes(name)) return null;
    const target = node.$ref === "#" ? null : this.defs[name];
    return target ? this.resolve(target, [...seen, name]) : null;
  }

  /** An intersection of objects (chained tRPC inputs) as one object. */
  private mergeAll(parts: JsonSchema[], seen: readonly string[]): JsonSchema {
    const merged: JsonSchema = { type: "object", properties: {}, required: [] };
    for (const part of parts) {
      const resolved = this.resolve(part, seen)?.node ?? {};
      Object.assign(merged.properties!, resolved.properties);
      merged.required!.push(...(resolved.required ?? []));
    }
    return merged;
  }

  /** One input per string field under `node`, each with the probe at that field. */
  cases(node: JsonSchema, path: string, seen: readonly string[]): StringFieldCase[] {
    const resolved = this.resolve(node, seen);
    if (!resolved) return [];
    const { node: schema } = resolved;
    seen = resolved.seen;
    const options = schema.anyOf ?? schema.oneOf;
    if (options) return options.flatMap((option) => this.cases(option, path, seen));
    const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
    const cases: StringFieldCase[] = [];
    // A field of any JSON (step params, context data) takes a string too.
    const anyJson = types.length === 0 && !schema.properties && schema.enum === undefined && schema.const === undefined;
    if (types.includes("string") || anyJson) cases.push({ path, input: this.probe });
    if (types.includes("object") || schema.properties) {
      const base = this.sampleObject(schema, seen);
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        for (const inner of this.cases(child, path ? `${path}.${key}` : key, seen)) {
          cases.push({ path: inner.path, input: { ...base, [key]: inner.input } });
        }
      }
      if (typeof schema.additionalProperties === "object") {
        for (const inner of this.cases(schema.additionalProperties, path ? `${path}.k` : "k", seen)) {
          cases.push({ path: inner.path, input: { ...base, k: inner.input } });
        }
      }
    }
    if (types.includes("array")) {
      const item = schema.items ?? schema.prefixItems?.[0];
      if (item) for (const inner of this.cases(item, `${path}[0]`, seen)) cases.push({ path: inner.path, input: [inner.input] });
    }
    return cases;
  }

  private sampleObject(schema: JsonSchema, seen: readonly string[]): Record<string, unknown> {
    const sample: Record<string, unknown> = {};
    for (const key of schema.required ?? []) {
      const child = schema.properties?.[key];
      sample[key] = key in this.known ? this.known[key] : child ? this.sample(child, seen) : null;
    }
    return sample;
  }

  /** A small value the schema accepts, as far as a JSON Schema tells. */
  sample(node: JsonSchema, seen: readonly string[]): unknown {
    const resolved = this.resolve(node, seen);
    if (!resolved) return null;
    const { node: schema } = resolved;
    if (schema.const !== undefined) return schema.const;
    if (schema.enum) return schema.enum[0];
    const options = schema.anyOf ?? schema.oneOf;
    if (options) return this.sample(options[0]!, resolved.seen);
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    switch (type) {
      case "string":
        return FORMAT_SAMPLES[schema.format ?? ""] ?? SAMPLE_TEXT;
      case "integer":
      case "number":
        return Math.max(1, schema.minimum ?? 1);
      case "boolean":
        return false;
      case "array": {
        const item = schema.items ?? schema.prefixItems?.[0];
        // One item rather than none: engines refuse empty bodies and branch lists the schema allows.
        return item ? [this.sample(item, resolved.seen)] : [];
      }
      case "null":
        return null;
      default:
        return schema.properties ? this.sampleObject(schema, resolved.seen) : {};
    }
  }
}
