// What Run sends and what stops it: a form drawn from the sequence's input_schema when it is an
// object schema, else free JSON; checked before submitting with the engine's own validator.
import { inputProblem } from "../../../../../../engine/sequence/input-schema.ts";
import { specOf, type FieldEntry } from "./form-spec.ts";

/** The form's fields for `schema`, or null when it is to be written as JSON. */
export function runFields(schema: unknown): FieldEntry[] | null {
  if (schema === null || schema === undefined) return null;
  const spec = specOf(schema);
  return spec.kind === "object" ? spec.fields : null;
}

/**
 * Why `input` may not be run, or undefined. A required field left empty (absent, or an empty
 * text) is named first: JSON Schema's `required` is content with "", a person filling a form is not.
 */
export function runInputProblem(schema: unknown, fields: FieldEntry[] | null, input: unknown): string | undefined {
  if (fields) {
    const values = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
    const empty = fields.filter((field) => field.required && (values[field.name] === undefined || values[field.name] === ""));
    if (empty.length > 0) return `Fill in ${empty.map((field) => field.name).join(", ")}: required by the input schema.`;
  }
  return inputProblem(schema, input);
}
