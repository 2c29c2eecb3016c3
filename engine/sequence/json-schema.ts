// The JSON Schemas a sequence carries (`input_schema`, step `output_schema`): their
// well-formedness, checked at create time (A.14) so a broken schema is caught when the sequence is
// written, not on the first instance; and the validator that applies them (`input_schema` to a new
// instance's `context.data`, `output_schema` to a step's output).
//
// Both run in the engine every tenant shares, so a hostile schema must not stall it: no regular
// expression from a schema ever runs (`pattern` and `patternProperties` are refused at create
// time), `$ref` only points inside the schema itself, and one validation stays within
// JSON_SCHEMA_LIMITS whatever the schema and the value. Draft 2020-12 semantics, plus the older
// `items` array, `additionalItems` and `definitions` forms. No Node-only imports: the editor runs
// this in the browser.
import { isObject } from "../model.ts";
import { charCount } from "./paths.ts";

export const JSON_SCHEMA_LIMITS = {
  /**
   * Schema applications nested inside one another (a property's schema, an allOf branch, a
   * `$ref`…). The validator recurses once per level, so this bounds its stack, and it ends a
   * `$ref` cycle that never descends into the value. A tree schema that references itself spends
   * three levels per level of the tree.
   */
  depth: 64,
  /**
   * Work one validation may do: a unit per (schema, value) evaluation, and per key, name, JSON
   * node or 1,024 string characters a keyword visits without evaluating a schema. Combinators
   * multiply: twenty nested `anyOf` of two failing branches would take 2^20 evaluations.
   * A context.data is at most 256 KiB, so a few checks per node of any legitimate input fit;
   * the worst a hostile schema can cost is about a third of a second of one process.
   */
  work: 1_000_000,
} as const;

const TYPE_NAMES = new Set(["null", "boolean", "object", "array", "number", "integer", "string"]);
/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = [
  "additionalItems", "additionalProperties", "contains", "contentSchema", "else", "if", "not", "propertyNames", "then",
];
/** Keywords whose value is an object of schemas. */
const SCHEMA_MAP_KEYWORDS = ["$defs", "definitions", "dependentSchemas", "properties"];
/** Keywords whose value is a non-empty array of schemas. */
const SCHEMA_LIST_KEYWORDS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const COUNT_KEYWORDS = [
  "maxContains", "maxItems", "maxLength", "maxProperties", "minContains", "minItems", "minLength", "minProperties",
];
const NUMBER_KEYWORDS = ["exclusiveMaximum", "exclusiveMinimum", "maximum", "minimum", "multipleOf"];
const REGEX_RISK = "a regular expression from a sequence would run in the engine all tenants share";
/** Keywords refused at create time, with what to use instead. */
const UNSUPPORTED: Record<string, string> = {
  pattern: `${REGEX_RISK}; use enum, const, minLength or maxLength instead`,
  patternProperties: `${REGEX_RISK}; name the keys in properties, or use additionalProperties or propertyNames instead`,
  unevaluatedItems: "use items or additionalItems instead",
  unevaluatedProperties: "use additionalProperties instead",
  $dynamicRef: "use $ref instead",
  $recursiveRef: "use $ref instead",
};
const UNSUPPORTED_KEYWORDS = Object.keys(UNSUPPORTED);
/** Longest piece of a tenant's text (a key, a string) a message repeats. */
const ECHO_LIMIT = 60;

type SchemaObject = Record<string, unknown>;

const escapeKey = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");
const clip = (text: string) => (text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text);
const quote = (text: string) => JSON.stringify(clip(text));

