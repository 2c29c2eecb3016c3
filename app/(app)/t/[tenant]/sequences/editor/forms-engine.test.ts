// What the editor's forms write for the fields that used to be JSON (input_schema, output_schema,
// sla, interceptors, saga steps, the cleanup trees), sent through the engine's own parser: the
// engine must accept it and read back exactly what the form set.
import { describe, expect, it } from "vitest";
import { schemaViolation } from "../../../../../../engine/sequence/json-schema.ts";
import { Sequence } from "../../../../../../engine/sequence/schema.ts";
import { parseSequence } from "../../../../../../engine/sequence/validate.ts";
import { initialValue, sequenceField, type FieldEntry } from "./form-spec.ts";
import { addBlock, addSagaStep, newBlock, setSagaPart, setSagaStepId, updateBlock, updateSequence, type SequenceDoc } from "./model.ts";
import { schemaOf } from "./schema-builder.ts";
import { withField } from "./schema-fields";
import { CLEANUP, FORM_FIELDS } from "./sequence-settings";

const base = (): SequenceDoc => ({
  id: "0190f8a4-0000-7000-8000-000000000001",
  tenant_id: "t",
  namespace: "default",
  name: "s",
  version: 1,
  blocks: [{ type: "step", id: "first", handler: "log", params: null }],
  created_at: "2026-01-01T00:00:00.000Z",
});

const field = (name: string): FieldEntry => {
  const found = sequenceField(name);
  if (!found) throw new Error(`no field ${name}`);
  return found;
};
const nested = (entry: FieldEntry, name: string): FieldEntry => {
  if (entry.spec.kind !== "object") throw new Error(`${entry.name} is not an object`);
  return entry.spec.fields.find((f) => f.name === name)!;
};

