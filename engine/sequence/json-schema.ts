// Well-formedness of the JSON Schemas a sequence carries (`input_schema`, step `output_schema`),
// checked at create time (A.14) so a broken schema is caught when the sequence is written, not
// on the first instance. A structural check of the keywords the validators rely on, not a full
// meta-schema validation.

const TYPE_NAMES = new Set(["null", "boolean", "object", "array", "number", "integer", "string"]);
/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = [
  "additionalItems", "additionalProperties", "contains", "contentSchema", "else", "if", "not",
  "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties",
];
/** Keywords whose value is an object of schemas. */
const SCHEMA_MAP_KEYWORDS = ["$defs", "definitions", "dependentSchemas", "patternProperties", "properties"];
/** Keywords whose value is a non-empty array of schemas. */
const SCHEMA_LIST_KEYWORDS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const COUNT_KEYWORDS = [
  "maxContains", "maxItems", "maxLength", "maxProperties", "minContains", "minItems", "minLength", "minProperties",
];
const NUMBER_KEYWORDS = ["maximum", "minimum", "multipleOf"];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isRegExp = (source: unknown) => {
  try {
    new RegExp(String(source), "u");
    return typeof source === "string";
  } catch {
    return false;
  }
};

/** What is wrong with `schema`, with a JSON Pointer to the spot; `undefined` when well formed. */
export function jsonSchemaProblem(schema: unknown): string | undefined {
  // An explicit stack rather than recursion: the depth of a schema is the client's choice.
  const pending: [node: unknown, pointer: string][] = [[schema, ""]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, pointer] = next;
    const at = (keyword: string) => `${pointer}/${keyword}`;
    if (typeof node === "boolean") continue;
    if (!isObject(node)) return `${pointer || "/"}: a schema must be an object or a boolean`;

    const type = node.type;
    if (type !== undefined) {
      const names = Array.isArray(type) ? type : [type];
      const bad = names.find((name) => typeof name !== "string" || !TYPE_NAMES.has(name));
      if (names.length === 0 || bad !== undefined) {
        return `${at("type")}: ${JSON.stringify(bad ?? type)} is not a JSON Schema type (${[...TYPE_NAMES].join(", ")})`;
      }
    }
    if (node.required !== undefined && !(Array.isArray(node.required) && node.required.every((key) => typeof key === "string"))) {
      return `${at("required")}: must be an array of strings`;
    }
    if (node.enum !== undefined && !Array.isArray(node.enum)) return `${at("enum")}: must be an array`;
    if (node.pattern !== undefined && !isRegExp(node.pattern)) return `${at("pattern")}: must be a regular expression`;
    if (node.$ref !== undefined && typeof node.$ref !== "string") return `${at("$ref")}: must be a string`;
    for (const keyword of COUNT_KEYWORDS) {
      const value = node[keyword];
      if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
        return `${at(keyword)}: must be a non-negative integer`;
      }
    }
    for (const keyword of NUMBER_KEYWORDS) {
      if (node[keyword] !== undefined && typeof node[keyword] !== "number") return `${at(keyword)}: must be a number`;
    }

    for (const keyword of SCHEMA_KEYWORDS) {
      if (node[keyword] !== undefined) pending.push([node[keyword], at(keyword)]);
    }
    if (Array.isArray(node.items)) {
      node.items.forEach((item, index) => pending.push([item, `${at("items")}/${index}`]));
    } else if (node.items !== undefined) {
      pending.push([node.items, at("items")]);
    }
    for (const keyword of SCHEMA_MAP_KEYWORDS) {
      const map = node[keyword];
      if (map === undefined) continue;
      if (!isObject(map)) return `${at(keyword)}: must be an object of schemas`;
      for (const [key, value] of Object.entries(map)) {
        if (keyword === "patternProperties" && !isRegExp(key)) return `${at(keyword)}: ${JSON.stringify(key)} is not a regular expression`;
        pending.push([value, `${at(keyword)}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`]);
      }
    }
    for (const keyword of SCHEMA_LIST_KEYWORDS) {
      const list = node[keyword];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.length === 0) return `${at(keyword)}: must be a non-empty array of schemas`;
      list.forEach((item, index) => pending.push([item, `${at(keyword)}/${index}`]));
    }
  }
  return undefined;
}
