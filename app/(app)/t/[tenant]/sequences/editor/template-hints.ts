// What a template or expression field can offer while typing: `context.data.<key>` for the keys
// the sequence declares (input_schema) and the for_each variables around the block, the outputs
// of the blocks that run before it, and the functions of wire-format B. No React (tested alone).
import { EXPRESSION_FUNCTION_NAMES, TEMPLATE_FILTERS, TEMPLATE_FUNCTIONS } from "../../../../../../engine/sequence/template-check.ts";
import { isRecord } from "../../../../../_components/sequence-graph/arms.ts";
import { allBlocks, samePath, TREES, type Path, type SequenceDoc } from "./model.ts";

export interface TemplateHints {
  dataKeys: string[];
  /** Ids of the blocks before this one in execution order (their outputs exist when it runs). */
  outputs: string[];
}

export const NO_HINTS: TemplateHints = { dataKeys: [], outputs: [] };

const isPrefix = (prefix: Path, path: Path) => prefix.length < path.length && prefix.every((key, index) => key === path[index]);

export function templateHints(doc: SequenceDoc, path: Path): TemplateHints {
  const schema = doc.input_schema;
  const declared = isRecord(schema) && isRecord(schema.properties) ? Object.keys(schema.properties) : [];
  const tree = TREES.find((name) => name === path[0]) ?? "blocks";
  const blocks = allBlocks(doc, tree);
  const at = blocks.findIndex((entry) => samePath(entry.path, path));
  const ancestors = blocks.filter((entry) => isPrefix(entry.path, path));
  const itemVars = ancestors
    .filter(({ block }) => block.type === "for_each")
    .map(({ block }) => (typeof block.item_var === "string" && block.item_var ? block.item_var : "item"));
  const outputs = (at === -1 ? [] : blocks.slice(0, at))
    .filter((entry) => !ancestors.includes(entry))
    .map(({ block }) => String(block.id))
    .filter((id) => id !== "");
  return { dataKeys: [...new Set([...declared, ...itemVars])], outputs: [...new Set(outputs)] };
}

export type HintMode = "template" | "expression" | "loop-expression";

export interface Completion {
  /** The range of the value the chosen option replaces. */
  from: number;
  to: number;
  options: { label: string; insert: string }[];
}

function paths(hints: TemplateHints, mode: HintMode): string[] {
  const data = hints.dataKeys.map((key) => `context.data.${key}`);
  // Loop conditions and break_on read no outputs (B.2 visibility).
  const outputs = mode === "loop-expression" ? [] : hints.outputs.map((id) => `outputs.${id}`);
  return [...data, "context.data.", ...outputs, "instance_id", "config."];
}

/** What to offer at the caret, or null when it is not inside a `{{ … }}` (templates) or a name (expressions). */
export function completionAt(value: string, caret: number, mode: HintMode, hints: TemplateHints): Completion | null {
  const before = value.slice(0, caret);
  const matches = (options: readonly string[], typed: string) => options.filter((option) => option.startsWith(typed) && option !== typed);
  if (mode === "template") {
    const open = before.lastIndexOf("{{");
    if (open === -1 || before.indexOf("}}", open) !== -1) return null;
    const inside = before.slice(open + 2);
    const closed = value.slice(caret).trimStart().startsWith("}}");
    const pipe = inside.lastIndexOf("|");
    if (pipe !== -1) {
      const typed = inside.slice(pipe + 1).trimStart();
      const options = matches(TEMPLATE_FILTERS, typed).map((filter) => ({ label: filter, insert: filter.replace("(…)", "()") }));
      return options.length ? { from: caret - typed.length, to: caret, options } : null;
    }
    const typed = inside.trimStart();
    const options = matches([...paths(hints, mode), ...TEMPLATE_FUNCTIONS.map((fn) => `${fn}(`)], typed).map((path) => ({
      label: path,
      insert: path.endsWith(".") || path.endsWith("(") || closed ? path : `${path} }}`,
    }));
    return options.length ? { from: caret - typed.length, to: caret, options } : null;
  }
  const typed = /[A-Za-z_][A-Za-z0-9_.]*$/.exec(before)?.[0] ?? "";
  if (typed === "") return null;
  const options = matches([...paths(hints, mode), ...EXPRESSION_FUNCTION_NAMES.map((fn) => `${fn}(`)], typed).map((option) => ({ label: option, insert: option }));
  return options.length ? { from: caret - typed.length, to: caret, options } : null;
}