/** What is wrong with `schema`, with a JSON Pointer to the spot; `undefined` when well formed. */
export function jsonSchemaProblem(schema: unknown): string | undefined {
  /** Pointers of every schema in the document: where a `$ref` may point. */
  const schemas = new Set<string>();
  const refs: [pointer: string, ref: string][] = [];
  // An explicit stack rather than recursion: the depth of a schema is the client's choice.
  const pending: [node: unknown, pointer: string][] = [[schema, ""]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, pointer] = next;
    const at = (keyword: string) => `${pointer}/${keyword}`;
    if (typeof node !== "boolean" && !isObject(node)) return `${pointer || "/"}: a schema must be an object or a boolean`;
    schemas.add(pointer);
    if (typeof node === "boolean") continue;

    const unsupported = UNSUPPORTED_KEYWORDS.find((keyword) => node[keyword] !== undefined);
    if (unsupported) return `${at(unsupported)}: is not supported: ${UNSUPPORTED[unsupported]}`;
    const problem = keywordProblem(node);
    if (problem) return `${at(problem.keyword)}: ${problem.text}`;
    if (typeof node.$ref === "string") refs.push([at("$ref"), node.$ref]);

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
      for (const [key, value] of Object.entries(map)) pending.push([value, `${at(keyword)}/${escapeKey(key)}`]);
    }
    for (const keyword of SCHEMA_LIST_KEYWORDS) {
      const list = node[keyword];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.length === 0) return `${at(keyword)}: must be a non-empty array of schemas`;
      list.forEach((item, index) => pending.push([item, `${at(keyword)}/${index}`]));
    }
  }
  // Checked once every schema is known: a `$ref` may point forward.
  for (const [pointer, ref] of refs) {
    const keys = refKeys(ref);
    if (keys === undefined) return `${pointer}: only local references ("#" or "#/…") are supported, not ${quote(ref)}`;
    if (!schemas.has(pointerOf(keys))) return `${pointer}: ${quote(ref)} does not resolve to a schema in this document`;
  }
  return undefined;
}

/** The first keyword of `node` whose own value is malformed (sub-schemas are checked apart). */
function keywordProblem(node: SchemaObject): { keyword: string; text: string } | undefined {
  const type = node.type;
  if (type !== undefined) {
    const names = Array.isArray(type) ? type : [type];
    const bad = names.find((name) => typeof name !== "string" || !TYPE_NAMES.has(name));
    if (names.length === 0 || bad !== undefined) {
      return { keyword: "type", text: `${JSON.stringify(bad ?? type)} is not a JSON Schema type (${[...TYPE_NAMES].join(", ")})` };
    }
  }
  if (node.required !== undefined && !isStringList(node.required)) return { keyword: "required", text: "must be an array of strings" };
  if (node.enum !== undefined && !Array.isArray(node.enum)) return { keyword: "enum", text: "must be an array" };
  if (node.$ref !== undefined && typeof node.$ref !== "string") return { keyword: "$ref", text: "must be a string" };
  if (node.uniqueItems !== undefined && typeof node.uniqueItems !== "boolean") return { keyword: "uniqueItems", text: "must be a boolean" };
  const dependent = node.dependentRequired;
  if (dependent !== undefined && !(isObject(dependent) && Object.values(dependent).every(isStringList))) {
    return { keyword: "dependentRequired", text: "must be an object of string arrays" };
  }
  for (const keyword of COUNT_KEYWORDS) {
    const value = node[keyword];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) return { keyword, text: "must be a non-negative integer" };
  }
  for (const keyword of NUMBER_KEYWORDS) {
    if (node[keyword] !== undefined && typeof node[keyword] !== "number") return { keyword, text: "must be a number" };
  }
  // A zero divisor would make every number fail (or pass) for no reason a tenant could see.
  if (typeof node.multipleOf === "number" && node.multipleOf <= 0) return { keyword: "multipleOf", text: "must be greater than 0" };
  return undefined;
}

const isStringList = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === "string");

/** The keys of a local `$ref` ("#" or "#/a/b", percent- and ~-escaped); undefined for any other. */
function refKeys(ref: string): string[] | undefined {
  if (ref === "#") return [];
  if (!ref.startsWith("#/")) return undefined;
  return ref.slice(2).split("/").map((raw) => percentDecoded(raw).replaceAll("~1", "/").replaceAll("~0", "~"));
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // A stray "%" is literal: "#/$defs/100%" names the key "100%".
  }
}

const pointerOf = (keys: readonly string[]) => keys.map((key) => `/${escapeKey(key)}`).join("");

/** The schema a local `$ref` names in `root`, or undefined. */
function resolveRef(root: unknown, ref: string): unknown {
  const keys = refKeys(ref);
  if (keys === undefined) return undefined;
  let node = root;
  for (const key of keys) {
    if (Array.isArray(node)) {
      const index = Number(key);
      node = String(index) === key && index < node.length ? node[index] : undefined;
    } else {
      node = isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
    }
  }
  return node;
}

/**
 * Whether `value` satisfies `schema`: undefined when it does, else one message for the first
 * violation, `<JSON Pointer into the value>: <problem>` (`/customer/email: is required`). Expects
 * a schema that passed `jsonSchemaProblem`. A limit of JSON_SCHEMA_LIMITS is a violation too.
 */
