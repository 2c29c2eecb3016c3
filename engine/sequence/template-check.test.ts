// The editor's template and expression checks give the engine's own messages: the same text
// resolve() throws when the step runs, and nothing for text that can only fail on data.
import { describe, expect, it } from "vitest";
import { AppError } from "../errors.ts";
import { expressionProblem, templateProblem, TEMPLATE_FILTERS } from "./template-check.ts";
import { resolveTemplateString } from "./template.ts";

const scope = { context: { data: { x: "hi" }, config: {} }, outputs: {}, instanceId: "i", runtime: {}, state: {} };

function engineMessage(text: string): string | null {
  try {
    resolveTemplateString(text, scope);
    return null;
  } catch (error) {
    return (error as AppError).message;
  }
}

describe("templateProblem", () => {
  it.each([
    "{{ foo.x }}",
    "a {{ data.x | nope(1) }}",
    "{{ data.x | truncate() }}",
    "{{ }}",
    "{{ data.x | hash('md5') }}",
    "{{ context.bad }}",
    "{{ data.x | 'lit' | lower | 7 }}",
  ])("%s: the engine's message", (text) => {
    const problem = templateProblem(text);
    expect(problem).toMatch(/^template error: /);
    expect(problem).toBe(engineMessage(text));
  });

  it.each(["plain text", "{{ data.x }}", "{{context.data.items.0}}", "Hi {{ data.name | upper }}!", "{{ outputs.s1.body | json(data.x) }}", "{{ data.x | hash('sha256') | base64 }}", "{{ unclosed"])(
    "%s: no problem",
    (text) => {
      expect(templateProblem(text)).toBeNull();
    },
  );

  it("offers B.1's filters", () => {
    expect(TEMPLATE_FILTERS).toEqual(expect.arrayContaining(["upper", "base64_decode", "replace(…)", "default(…)", "hash(…)"]));
  });
});

describe("expressionProblem", () => {
  it.each(["true", 'context.data.mode == "B"', "count * 2 > threshold", "len(items) > 0 && x in [1, 2]"])("%s parses", (text) => {
    expect(expressionProblem(text)).toBeNull();
  });

  it.each([
    ["a ==", "expression error: unexpected end of expression at position 4 in `a ==`"],
    ["(x", "expression error: expected `)`, found end of expression at position 2 in `(x`"],
  ])("%s: %s", (text, message) => {
    expect(expressionProblem(text)).toBe(message);
  });
});
