// Autocomplete in template and expression fields: which names are offered where, and what is inserted.
import { describe, expect, it } from "vitest";
import { completionAt, templateHints } from "./template-hints.ts";
import type { SequenceDoc } from "./model.ts";

const step = (id: string) => ({ type: "step", id, handler: "noop", params: null });
const doc: SequenceDoc = {
  input_schema: { type: "object", properties: { email: { type: "string" }, items: { type: "array" } } },
  blocks: [
    step("first"),
    { type: "for_each", id: "each", collection: "items", item_var: "order", body: [step("inner_a"), step("inner_b")] },
    step("last"),
  ],
};

describe("templateHints", () => {
  it("offers declared data keys, the for_each variable around the block and the outputs before it", () => {
    expect(templateHints(doc, ["blocks", 1, "body", 1])).toEqual({ dataKeys: ["email", "items", "order"], outputs: ["first", "inner_a"] });
  });

  it("a block after a loop sees the loop's blocks but not its variable", () => {
    expect(templateHints(doc, ["blocks", 2])).toEqual({ dataKeys: ["email", "items"], outputs: ["first", "each", "inner_a", "inner_b"] });
  });
});

describe("completionAt", () => {
  const hints = { dataKeys: ["email"], outputs: ["fetch"] };
  const labels = (value: string, mode: "template" | "expression" | "loop-expression" = "template", caret = value.length) =>
    completionAt(value, caret, mode, hints)?.options.map((option) => option.label) ?? null;

  it("offers paths after {{ and closes the braces on insert", () => {
    expect(labels("Hi {{ ")).toEqual(["context.data.email", "context.data.", "outputs.fetch", "instance_id", "config.", "json(", "len("]);
    const completion = completionAt("Hi {{ con", 9, "template", hints)!;
    expect(completion).toMatchObject({ from: 6, to: 9 });
    expect(completion.options[0]).toEqual({ label: "context.data.email", insert: "context.data.email }}" });
  });

  it("offers filters after |", () => {
    expect(labels("{{ context.data.email | up")).toEqual(["upper"]);
    expect(completionAt("{{ x | repl", 11, "template", hints)!.options).toEqual([{ label: "replace(…)", insert: "replace()" }]);
  });

  it("offers nothing outside a placeholder", () => {
    expect(labels("plain")).toBeNull();
    expect(labels("{{ a }} b")).toBeNull();
  });

  it("expressions: names and functions without braces; loop conditions see no outputs", () => {
    expect(labels("out", "expression")).toEqual(["outputs.fetch"]);
    expect(labels("out", "loop-expression")).toBeNull();
    expect(labels("len(items) > 0 && sta", "expression")).toEqual(["starts_with("]);
  });
});