export function schemaViolation(schema: unknown, value: unknown): string | undefined {
  try {
    const failure = new Validator(schema).check(schema, value);
    // Only quiet branches return FAILED, never the top level; a message anyway rather than a pass.
    return failure === FAILED ? "/: is not valid" : failure;
  } catch (error) {
    if (error instanceof Abort) return error.message;
    throw error;
  }
}

/** A failure when no message is wanted: in the branches of anyOf, oneOf, not, if and contains. */
const FAILED = Symbol("failed");
/** Why a value fails: the message, or just FAILED while quiet. */
type Failure = string | typeof FAILED;
/** Message of a failure, built only when it will be shown. */
type Problem = string | (() => string);

/** Ends a validation: a limit was hit, and no `not` or `anyOf` may turn that into a pass. */
class Abort extends Error {}

class Validator {
  /** Where in the value the schema being applied sits. */
  private readonly path: (string | number)[] = [];
  private readonly resolved = new Map<string, unknown>();
  private depth = 0;
  private work = 0;
  private quiet = false;

  constructor(private readonly root: unknown) {}

  check(schema: unknown, value: unknown): Failure | undefined {
    this.spend(1);
    if (++this.depth > JSON_SCHEMA_LIMITS.depth) throw new Abort(`${this.pointer()}: schema nesting too deep to check`);
    const failure = this.apply(schema, value);
    this.depth--;
    return failure;
  }

  private apply(schema: unknown, value: unknown): Failure | undefined {
    if (schema === true) return undefined;
    // `false`, or (never after jsonSchemaProblem) something that is not a schema: nothing passes.
    if (!isObject(schema)) return this.fail("is not allowed");
    return this.checkType(schema, value)
      ?? this.checkEnumConst(schema, value)
      ?? this.checkInstance(schema, value)
      ?? this.checkRef(schema, value)
      ?? this.checkCombinators(schema, value)
      ?? this.checkConditional(schema, value);
  }

  private checkType(schema: SchemaObject, value: unknown): Failure | undefined {
    if (schema.type === undefined) return undefined;
    const names: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (names.some((name) => hasType(value, name))) return undefined;
    return this.fail(() => `must be ${typeList(names)}`);
  }

  private checkEnumConst(schema: SchemaObject, value: unknown): Failure | undefined {
    const options = schema.enum;
    if (Array.isArray(options) && !options.some((option) => this.equal(option, value))) {
      return this.fail(() => `must be one of ${optionList(options)}`);
    }
    if (Object.hasOwn(schema, "const") && !this.equal(schema.const, value)) {
      return this.fail(() => (typeof schema.const === "object" && schema.const !== null ? "must equal const" : `must be ${preview(schema.const)}`));
    }
    return undefined;
  }

  /** The keywords for the value's own type: they ignore values of any other type. */
  private checkInstance(schema: SchemaObject, value: unknown): Failure | undefined {
    if (typeof value === "number") return this.checkNumber(schema, value);
    if (typeof value === "string") return this.checkString(schema, value);
    if (Array.isArray(value)) return this.checkArray(schema, value);
    if (isObject(value)) return this.checkObject(schema, value);
    return undefined;
  }

  private checkNumber(schema: SchemaObject, value: number): Failure | undefined {
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema;
    if (typeof minimum === "number" && value < minimum) return this.fail(() => `must be at least ${minimum}`);
    if (typeof maximum === "number" && value > maximum) return this.fail(() => `must be at most ${maximum}`);
    if (typeof exclusiveMinimum === "number" && value <= exclusiveMinimum) return this.fail(() => `must be greater than ${exclusiveMinimum}`);
    if (typeof exclusiveMaximum === "number" && value >= exclusiveMaximum) return this.fail(() => `must be less than ${exclusiveMaximum}`);
    if (typeof multipleOf === "number" && multipleOf > 0 && !isMultiple(value, multipleOf)) {
      return this.fail(() => `must be a multiple of ${multipleOf}`);
    }
    return undefined;
  }

