"use client";

// The sequence's own fields (wire-format A.1) besides its name and blocks: input_schema (the
// schema builder), status, sla and interceptors (forms from the engine's schema), and the cleanup trees,
// switched on here and edited on the canvas like the main tree.
import { useId } from "react";
import { sequenceField } from "./form-spec.ts";
import type { SequenceDoc, Tree } from "./model.ts";
import { SchemaBuilder } from "./schema-builder-field";
import { Field, type FormContext } from "./schema-fields";
import { NO_HINTS } from "./template-hints.ts";

/** The sequence's fields given a form generated from the engine's Sequence schema. */
export const FORM_FIELDS = ["status", "sla", "interceptors"] as const;

export const CLEANUP: { tree: Exclude<Tree, "blocks">; when: string }[] = [
  { tree: "on_failure", when: "runs, best effort, when an instance ends failed" },
  { tree: "on_cancel", when: "runs, best effort, when an instance ends cancelled" },
];

export interface SequenceSettingsProps {
  doc: SequenceDoc;
  handlers: string[];
  /** Sets (or with `undefined` removes) fields of the sequence. */
  onChange(fields: Record<string, unknown>): void;
  onShowTree(tree: Tree): void;
}

export function SequenceSettings({ doc, handlers, onChange, onShowTree }: SequenceSettingsProps) {
  const handlerList = useId();
  const context: FormContext = { hints: NO_HINTS, handlerList };
  const fields = FORM_FIELDS.map(sequenceField).filter((field) => field !== null);
  return (
    <div className="seq-inspector-form" role="group" aria-label="Sequence settings">
      <datalist id={handlerList}>
        {handlers.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <h3>Sequence</h3>
      <p className="muted form-hint">Select a block on the canvas or in the outline to edit it.</p>
      <SchemaBuilder
        name="input_schema"
        hint="Checked against context.data when an instance is created; the Run form is made from it."
        value={doc.input_schema}
        onChange={(input_schema) => onChange({ input_schema })}
      />
      {fields.map((field) => (
        <Field key={field.name} field={field} value={doc[field.name]} onChange={(value) => onChange({ [field.name]: value })} context={context} />
      ))}
      <fieldset className="seq-fieldset">
        <legend>Cleanup trees</legend>
        {CLEANUP.map(({ tree, when }) => {
          const on = Array.isArray(doc[tree]);
          return (
            <div key={tree} className="seq-row">
              <label className="seq-check">
                <input
                  type="checkbox"
                  checked={on}
                  onChange={(e) => {
                    onChange({ [tree]: e.target.checked ? [] : undefined });
                    onShowTree(e.target.checked ? tree : "blocks");
                  }}
                />{" "}
                {tree}: {when}
              </label>
              {on && (
                <button type="button" className="btn btn-small" onClick={() => onShowTree(tree)}>
                  Show {tree}
                </button>
              )}
            </div>
          );
        })}
      </fieldset>
    </div>
  );
}
