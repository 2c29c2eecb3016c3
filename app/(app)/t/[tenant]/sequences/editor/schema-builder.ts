// The JSON Schemas the editor builds without JSON (a sequence's input_schema, a step's
// output_schema): an object with named, typed, possibly required properties. Anything richer
// (formats, enums, nesting...) is not representable here and is edited as JSON instead.
// No React: unit-tested (schema-builder.test.ts).

export const PROPERTY_TYPES = ["string", "number", "integer", "boolean", "object", "array"] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

export interface SchemaProperty {
  name: string;
  type: PropertyType;
  required: boolean;
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const onlyKeys = (value: Json, allowed: readonly string[]) => Object.keys(value).every((key) => allowed.includes(key));
const isPropertyType = (value: unknown): value is PropertyType => (PROPERTY_TYPES as readonly unknown[]).includes(value);

/**
 * The properties of `schema` when the builder can say all of it (`schemaOf` of them gives the
 * same schema back); null when the schema says more (it is then edited as JSON).
 */
export function propertiesOf(schema: unknown): SchemaProperty[] | null {
  if (!isRecord(schema) || !onlyKeys(schema, ["type", "properties", "required"]) || schema.type !== "object") return null;
  const properties = schema.properties ?? {};
  const required = schema.required ?? [];
  if (!isRecord(properties) || !Array.isArray(required)) return null;
  if (!required.every((name) => typeof name === "string" && name in properties) || new Set(required).size !== required.length) return null;
  const rows: SchemaProperty[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (!isRecord(property) || !onlyKeys(property, ["type"]) || !isPropertyType(property.type)) return null;
    rows.push({ name, type: property.type, required: required.includes(name) });
  }
  // `required` listed in another order than the properties would not come back the same.
  const order = rows.filter((row) => row.required).map((row) => row.name);
  return order.every((name, index) => required[index] === name) ? rows : null;
}

/** The schema for `properties`; rows without a name are left out, and a repeated name counts once (the last). */
export function schemaOf(properties: readonly SchemaProperty[]): Json {
  const named = new Map<string, SchemaProperty>();
  for (const row of properties) if (row.name.trim() !== "") named.set(row.name, row);
  const rows = [...named.values()];
  const required = rows.filter((row) => row.required).map((row) => row.name);
  return {
    type: "object",
    properties: Object.fromEntries(rows.map((row) => [row.name, { type: row.type }])),
    ...(required.length ? { required } : {}),
  };
}

/** What is wrong with the rows as the builder shows them (names repeated or missing). */
export function propertyProblems(properties: readonly SchemaProperty[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  properties.forEach((row, index) => {
    if (row.name.trim() === "") problems.push(`property ${index + 1} has no name`);
    else if (seen.has(row.name)) problems.push(`property ${row.name} is listed twice`);
    seen.add(row.name);
  });
  return problems;
}

/** A name not yet used by `properties`: field1, field2... */
export function freshPropertyName(properties: readonly SchemaProperty[]): string {
  const used = new Set(properties.map((row) => row.name));
  for (let n = 1; ; n++) if (!used.has(`field${n}`)) return `field${n}`;
}