  private checkString(schema: SchemaObject, text: string): Failure | undefined {
    const min = count(schema.minLength);
    const max = count(schema.maxLength);
    // n UTF-16 units are between n/2 and n characters: count only when the bounds do not decide.
    if ((min === undefined || text.length / 2 >= min) && (max === undefined || text.length <= max)) return undefined;
    this.spend(Math.ceil(text.length / 1024));
    const length = charCount(text);
    if (min !== undefined && length < min) return this.fail(() => `must have at least ${plural(min, "character")}`);
    if (max !== undefined && length > max) return this.fail(() => `must have at most ${plural(max, "character")}`);
    return undefined;
  }

  private checkArray(schema: SchemaObject, items: unknown[]): Failure | undefined {
    const min = count(schema.minItems);
    const max = count(schema.maxItems);
    if (min !== undefined && items.length < min) return this.fail(() => `must have at least ${plural(min, "item")}`);
    if (max !== undefined && items.length > max) return this.fail(() => `must have at most ${plural(max, "item")}`);
    return this.checkItems(schema, items)
      ?? this.checkContains(schema, items)
      ?? (schema.uniqueItems === true ? this.checkUnique(items) : undefined);
  }

  private checkItems(schema: SchemaObject, items: unknown[]): Failure | undefined {
    const { prefixItems, items: itemsKeyword, additionalItems } = schema;
    // 2020-12: prefixItems for the first items, items for the rest. Before: items as an array for
    // the first ones, additionalItems for the rest.
    const tuple: unknown[] = Array.isArray(prefixItems) ? prefixItems : Array.isArray(itemsKeyword) ? itemsKeyword : [];
    const rest = Array.isArray(itemsKeyword) ? (Array.isArray(prefixItems) ? undefined : additionalItems) : itemsKeyword;
    for (let index = 0; index < items.length; index++) {
      const itemSchema = index < tuple.length ? tuple[index] : rest;
      if (itemSchema === undefined) break;
      const failure = this.checkAt(index, itemSchema, items[index]);
      if (failure !== undefined) return failure;
    }
    return undefined;
  }

  private checkContains(schema: SchemaObject, items: unknown[]): Failure | undefined {
    if (schema.contains === undefined) return undefined;
    const min = count(schema.minContains) ?? 1;
    const max = count(schema.maxContains);
    let matches = 0;
    for (let index = 0; index < items.length && (max !== undefined || matches < min); index++) {
      if (this.passesAt(index, schema.contains, items[index])) matches++;
      if (max !== undefined && matches > max) return this.fail(() => `must contain at most ${plural(max, "item")} matching contains`);
    }
    return matches < min ? this.fail(() => `must contain at least ${plural(min, "item")} matching contains`) : undefined;
  }

  private checkUnique(items: unknown[]): Failure | undefined {
    // Canonical text (keys sorted) makes this linear, where comparing pairs would be quadratic.
    const seen = new Map<string, number>();
    for (let index = 0; index < items.length; index++) {
      const key = this.canonical(items[index]);
      const first = seen.get(key);
      if (first !== undefined) return this.fail(() => `must not contain duplicates (items ${first} and ${index} are equal)`);
      seen.set(key, index);
    }
    return undefined;
  }

  private checkObject(schema: SchemaObject, object: SchemaObject): Failure | undefined {
    if (Array.isArray(schema.required)) {
      this.spend(schema.required.length);
      const missing = schema.required.find((name) => typeof name === "string" && !Object.hasOwn(object, name));
      if (typeof missing === "string") return this.failAt(missing, "is required");
    }
    const keys = Object.keys(object);
    const min = count(schema.minProperties);
    const max = count(schema.maxProperties);
    if (min !== undefined && keys.length < min) return this.fail(() => `must have at least ${plural(min, "property", "properties")}`);
    if (max !== undefined && keys.length > max) return this.fail(() => `must have at most ${plural(max, "property", "properties")}`);
    return this.checkProperties(schema, object, keys) ?? this.checkDependencies(schema, object);
  }

  /** properties, additionalProperties and propertyNames, key by key in the value's order. */
  private checkProperties(schema: SchemaObject, object: SchemaObject, keys: string[]): Failure | undefined {
    const properties = isObject(schema.properties) ? schema.properties : undefined;
    const { additionalProperties: additional, propertyNames: names } = schema;
    if (properties === undefined && additional === undefined && names === undefined) return undefined;
    for (const key of keys) {
      if (names !== undefined && !this.passesAt(key, names, key)) return this.failAt(key, "is not an allowed property name");
      const keySchema = properties !== undefined && Object.hasOwn(properties, key) ? properties[key] : additional;
      if (keySchema === undefined) {
        this.spend(1);
        continue;
      }
      const failure = this.checkAt(key, keySchema, object[key]);
      if (failure !== undefined) return failure;
    }
    return undefined;
  }

