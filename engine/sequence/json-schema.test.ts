import { describe, expect, it } from "vitest";
import { JSON_SCHEMA_LIMITS, jsonSchemaProblem, schemaViolation } from "./json-schema.ts";

type Json = Record<string, unknown>;

/** A tree node: a name, and children that are tree nodes again. */
const TREE: Json = {
  type: "object",
  required: ["name"],
  properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
  additionalProperties: false,
};

/** A chain of `levels` nodes, the last one named `leaf`. */
function chain(levels: number, leaf: unknown = "leaf"): Json {
  let node: Json = { name: leaf };
  for (let level = 1; level < levels; level++) node = { name: `n${level}`, children: [node] };
  return node;
}

/** Arrays nested `depth` deep around `inner`: deeper than any recursive walk could go. */
function nestedArrays(depth: number, inner: unknown = 0): unknown {
  let value = inner;
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

/**
 * `levels` nested `anyOf: [X, X]` written compactly with $defs: 2^levels evaluations for a value
 * that fails every leaf, as a hostile tenant would write it.
 */
function anyOfBomb(levels: number): Json {
  const $defs: Json = { l0: { type: "number" } };
  for (let level = 1; level <= levels; level++) {
    const below = { $ref: `#/$defs/l${level - 1}` };
    $defs[`l${level}`] = { anyOf: [below, below] };
  }
  return { $defs, $ref: `#/$defs/l${levels}` };
}

describe("schemaViolation accepts", () => {
  it.each<[string, unknown, unknown]>([
    ["anything under true", true, { any: ["thing"] }],
    ["anything under an empty schema", {}, null],
    ["a string", { type: "string" }, "x"],
    ["null where a type list allows it", { type: ["string", "null"] }, null],
    ["an integer as a number", { type: "number" }, 3],
    ["a fraction as a number", { type: "number" }, 2.5],
    ["an integer", { type: "integer" }, -7],
    ["an integral float as an integer", { type: "integer" }, 3.0],
    ["an object", { type: "object" }, {}],
    ["an array", { type: "array" }, []],
    ["a boolean", { type: "boolean" }, false],
    ["null", { type: "null" }, null],
    ["an enum member", { enum: ["free", "pro"] }, "pro"],
    ["an enum object with its keys in another order", { enum: [{ a: 1, b: [1, { c: 2, d: 3 }] }] }, { b: [1, { d: 3, c: 2 }], a: 1 }],
    ["a deep const with its keys in another order", { const: { x: [1, { y: null }], z: "a" } }, { z: "a", x: [1, { y: null }] }],
    ["const null", { const: null }, null],
    ["a present required property", { required: ["email"] }, { email: "a@example.com" }],
    ["a property of the right type", { properties: { age: { type: "integer" } } }, { age: 30 }],
    ["a non-object under object keywords", { properties: { a: { type: "string" } }, required: ["a"] }, 5],
    ["a non-string under string keywords", { minLength: 3 }, 1],
    ["a non-number under number keywords", { minimum: 3 }, "1"],
    ["a non-array under array keywords", { minItems: 3 }, {}],
    ["a declared property beside additionalProperties", { properties: { a: { type: "string" } }, additionalProperties: { type: "number" } }, { a: "s", b: 2 }],
    ["a listed property with additionalProperties false", { properties: { a: true }, additionalProperties: false }, { a: 1 }],
    ["enough properties", { minProperties: 1, maxProperties: 2 }, { a: 1, b: 2 }],
    ["short property names", { propertyNames: { maxLength: 3 } }, { abc: 1 }],
    ["a dependentRequired trigger with its dependency", { dependentRequired: { card: ["billing"] } }, { card: 1, billing: 2 }],
    ["no dependentRequired trigger", { dependentRequired: { card: ["billing"] } }, {}],
    ["no dependentSchemas trigger", { dependentSchemas: { card: { required: ["cvc"] } } }, {}],
    ["items of the right type", { items: { type: "number" } }, [1, 2.5, 3]],
    ["a tuple with extra items and no additionalItems", { items: [{ type: "string" }, { type: "number" }] }, ["a", 1, true]],
    ["a tuple whose extra items match additionalItems", { items: [{ type: "string" }], additionalItems: { type: "number" } }, ["a", 1, 2]],
    ["prefixItems and items for the rest", { prefixItems: [{ type: "string" }], items: { type: "number" } }, ["a", 1, 2]],
    ["a short array under prefixItems", { prefixItems: [{ type: "string" }, { type: "number" }], items: false }, ["a"]],
    ["an array within minItems and maxItems", { minItems: 1, maxItems: 2 }, [1, 2]],
    ["distinct items", { uniqueItems: true }, [1, "1", [1, 2], [2, 1], { a: 1 }, { a: 2 }, null, false]],
    ["duplicates when uniqueItems is false", { uniqueItems: false }, [1, 1]],
    ["an item matching contains", { contains: { type: "string" } }, [1, "a"]],
    ["enough matches for minContains", { contains: { type: "string" }, minContains: 2 }, ["a", 1, "b"]],
    ["few enough matches for maxContains", { contains: { type: "string" }, maxContains: 2 }, ["a", 1, "b"]],
    ["no match when minContains is 0", { contains: { type: "string" }, minContains: 0 }, [1]],
    ["astral characters counted as one each", { minLength: 2, maxLength: 2 }, "😀😀"],
    ["a string that format would refuse (format is an annotation)", { format: "email" }, "not an email"],
    ["minimum and maximum themselves", { minimum: 5, maximum: 5 }, 5],
    ["a number inside exclusive bounds", { exclusiveMinimum: 5, exclusiveMaximum: 6 }, 5.5],
    ["0.3 as a multiple of 0.1", { multipleOf: 0.1 }, 0.3],
    ["4.35 as a multiple of 0.01", { multipleOf: 0.01 }, 4.35],
    ["an integer multiple", { multipleOf: 3 }, -12],
    ["every allOf branch", { allOf: [{ type: "object" }, { required: ["a"] }] }, { a: 1 }],
    ["one anyOf branch", { anyOf: [{ type: "string" }, { type: "number" }] }, 1],
    ["exactly one oneOf branch", { oneOf: [{ type: "number" }, { type: "integer" }] }, 1.5],
    ["what not refuses to match", { not: { type: "string" } }, 1],
    ["then when if matches", { if: { required: ["card"] }, then: { required: ["last4"] }, else: { required: ["iban"] } }, { card: 1, last4: "1234" }],
    ["else when if fails", { if: { required: ["card"] }, then: { required: ["last4"] }, else: { required: ["iban"] } }, { iban: "DE00" }],
    ["if without then or else", { if: { type: "string" } }, 1],
    ["a $defs reference", { $defs: { email: { type: "string" } }, properties: { to: { $ref: "#/$defs/email" } } }, { to: "a@example.com" }],
    ["a definitions reference", { definitions: { id: { type: "integer" } }, items: { $ref: "#/definitions/id" } }, [1, 2]],
    ["a reference with escaped keys", { $defs: { "a/b~c": { const: 1 } }, $ref: "#/$defs/a~1b~0c" }, 1],
    ["a percent-encoded reference", { $defs: { "a b": { const: 1 } }, $ref: "#/$defs/a%20b" }, 1],
    ["a recursive tree", TREE, chain(20)],
    ["a wide tree", TREE, { name: "root", children: [chain(3), chain(4), { name: "x", children: [] }] }],
    [
      "unknown and annotation keywords",
      { $schema: "https://json-schema.org/draft/2020-12/schema", $id: "urn:x", $comment: "c", title: "t", description: "d", default: 1, examples: [1], readOnly: true, "x-ui": { widget: "select" }, type: "string" },
      "x",
    ],
    ["10,000 unique numbers within the work limit", { type: "array", items: { type: "number" }, uniqueItems: true }, Array.from({ length: 10_000 }, (_, index) => index)],
    ["a const nested 10,000 arrays deep", { const: nestedArrays(10_000) }, nestedArrays(10_000)],
  ])("%s", (_name, schema, value) => {
    expect(schemaViolation(schema, value)).toBeUndefined();
  });
});

describe("schemaViolation refuses", () => {
  it.each<[string, unknown, unknown, string]>([
    ["anything under false", false, 1, "/: is not allowed"],
    ["a fraction as an integer", { type: "integer" }, 2.5, "/: must be an integer"],
    ["a numeric string as a number", { type: "number" }, "3", "/: must be a number"],
    ["an array as an object", { type: "object" }, [], "/: must be an object"],
    ["an object as an array", { type: "array" }, {}, "/: must be an array"],
    ["a number as a string or null", { type: ["string", "null"] }, 5, "/: must be a string or null"],
    ["a boolean as one of three types", { type: ["string", "number", "null"] }, true, "/: must be a string, a number or null"],
    ["null as a boolean", { type: "boolean" }, null, "/: must be a boolean"],
    ["a value outside an enum", { properties: { plan: { enum: ["free", "pro"] } } }, { plan: "team" }, '/plan: must be one of "free", "pro"'],
    ["an object with an extra key against an enum", { enum: [{ a: 1 }, 2] }, { a: 1, b: 2 }, "/: must be one of {…}, 2"],
    ["an array in another order against an enum", { enum: [[1, 2]] }, [2, 1], "/: must be one of […]"],
    ["1 against the string enum member \"1\"", { enum: ["1"] }, 1, '/: must be one of "1"'],
    ["a value other than a const string", { const: "pro" }, "free", '/: must be "pro"'],
    ["an object differing in one value type", { const: { a: 1 } }, { a: "1" }, "/: must equal const"],
    ["true against const 1", { const: 1 }, true, "/: must be 1"],
    ["a missing required property", { required: ["email"] }, {}, "/email: is required"],
    ["a missing nested required property", { properties: { customer: { required: ["email"] } } }, { customer: {} }, "/customer/email: is required"],
    ["a property of the wrong type", { properties: { age: { type: "integer" } } }, { age: "x" }, "/age: must be an integer"],
    ["an extra property with additionalProperties false", { properties: { a: true }, additionalProperties: false }, { a: 1, b: 2 }, "/b: is not allowed"],
    ["an extra property failing additionalProperties", { additionalProperties: { type: "number" } }, { x: 1, y: "2" }, "/y: must be a number"],
    ["too few properties", { minProperties: 2 }, { a: 1 }, "/: must have at least 2 properties"],
    ["too many properties", { maxProperties: 1 }, { a: 1, b: 2 }, "/: must have at most 1 property"],
    ["a long property name", { propertyNames: { maxLength: 3 } }, { abc: 1, abcd: 2 }, "/abcd: is not an allowed property name"],
    ["a property name outside an enum", { propertyNames: { enum: ["a", "b"] } }, { c: 1 }, "/c: is not an allowed property name"],
    ["a missing dependentRequired property", { dependentRequired: { card: ["billing"] } }, { card: 1 }, '/billing: is required when "card" is present'],
    ["a dependentSchemas violation", { dependentSchemas: { card: { required: ["cvc"] } } }, { card: 1 }, "/cvc: is required"],
    ["a key with / and ~ in the pointer", { properties: { "a/b~c": { type: "string" } } }, { "a/b~c": 1 }, "/a~1b~0c: must be a string"],
    ["an item of the wrong type", { properties: { items: { items: { type: "number" } } } }, { items: [1, 2, "x"] }, "/items/2: must be a number"],
    ["a tuple item of the wrong type", { items: [{ type: "string" }, { type: "number" }] }, ["a", "b"], "/1: must be a number"],
    ["an item beyond the tuple with additionalItems false", { items: [{ type: "string" }], additionalItems: false }, ["a", 1], "/1: is not allowed"],
    ["an item beyond the tuple failing additionalItems", { items: [{ type: "string" }], additionalItems: { type: "number" } }, ["a", 1, "b"], "/2: must be a number"],
    ["a prefixItems item of the wrong type", { prefixItems: [{ type: "string" }] }, [1], "/0: must be a string"],
    ["an item beyond prefixItems failing items", { prefixItems: [{ type: "string" }], items: { type: "number" } }, ["a", 1, "b"], "/2: must be a number"],
    ["an item beyond prefixItems with items false", { prefixItems: [{ type: "string" }], items: false }, ["a", 1], "/1: is not allowed"],
    ["too few items", { minItems: 1 }, [], "/: must have at least 1 item"],
    ["too many items", { maxItems: 2 }, [1, 2, 3], "/: must have at most 2 items"],
    ["duplicate numbers", { uniqueItems: true }, [1, 2, 1], "/: must not contain duplicates (items 0 and 2 are equal)"],
    ["duplicate objects with their keys in another order", { uniqueItems: true }, [{ a: 1, b: [2] }, { b: [2], a: 1 }], "/: must not contain duplicates (items 0 and 1 are equal)"],
    ["duplicates nested 10,000 arrays deep", { uniqueItems: true }, [nestedArrays(10_000), nestedArrays(10_000)], "/: must not contain duplicates (items 0 and 1 are equal)"],
    ["no item matching contains", { contains: { type: "string" } }, [1, 2], "/: must contain at least 1 item matching contains"],
    ["too few matches for minContains", { contains: { type: "string" }, minContains: 2 }, [1, "a"], "/: must contain at least 2 items matching contains"],
    ["too many matches for maxContains", { contains: { type: "string" }, maxContains: 1 }, ["a", "b"], "/: must contain at most 1 item matching contains"],
    ["two astral characters for maxLength 1", { maxLength: 1 }, "😀😀", "/: must have at most 1 character"],
    ["two astral characters for minLength 3", { minLength: 3 }, "😀😀", "/: must have at least 3 characters"],
    ["a number below minimum", { minimum: 5 }, 4, "/: must be at least 5"],
    ["a number above maximum", { maximum: 10 }, 11, "/: must be at most 10"],
    ["exclusiveMinimum itself", { exclusiveMinimum: 5 }, 5, "/: must be greater than 5"],
    ["exclusiveMaximum itself", { exclusiveMaximum: 10 }, 10, "/: must be less than 10"],
    ["0.35 as a multiple of 0.1", { multipleOf: 0.1 }, 0.35, "/: must be a multiple of 0.1"],
    ["10 as a multiple of 3", { multipleOf: 3 }, 10, "/: must be a multiple of 3"],
    ["a large number half a unit off", { multipleOf: 1 }, 1e12 + 0.5, "/: must be a multiple of 1"],
    ["one failing allOf branch", { allOf: [{ type: "object" }, { required: ["a"] }] }, {}, "/a: is required"],
    ["no anyOf branch", { anyOf: [{ type: "string" }, { type: "number" }] }, true, "/: must match at least one schema in anyOf"],
    ["two oneOf branches", { oneOf: [{ type: "number" }, { type: "integer" }] }, 1, "/: must match exactly one schema in oneOf, but matches schemas 0 and 1"],
    ["no oneOf branch", { oneOf: [{ type: "number" }, { type: "integer" }] }, "x", "/: must match exactly one schema in oneOf, but matches none"],
    ["what not forbids", { not: { type: "string" } }, "x", "/: must not match the schema in not"],
    ["then when if matches", { if: { required: ["card"] }, then: { required: ["last4"] }, else: { required: ["iban"] } }, { card: 1 }, "/last4: is required"],
    ["else when if fails", { if: { required: ["card"] }, then: { required: ["last4"] }, else: { required: ["iban"] } }, { bank: 1 }, "/iban: is required"],
    ["a $defs reference", { $defs: { email: { type: "string" } }, properties: { to: { $ref: "#/$defs/email" } } }, { to: 5 }, "/to: must be a string"],
    ["a reference to a sibling property's schema", { properties: { a: { type: "string" }, b: { $ref: "#/properties/a" } } }, { b: 1 }, "/b: must be a string"],
    ["a keyword beside $ref (2020-12)", { $defs: { s: { type: "string" } }, $ref: "#/$defs/s", maxLength: 2 }, "abc", "/: must have at most 2 characters"],
    ["what $ref refuses beside a keyword", { $defs: { s: { type: "string" } }, $ref: "#/$defs/s", maxLength: 2 }, 5, "/: must be a string"],
    ["a tree with a bad leaf deep inside", TREE, chain(5, 42), "/children/0/children/0/children/0/children/0/name: must be a string"],
    [
      "a tree with an extra key in its second child",
      TREE,
      { name: "root", children: [chain(2), { name: "b", children: [{ name: "c", color: "red" }] }] },
      "/children/1/children/0/color: is not allowed",
    ],
  ])("%s", (_name, schema, value, message) => {
    expect(schemaViolation(schema, value)).toBe(message);
  });

  it("never repeats more than 60 characters of a key or an enum string", () => {
    const key = "k".repeat(200);
    expect(schemaViolation({ required: [key] }, {})).toBe(`/${"k".repeat(60)}…: is required`);
    const long = "v".repeat(200);
    expect(schemaViolation({ enum: [long] }, "x")).toBe(`/: must be one of "${"v".repeat(60)}…"`);
  });

  it("cuts a long enum list short", () => {
    const options = Array.from({ length: 50 }, (_, index) => `option-${index}`);
    const violation = schemaViolation({ enum: options }, "none");
    expect(violation).toMatch(/^\/: must be one of "option-0", "option-1", .*, …$/);
    expect(violation?.length).toBeLessThan(120);
  });
});

describe("schemaViolation limits", () => {
  it("answers an exploding anyOf with too complex, not after 2^20 evaluations", () => {
    const bomb = anyOfBomb(20);
    expect(jsonSchemaProblem(bomb)).toBeUndefined(); // well formed, so only the work limit stops it
    expect(schemaViolation(bomb, "x")).toBe("/: too complex to check");
  });

  it("answers the same explosion built from shared objects with too complex", () => {
    let schema: unknown = { type: "number" };
    for (let level = 0; level < 20; level++) schema = { anyOf: [schema, schema] };
    expect(schemaViolation(schema, "x")).toBe("/: too complex to check");
  });

  it("lets the same schema through when the first branch passes early", () => {
    expect(schemaViolation(anyOfBomb(20), 1)).toBeUndefined();
  });

  it("does not let not turn the work limit into a pass", () => {
    const { $defs, $ref } = anyOfBomb(20);
    expect(schemaViolation({ $defs, not: { $ref } }, "x")).toBe("/: too complex to check");
  });

  it("counts the work of long arrays", () => {
    const items = Array.from({ length: JSON_SCHEMA_LIMITS.work + 1 }, () => 1);
    expect(schemaViolation({ items: { type: "number" } }, items)).toBe("/: too complex to check");
  });

  it("stops a $ref cycle at the depth limit", () => {
    expect(schemaViolation({ $ref: "#" }, 1)).toBe("/: schema nesting too deep to check");
    const loop = { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, properties: { x: { $ref: "#/$defs/a" } } };
    expect(schemaViolation(loop, { x: 1 })).toBe("/x: schema nesting too deep to check");
  });

  it("does not let not turn the depth limit into a pass", () => {
    expect(schemaViolation({ not: { $ref: "#" } }, 1)).toBe("/: schema nesting too deep to check");
  });

  it("follows a tree 21 levels deep and stops at the 22nd, pointing into it", () => {
    // Three schema levels per tree level (node, children, items → $ref): 21 levels take 64.
    expect(JSON_SCHEMA_LIMITS.depth).toBe(64);
    expect(schemaViolation(TREE, chain(21))).toBeUndefined();
    expect(schemaViolation(TREE, chain(22))).toBe(`${"/children/0".repeat(21)}/name: schema nesting too deep to check`);
  });

  it("refuses rather than passes a $ref it cannot resolve (a schema jsonSchemaProblem never saw)", () => {
    expect(schemaViolation({ properties: { a: { $ref: "#/$defs/missing" } } }, { a: 1 })).toBe('/a: $ref "#/$defs/missing" does not resolve to a schema in this document');
    expect(schemaViolation({ not: { $ref: "https://example.com/s.json" } }, 1)).toBe('/: $ref "https://example.com/s.json" does not resolve to a schema in this document');
  });
});

describe("jsonSchemaProblem", () => {
  it.each<[string, unknown, string]>([
    [
      "pattern",
      { properties: { email: { type: "string", pattern: "^.+@.+$" } } },
      "/properties/email/pattern: is not supported: a regular expression from a sequence would run in the engine all tenants share; use enum, const, minLength or maxLength instead",
    ],
    ["a catastrophic pattern, never compiled", { pattern: "^(a+)+$" }, "/pattern: is not supported: a regular expression from a sequence would run in the engine all tenants share; use enum, const, minLength or maxLength instead"],
    [
      "patternProperties",
      { patternProperties: { "^x-": { type: "string" } } },
      "/patternProperties: is not supported: a regular expression from a sequence would run in the engine all tenants share; name the keys in properties, or use additionalProperties or propertyNames instead",
    ],
    ["unevaluatedProperties", { allOf: [{ unevaluatedProperties: false }] }, "/allOf/0/unevaluatedProperties: is not supported: use additionalProperties instead"],
    ["unevaluatedItems", { unevaluatedItems: false }, "/unevaluatedItems: is not supported: use items or additionalItems instead"],
    ["$dynamicRef", { $dynamicRef: "#node" }, "/$dynamicRef: is not supported: use $ref instead"],
    ["$recursiveRef", { $recursiveRef: "#" }, "/$recursiveRef: is not supported: use $ref instead"],
    ["a remote $ref", { properties: { a: { $ref: "https://example.com/s.json" } } }, '/properties/a/$ref: only local references ("#" or "#/…") are supported, not "https://example.com/s.json"'],
    ["a relative file $ref", { $ref: "other.json#/$defs/a" }, '/$ref: only local references ("#" or "#/…") are supported, not "other.json#/$defs/a"'],
    ["an anchor $ref", { $ref: "#node" }, '/$ref: only local references ("#" or "#/…") are supported, not "#node"'],
    ["a $ref to a missing definition", { $ref: "#/$defs/missing" }, '/$ref: "#/$defs/missing" does not resolve to a schema in this document'],
    ["a $ref to a map of schemas, not a schema", { properties: { a: true }, items: { $ref: "#/properties" } }, '/items/$ref: "#/properties" does not resolve to a schema in this document'],
    ["a $ref into a keyword that holds no schema", { enum: [{ type: "string" }], $ref: "#/enum/0" }, '/$ref: "#/enum/0" does not resolve to a schema in this document'],
    ["a $ref with a non-canonical index", { prefixItems: [true], $ref: "#/prefixItems/00" }, '/$ref: "#/prefixItems/00" does not resolve to a schema in this document'],
    ["a $ref that is not a string", { $ref: 5 }, "/$ref: must be a string"],
    ["a boolean exclusiveMinimum (draft 4)", { minimum: 1, exclusiveMinimum: true }, "/exclusiveMinimum: must be a number"],
    ["a string exclusiveMaximum", { exclusiveMaximum: "10" }, "/exclusiveMaximum: must be a number"],
    ["a multipleOf of 0", { multipleOf: 0 }, "/multipleOf: must be greater than 0"],
    ["dependentRequired with a string", { dependentRequired: { card: "billing" } }, "/dependentRequired: must be an object of string arrays"],
    ["dependentRequired as an array", { dependentRequired: ["card"] }, "/dependentRequired: must be an object of string arrays"],
    ["uniqueItems as a string", { uniqueItems: "yes" }, "/uniqueItems: must be a boolean"],
    ["a bad schema inside dependentSchemas", { dependentSchemas: { card: 5 } }, "/dependentSchemas/card: a schema must be an object or a boolean"],
    ["a bad schema inside $defs", { $defs: { a: { type: "int" } } }, '/$defs/a/type: "int" is not a JSON Schema type (null, boolean, object, array, number, integer, string)'],
  ])("refuses %s", (_name, schema, problem) => {
    expect(jsonSchemaProblem(schema)).toBe(problem);
  });

  it.each<[string, unknown]>([
    ["a boolean schema", false],
    ["the recursive tree", TREE],
    ["$defs and definitions references", { $defs: { a: { type: "string" } }, definitions: { b: { $ref: "#/$defs/a" } }, items: { $ref: "#/definitions/b" } }],
    ["a reference to the root", { items: { $ref: "#" } }],
    ["a reference defined after its use", { properties: { a: { $ref: "#/$defs/z" } }, $defs: { z: true } }],
    ["a reference with escaped and percent-encoded keys", { $defs: { "a/b~c": true, "d e": true }, allOf: [{ $ref: "#/$defs/a~1b~0c" }, { $ref: "#/$defs/d%20e" }] }],
    ["a reference to a tuple item and a prefixItems item", { items: [true], prefixItems: [false], anyOf: [{ $ref: "#/items/0" }, { $ref: "#/prefixItems/0" }] }],
    ["const of any JSON value", { properties: { a: { const: { nested: [1, null] } }, b: { const: null } } }],
    ["exclusive bounds, dependentRequired and uniqueItems well formed", { exclusiveMinimum: 0, exclusiveMaximum: 1.5, dependentRequired: { a: ["b", "c"] }, uniqueItems: true }],
    ["format and other annotations", { type: "string", format: "email", title: "Email", "x-ui": { pattern: "not a keyword here" } }],
    ["the exploding anyOf (only validation limits it)", anyOfBomb(20)],
  ])("accepts %s", (_name, schema) => {
    expect(jsonSchemaProblem(schema)).toBeUndefined();
  });
});