describe("the editor's forms, through the engine's parser", () => {
  it("input_schema and output_schema from the schema builder", () => {
    const input = schemaOf([{ name: "email", type: "string", required: true }, { name: "age", type: "integer", required: false }]);
    const output = schemaOf([{ name: "ok", type: "boolean", required: true }]);
    let doc = updateSequence(base(), { input_schema: input });
    doc = updateBlock(doc, ["blocks", 0], { output_schema: output });
    const { sequence } = parseSequence(doc);
    expect(sequence.input_schema).toEqual(input);
    expect(sequence.blocks[0]).toMatchObject({ output_schema: output });
    // And it checks what it says it checks.
    expect(schemaViolation(input, { email: "a@b.c", age: 3 })).toBeUndefined();
    expect(schemaViolation(input, { age: 3 })).toBeDefined();
    expect(schemaViolation(input, { email: "a@b.c", age: "3" })).toBeDefined();
  });

  it("sla and interceptors from the forms generated from the engine's schema", () => {
    const sla = field("sla");
    const interceptors = field("interceptors");
    // What the forms write: the switch on (initialValue), then the fields typed in (withField).
    const slaValue = withField(withField(initialValue(sla.spec, "sla"), "max_runtime", 60_000), "max_step_runtime", 5000);
    const beforeStep = withField(initialValue(nested(interceptors, "before_step").spec), "handler", "log");
    const onFailure = withField(withField(initialValue(nested(interceptors, "on_failure").spec), "handler", "notify"), "params", "oops");
    const interceptorsValue = withField(withField(initialValue(interceptors.spec, "interceptors"), "before_step", beforeStep), "on_failure", onFailure);
    const { sequence } = parseSequence(updateSequence(base(), { sla: slaValue, interceptors: interceptorsValue }));
    expect(sequence.sla).toEqual({ max_runtime: 60_000, max_step_runtime: 5000 });
    expect(sequence.interceptors).toEqual({ before_step: { handler: "log", params: null }, on_failure: { handler: "notify", params: "oops" } });
    // Every interceptor of A.1 has its control.
    expect(interceptors.spec.kind === "object" && interceptors.spec.fields.map((f) => f.name)).toEqual(["before_step", "after_step", "on_signal", "on_complete", "on_failure"]);
  });

  it("status from its select: the engine's own statuses, the default left out", () => {
    const status = field("status");
    expect(status.spec).toEqual({ kind: "enum", options: ["draft", "staging", "production", "unpublished"] });
    expect(status.required).toBe(false);
    expect(parseSequence(updateSequence(base(), { status: "staging" })).sequence.status).toBe("staging");
    expect(parseSequence(base()).sequence.status).toBe("production");
  });

  it("every field of the sequence (A.1) has its place in the editor", () => {
    const placed = new Set<string>([
      // Filled in by the editor: a new id and created_at on save, the tenant from the page.
      "id", "tenant_id", "created_at",
      // The row above the canvas.
      "name", "namespace", "version",
      // The canvas: the main tree and the cleanup trees (tabs).
      "blocks", ...CLEANUP.map((cleanup) => cleanup.tree),
      // The schema builder, then the generated forms.
      "input_schema", ...FORM_FIELDS,
      // The version list's Deprecate.
      "deprecated",
    ]);
    expect(Object.keys(Sequence.shape).filter((name) => !placed.has(name))).toEqual([]);
    for (const name of FORM_FIELDS) expect(sequenceField(name), name).not.toBeNull();
  });

  it("saga steps, with an action, a compensation and a step id set in the inspector", () => {
    let doc: SequenceDoc = { ...base(), blocks: [newBlock("saga", "book")] };
    doc = addSagaStep(doc, ["blocks", 0]);
    doc = addSagaStep(doc, ["blocks", 0]);
    doc = setSagaStepId(doc, ["blocks", 0], 0, "reserve");
    doc = setSagaPart(doc, ["blocks", 0], 0, "compensation", "step");
    doc = setSagaPart(doc, ["blocks", 0], 1, "action", "sub_sequence");
    doc = updateBlock(doc, ["blocks", 0, "steps", 0, "action"], { handler: "log" });
    doc = updateBlock(doc, ["blocks", 0, "steps", 0, "compensation"], { handler: "noop" });
    doc = updateBlock(doc, ["blocks", 0, "steps", 1, "action"], { sequence_name: "child" });
    const { sequence } = parseSequence(doc);
    const [saga] = sequence.blocks;
    expect(saga).toMatchObject({
      type: "saga",
      steps: [
        { id: "reserve", action: { type: "step", id: "step_1", handler: "log" }, compensation: { type: "step", id: "step_3", handler: "noop" } },
        { id: "saga_step_2", action: { type: "sub_sequence", id: "step_2", sequence_name: "child" } },
      ],
    });
  });

  it("cleanup trees built like the main tree", () => {
    let doc = updateSequence(base(), { on_failure: [], on_cancel: [] });
    ({ doc } = addBlock(doc, "step", { into: ["on_failure"] }));
    ({ doc } = addBlock(doc, "try_catch", { into: ["on_cancel"], index: 0 }));
    ({ doc } = addBlock(doc, "step", { into: ["on_cancel", 0, "try_block"] }));
    doc = updateBlock(doc, ["on_failure", 0], { handler: "log" });
    doc = updateBlock(doc, ["on_cancel", 0, "try_block", 0], { handler: "noop" });
    const { sequence } = parseSequence(doc);
    expect(sequence.on_failure).toMatchObject([{ type: "step", id: "step_1", handler: "log" }]);
    expect(sequence.on_cancel).toMatchObject([{ type: "try_catch", id: "try_catch_1", try_block: [{ type: "step", id: "step_2", handler: "noop" }], catch_block: [] }]);
    // Switched on and left empty is accepted too; switched off is absent.
    expect(parseSequence(updateSequence(base(), { on_failure: [] })).sequence.on_failure).toEqual([]);
    expect(parseSequence(updateSequence(doc, { on_failure: undefined })).sequence.on_failure).toBeUndefined();
  });
});