  private checkDependencies(schema: SchemaObject, object: SchemaObject): Failure | undefined {
    const { dependentRequired, dependentSchemas } = schema;
    for (const [key, names] of isObject(dependentRequired) ? Object.entries(dependentRequired) : []) {
      this.spend(1);
      if (!Object.hasOwn(object, key) || !Array.isArray(names)) continue;
      this.spend(names.length);
      const missing = names.find((name) => typeof name === "string" && !Object.hasOwn(object, name));
      if (typeof missing === "string") return this.failAt(missing, () => `is required when ${quote(key)} is present`);
    }
    for (const [key, keySchema] of isObject(dependentSchemas) ? Object.entries(dependentSchemas) : []) {
      this.spend(1);
      const failure = Object.hasOwn(object, key) ? this.check(keySchema, object) : undefined;
      if (failure !== undefined) return failure;
    }
    return undefined;
  }

  /** 2020-12: a `$ref` applies beside its sibling keywords, not instead of them. */
  private checkRef(schema: SchemaObject, value: unknown): Failure | undefined {
    const ref = schema.$ref;
    if (typeof ref !== "string") return undefined;
    let target = this.resolved.get(ref);
    if (target === undefined) {
      target = resolveRef(this.root, ref);
      if (typeof target !== "boolean" && !isObject(target)) {
        throw new Abort(`${this.pointer()}: $ref ${quote(ref)} does not resolve to a schema in this document`);
      }
      this.resolved.set(ref, target);
    }
    return this.check(target, value);
  }

  private checkCombinators(schema: SchemaObject, value: unknown): Failure | undefined {
    const { allOf, anyOf, oneOf } = schema;
    for (const branch of Array.isArray(allOf) ? allOf : []) {
      const failure = this.check(branch, value);
      if (failure !== undefined) return failure;
    }
    if (Array.isArray(anyOf) && !anyOf.some((branch) => this.passes(branch, value))) {
      return this.fail("must match at least one schema in anyOf");
    }
    if (Array.isArray(oneOf)) {
      const matches: number[] = [];
      for (let index = 0; index < oneOf.length && matches.length < 2; index++) {
        if (this.passes(oneOf[index], value)) matches.push(index);
      }
      if (matches.length === 0) return this.fail("must match exactly one schema in oneOf, but matches none");
      if (matches.length === 2) return this.fail(() => `must match exactly one schema in oneOf, but matches schemas ${matches.join(" and ")}`);
    }
    if (schema.not !== undefined && this.passes(schema.not, value)) return this.fail("must not match the schema in not");
    return undefined;
  }

  private checkConditional(schema: SchemaObject, value: unknown): Failure | undefined {
    if (schema.if === undefined) return undefined;
    const branch = this.passes(schema.if, value) ? schema.then : schema.else;
    return branch === undefined ? undefined : this.check(branch, value);
  }

  /** Applies `schema` to a child of the current value (an item, a property). */
  private checkAt(key: string | number, schema: unknown, value: unknown): Failure | undefined {
    this.path.push(key);
    const failure = this.check(schema, value);
    this.path.pop();
    return failure;
  }

  /** Whether `value` passes, without building any message. */
  private passes(schema: unknown, value: unknown): boolean {
    const quiet = this.quiet;
    this.quiet = true;
    const failure = this.check(schema, value);
    this.quiet = quiet;
    return failure === undefined;
  }

  private passesAt(key: string | number, schema: unknown, value: unknown): boolean {
    this.path.push(key);
    const passes = this.passes(schema, value);
    this.path.pop();
    return passes;
  }

  private fail(problem: Problem): Failure {
    if (this.quiet) return FAILED;
    return `${this.pointer()}: ${typeof problem === "string" ? problem : problem()}`;
  }

  private failAt(key: string, problem: Problem): Failure {
    this.path.push(key);
    const failure = this.fail(problem);
    this.path.pop();
    return failure;
  }

  private pointer(): string {
    return this.path.length === 0 ? "/" : this.path.map((key) => `/${escapeKey(clip(String(key)))}`).join("");
  }

  private spend(units: number) {
    this.work += units;
    if (this.work > JSON_SCHEMA_LIMITS.work) throw new Abort("/: too complex to check");
  }

