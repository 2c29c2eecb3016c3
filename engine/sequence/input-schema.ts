// A sequence's `input_schema` (wire-format A.1): a new instance's `context.data` must match it.
// The API answers a mismatch with 422 and creates nothing; a child spawned by a running instance
// (sub_sequence, emit_event) fails the spawning step instead.
import { schemaViolation } from "./json-schema.ts";

/** What is wrong with `data` for a sequence whose input_schema is `schema` (none: anything goes). */
export function inputProblem(schema: unknown, data: unknown): string | undefined {
  if (schema === null || schema === undefined) return undefined;
  const violation = schemaViolation(schema, data);
  return violation && `context.data does not match the sequence's input_schema: ${violation}`;
}
