"use client";

// The form for the selected block: every field of its wire-format A schema (form-spec.ts), the
// params form of a built-in handler, and the arms a fork can gain or lose. Every change goes
// straight into the model (and so into validation); JSON fields are checked when they lose focus.
import { useId } from "react";
import { blockSpec } from "./form-spec.ts";
import { getAt, type JsonBlock } from "./model.ts";
import { JsonField } from "./json-field";
import { SagaSteps, type DocEdit } from "./saga-steps";
import { SchemaBuilder } from "./schema-builder-field";
import { ParamsFields } from "./params-fields";
import { ObjectFields, type FormContext } from "./schema-fields";
import { TemplateInput } from "./template-input";
import { NO_HINTS, type TemplateHints } from "./template-hints.ts";

type Fields = Record<string, unknown>;

export interface InspectorProps {
  block: JsonBlock;
  problems: string[];
  handlers: { builtins: string[]; seen: string[] };
  /** Names templates and expressions may use here. */
  hints?: TemplateHints;
  onChange(fields: Fields): void;
  onAddBranch(): void;
  onRemoveBranch(index: number): void;
  /** A change that needs the whole document (saga steps take ids unique in it). */
  onEdit(edit: DocEdit): void;
}

const text = (value: unknown) => (typeof value === "string" ? value : "");
const numberText = (value: unknown) => (typeof value === "number" ? String(value) : "");
const toNumber = (value: string) => (value.trim() === "" ? undefined : Number(value));
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function TextField({ label, value, onChange, list, placeholder }: { label: string; value: unknown; onChange(value: string): void; list?: string; placeholder?: string }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} className="input" value={text(value)} list={list} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />
    </div>
  );
}

function NumberField({ label, value, onChange }: { label: string; value: unknown; onChange(value: number | undefined): void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} className="input" type="number" min={0} value={numberText(value)} onChange={(e) => onChange(toNumber(e.target.value))} />
    </div>
  );
}

function CheckField({ label, checked, onChange }: { label: string; checked: boolean; onChange(checked: boolean): void }) {
  return (
    <label className="seq-check">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} /> {label}
    </label>
  );
}

function RouteCondition({ index, value, hints, onChange }: { index: number; value: unknown; hints: TemplateHints; onChange(value: string): void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{`Route ${index + 1} condition`}</label>
      <TemplateInput id={id} value={text(value)} mode="expression" hints={hints} onChange={onChange} placeholder='data.tier == "gold"' />
    </div>
  );
}