  /** JSON equality (object keys in any order), walked with a stack: values may nest deeply. */
  private equal(left: unknown, right: unknown): boolean {
    const pending: [unknown, unknown][] = [[left, right]];
    for (let pair = pending.pop(); pair; pair = pending.pop()) {
      this.spend(1);
      const [a, b] = pair;
      if (a === b) continue;
      if (Array.isArray(a)) {
        if (!Array.isArray(b) || a.length !== b.length) return false;
        a.forEach((item, index) => pending.push([item, b[index]]));
      } else if (isObject(a)) {
        if (!isObject(b)) return false;
        const keys = Object.keys(a);
        if (keys.length !== Object.keys(b).length || !keys.every((key) => Object.hasOwn(b, key))) return false;
        for (const key of keys) pending.push([a[key], b[key]]);
      } else {
        return false;
      }
    }
    return true;
  }

  /** JSON text with object keys sorted, so equal values read the same; built with a stack too. */
  private canonical(value: unknown): string {
    let text = "";
    const pending: unknown[] = [value];
    while (pending.length > 0) {
      const next = pending.pop();
      if (next instanceof Literal) {
        text += next.text;
        continue;
      }
      this.spend(1);
      if (Array.isArray(next)) {
        text += "[";
        pending.push(CLOSE_ARRAY);
        // Pushed last to first, so they come off the stack first to last.
        next.toReversed().forEach((item, index) => {
          if (index > 0) pending.push(COMMA);
          pending.push(item);
        });
      } else if (isObject(next)) {
        text += "{";
        pending.push(CLOSE_OBJECT);
        Object.keys(next).sort().reverse().forEach((key, index) => {
          if (index > 0) pending.push(COMMA);
          pending.push(next[key], new Literal(`${JSON.stringify(key)}:`));
        });
      } else {
        text += JSON.stringify(next) ?? "null";
      }
    }
    return text;
  }
}

/** Punctuation on `canonical`'s stack, told apart from the JSON values beside it. */
class Literal {
  constructor(readonly text: string) {}
}
const COMMA = new Literal(",");
const CLOSE_ARRAY = new Literal("]");
const CLOSE_OBJECT = new Literal("}");

function hasType(value: unknown, name: unknown): boolean {
  switch (name) {
    case "null": return value === null;
    case "boolean": return typeof value === "boolean";
    case "object": return isObject(value);
    case "array": return Array.isArray(value);
    case "number": return typeof value === "number" && Number.isFinite(value);
    case "integer": return Number.isInteger(value);
    case "string": return typeof value === "string";
    default: return false;
  }
}

const TYPE_ARTICLES: Record<string, string> = {
  null: "null", boolean: "a boolean", object: "an object", array: "an array", number: "a number", integer: "an integer", string: "a string",
};

/** `a string, a number or null` */
function typeList(names: unknown[]): string {
  const described = names.map((name) => TYPE_ARTICLES[String(name)] ?? String(name));
  const last = described.pop();
  return described.length === 0 ? `${last}` : `${described.join(", ")} or ${last}`;
}

/** `"free", "pro", 3`, cut short with `…` when long. */
function optionList(options: unknown[]): string {
  let text = "";
  for (const option of options) {
    const next = `${text === "" ? "" : ", "}${preview(option)}`;
    if (text !== "" && text.length + next.length > ECHO_LIMIT) return `${text}, …`;
    text += next;
  }
  return text;
}

/** A short rendering of a JSON value for a message: composites are not spelled out. */
function preview(value: unknown): string {
  if (typeof value === "string") return quote(value);
  if (Array.isArray(value)) return "[…]";
  if (isObject(value)) return "{…}";
  return String(value);
}

const count = (value: unknown) => (typeof value === "number" ? value : undefined);
const plural = (amount: number, one: string, many = `${one}s`) => `${amount} ${amount === 1 ? one : many}`;

/** Whether `value` is a whole multiple of `divisor`, allowing for binary floating point (0.3 / 0.1 is 2.9999999999999996). */
function isMultiple(value: number, divisor: number): boolean {
  const quotient = value / divisor;
  if (Number.isInteger(quotient)) return true;
  if (!Number.isFinite(quotient)) return false;
  // Each of value, divisor and the division is off by at most half an ulp: a few epsilons of the quotient.
  return Math.abs(quotient - Math.round(quotient)) <= Math.abs(quotient) * 4 * Number.EPSILON;
}