function BranchList({ block, hints, onChange, onAddBranch, onRemoveBranch }: Omit<InspectorProps, "problems" | "handlers" | "onEdit">) {
  if (block.type === "parallel" || block.type === "race") {
    const branches = Array.isArray(block.branches) ? block.branches : [];
    return (
      <fieldset className="seq-fieldset">
        <legend>Branches</legend>
        <ul className="seq-branches">
          {branches.map((_, index) => (
            <li key={index}>
              branch {index + 1}{" "}
              <button type="button" className="btn btn-small" onClick={() => onRemoveBranch(index)} aria-label={`Remove branch ${index + 1}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
        <button type="button" className="btn btn-small" onClick={onAddBranch}>
          Add branch
        </button>
      </fieldset>
    );
  }
  if (block.type === "router") {
    const routes = Array.isArray(block.routes) ? (block.routes as unknown[]) : [];
    return (
      <fieldset className="seq-fieldset">
        <legend>Routes (the first truthy condition wins)</legend>
        {routes.map((route, index) => (
          <div key={index} className="seq-row">
            <RouteCondition
              index={index}
              value={getAt(route, ["condition"])}
              hints={hints ?? NO_HINTS}
              onChange={(condition) => onChange({ routes: routes.map((r, i) => (i === index && isRecord(r) ? { ...r, condition } : r)) })}
            />
            <button type="button" className="btn btn-small" onClick={() => onRemoveBranch(index)} aria-label={`Remove route ${index + 1}`}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" className="btn btn-small" onClick={onAddBranch}>
          Add route
        </button>
        <CheckField label="Has a default branch" checked={Array.isArray(block.default)} onChange={(on) => onChange({ default: on ? [] : null })} />
      </fieldset>
    );
  }
  if (block.type === "a_b_split") {
    const variants = Array.isArray(block.variants) ? (block.variants as unknown[]) : [];
    const set = (index: number, fields: Fields) => onChange({ variants: variants.map((v, i) => (i === index && isRecord(v) ? { ...v, ...fields } : v)) });
    return (
      <fieldset className="seq-fieldset">
        <legend>Variants</legend>
        {variants.map((variant, index) => (
          <div key={index} className="seq-row">
            <TextField label={`Variant ${index + 1} name`} value={getAt(variant, ["name"])} onChange={(name) => set(index, { name })} />
            <NumberField label={`Variant ${index + 1} weight`} value={getAt(variant, ["weight"])} onChange={(weight) => set(index, { weight })} />
            <button type="button" className="btn btn-small" onClick={() => onRemoveBranch(index)} aria-label={`Remove variant ${index + 1}`}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" className="btn btn-small" onClick={onAddBranch}>
          Add variant
        </button>
      </fieldset>
    );
  }
  return null;
}

/** Fields drawn above (the block id), by BranchList or by the step's head rather than by the schema form. */
const DRAWN_ELSEWHERE: Record<string, ReadonlySet<string>> = {
  step: new Set(["id", "handler", "params", "output_schema"]),
  saga: new Set(["id", "steps"]),
  router: new Set(["id", "routes", "default"]),
  a_b_split: new Set(["id", "variants"]),
  ab_split: new Set(["id", "variants"]),
};
const NOTHING: ReadonlySet<string> = new Set(["id"]);

function TypeFields(props: Omit<InspectorProps, "problems"> & { context: FormContext }) {
  const { block, onChange, context } = props;
  const spec = blockSpec(block.type);
  return (
    <>
      {block.type === "step" && <ParamsFields block={block} context={context} onChange={onChange} />}
      {spec?.kind === "object" && (
        <ObjectFields fields={spec.fields} value={block} onField={(name, value) => onChange({ [name]: value })} context={context} skip={DRAWN_ELSEWHERE[block.type] ?? NOTHING} />
      )}
      {block.type === "step" && (
        <SchemaBuilder
          name="output_schema"
          hint="The handler's output is checked against it; an output that does not match fails the step for good."
          value={block.output_schema}
          onChange={(output_schema) => onChange({ output_schema })}
        />
      )}
      {block.type === "saga" && <SagaSteps block={block} onEdit={props.onEdit} />}
      {block.type === "try_catch" && (
        <CheckField label="Has a finally block" checked={Array.isArray(block.finally_block)} onChange={(on) => onChange({ finally_block: on ? [] : null })} />
      )}
      <BranchList {...props} />
    </>
  );
}

export function Inspector(props: InspectorProps) {
  const { block, problems, onChange, handlers } = props;
  const handlerList = useId();
  const context: FormContext = { hints: props.hints ?? NO_HINTS, handlerList, loop: block.type === "loop" };
  return (
    <div className="seq-inspector-form">
      <datalist id={handlerList}>
        {[...handlers.builtins, ...handlers.seen].map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <h3>
        {block.type} <span className="muted">{block.id}</span>
      </h3>
      {problems.length > 0 && (
        <ul className="alert alert-error seq-problems" aria-label="Problems with this block">
          {problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      )}
      <TextField label="Block id" value={block.id} onChange={(id) => onChange({ id })} />
      <TypeFields {...props} context={context} />
      <details className="seq-raw">
        <summary>Block JSON (every field)</summary>
        <JsonField
          label="Block JSON"
          value={block}
          onChange={(value) => {
            if (!isRecord(value)) return;
            const fields: Fields = { ...value };
            for (const key of Object.keys(block)) if (!(key in value)) fields[key] = undefined;
            onChange(fields);
          }}
        />
      </details>
    </div>
  );
}
