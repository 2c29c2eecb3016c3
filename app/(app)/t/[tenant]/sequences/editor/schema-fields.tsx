"use client";

// Controls drawn from a FieldSpec (form-spec.ts): text, numbers, booleans, selects for enums,
// nested objects and lists, a variant picker for unions, and for any JSON value a control that
// builds one (value-control.tsx). Optional fields can be cleared (removed from the JSON); optional
// objects are switched on and off. A handler call's params get the form of a built-in's schema.
import { useId, type ReactNode } from "react";
import { fieldHint, fits, initialValue, paramsSpec, variantLabel, type FieldEntry, type FieldSpec } from "./form-spec.ts";
import { TemplateInput } from "./template-input";
import type { HintMode, TemplateHints } from "./template-hints.ts";
import { ValueControl } from "./value-control";

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

export interface FormContext {
  hints: TemplateHints;
  /** Handler names for the fields that name a handler. */
  handlerList: string;
  /** Strings here are templates (step params). */
  templated?: boolean;
  /** Inside a loop block: its condition and break_on read no outputs. */
  loop?: boolean;
}

/** Fields whose text is an expression (B.2) or a template (B.1) wherever they appear. */
const EXPRESSIONS = new Set(["when", "retry_if", "condition", "break_on"]);
const TEMPLATES = new Set(["cache_key", "collection"]);
const HANDLER_NAMES = new Set(["handler", "fallback_handler", "escalation_handler"]);

function textMode(name: string, context: FormContext): HintMode | "handler" | null {
  if (EXPRESSIONS.has(name)) return context.loop ? "loop-expression" : "expression";
  if (TEMPLATES.has(name) || context.templated) return "template";
  if (HANDLER_NAMES.has(name)) return "handler";
  return null;
}

/** A copy of `object` with `name` set, or removed for `undefined`. */
export function withField(object: unknown, name: string, value: unknown): Json {
  const next: Json = { ...(isRecord(object) ? object : {}) };
  if (value === undefined) delete next[name];
  else next[name] = value;
  return next;
}

function Hint({ id, text }: { id: string; text?: string }) {
  return text ? (
    <p id={id} className="muted form-hint">
      {text}
    </p>
  ) : null;
}

function Clear({ name, onClear }: { name: string; onClear(): void }) {
  return (
    <button type="button" className="btn btn-small seq-clear" onClick={onClear} aria-label={`Clear ${name}`} title={`Clear ${name}`}>
      ×
    </button>
  );
}

/** The fields of an object form; `skip` names fields drawn elsewhere. */
export function ObjectFields({ fields, value, onField, context, skip }: { fields: FieldEntry[]; value: unknown; onField(name: string, value: unknown): void; context: FormContext; skip?: ReadonlySet<string> }) {
  const object = isRecord(value) ? value : {};
  const handler = typeof object.handler === "string" ? object.handler : "";
  return (
    <>
      {fields
        .map((field) => (field.name === "params" && field.spec.kind === "json" && fields.some((f) => f.name === "handler") ? callParams(field, handler) : field))
        .filter((field) => !skip?.has(field.name) && field.spec.kind !== "blocks" && field.spec.kind !== "const")
        .map((field) => (
          <Field key={field.name} field={field} value={object[field.name]} onChange={(next) => onField(field.name, next)} context={context} />
        ))}
    </>
  );
}

/** The params of a handler call ({handler, params}): a built-in's own form, otherwise any value. */
function callParams(field: FieldEntry, handler: string): FieldEntry {
  const spec = paramsSpec(handler);
  return spec?.kind === "object" ? { ...field, spec, required: false } : field;
}

/** One named field: its control, its hint, and a way to clear it when it is optional. */
export function Field({ field, value, onChange, context }: { field: FieldEntry; value: unknown; onChange(value: unknown): void; context: FormContext }) {
  const id = useId();
  const { name, spec, required } = field;
  const hint = fieldHint(field, context.templated ?? false);
  if (spec.kind === "object") {
    const on = isRecord(value);
    if (!required && !on) {
      return (
        <div className="field">
          <label className="seq-check">
            <input type="checkbox" checked={false} aria-describedby={hint ? `${id}-hint` : undefined} onChange={() => onChange(initialValue(spec, name))} /> {name}
          </label>
          <Hint id={`${id}-hint`} text={hint} />
        </div>
      );
    }
    if (!required) {
      return (
        <fieldset className="seq-fieldset">
          <legend>
            <label className="seq-check">
              <input type="checkbox" checked={on} onChange={(e) => onChange(e.target.checked ? initialValue(spec, name) : undefined)} /> {name}
            </label>
          </legend>
          <Hint id={`${id}-hint`} text={hint} />
          {on && <ObjectFields fields={spec.fields} value={value} onField={(key, next) => onChange(withField(value, key, next))} context={context} />}
        </fieldset>
      );
    }
    return (
      <fieldset className="seq-fieldset">
        <legend>{name}</legend>
        <Hint id={`${id}-hint`} text={hint} />
        <ObjectFields fields={spec.fields} value={value} onField={(key, next) => onChange(withField(value, key, next))} context={context} />
      </fieldset>
    );
  }
  if (spec.kind === "boolean") {
    const checked = typeof value === "boolean" ? value : field.default === true;
    return (
      <div className="field">
        <label className="seq-check">
          <input type="checkbox" checked={checked} aria-describedby={hint ? `${id}-hint` : undefined} onChange={(e) => onChange(e.target.checked)} /> {name}
        </label>
        <Hint id={`${id}-hint`} text={hint} />
      </div>
    );
  }
  if (spec.kind === "array" || spec.kind === "record") {
    return (
      <fieldset className="seq-fieldset">
        <legend>{name}</legend>
        <Hint id={`${id}-hint`} text={hint} />
        {spec.kind === "array" ? (
          <ListControl name={name} spec={spec.items} value={value} onChange={onChange} context={context} />
        ) : (
          <RecordControl name={name} spec={spec.values} value={value} onChange={onChange} context={context} />
        )}
        {!required && value !== undefined && <Clear name={name} onClear={() => onChange(undefined)} />}
      </fieldset>
    );
  }
  return (
    <div className="field">
      <label htmlFor={id}>
        {name}
        {required ? " *" : ""}
      </label>
      <div className="seq-control">
        <Control id={id} name={name} spec={spec} value={value} onChange={onChange} context={context} describedBy={hint ? `${id}-hint` : undefined} optional={!required} />
        {!required && value !== undefined && <Clear name={name} onClear={() => onChange(undefined)} />}
      </div>
      <Hint id={`${id}-hint`} text={hint} />
    </div>
  );
}

interface ControlProps {
  id: string;
  name: string;
  spec: FieldSpec;
  value: unknown;
  onChange(value: unknown): void;
  context: FormContext;
  describedBy?: string;
  optional?: boolean;
}

/** The input for one value (no label). */
function Control({ id, name, spec, value, onChange, context, describedBy, optional }: ControlProps): ReactNode {
  switch (spec.kind) {
    case "text": {
      const mode = textMode(name, context);
      const text = typeof value === "string" ? value : "";
      if (mode === "handler") {
        return <input id={id} className="input" value={text} list={context.handlerList} aria-describedby={describedBy} onChange={(e) => onChange(e.target.value)} />;
      }
      if (mode) return <TemplateInput id={id} value={text} mode={mode} hints={context.hints} describedBy={describedBy} onChange={onChange} />;
      return <input id={id} className="input" value={text} aria-describedby={describedBy} onChange={(e) => onChange(e.target.value)} />;
    }
    case "number":
      return (
        <input
          id={id}
          className="input"
          type="number"
          min={spec.min}
          max={spec.max}
          step={spec.integer ? 1 : "any"}
          value={typeof value === "number" ? String(value) : ""}
          aria-describedby={describedBy}
          onChange={(e) => onChange(e.target.value.trim() === "" ? undefined : Number(e.target.value))}
        />
      );
    case "enum":
      return (
        <select id={id} className="select" value={typeof value === "string" ? value : ""} aria-describedby={describedBy} onChange={(e) => onChange(e.target.value === "" ? undefined : e.target.value)}>
          {(optional || typeof value !== "string") && <option value="">(default)</option>}
          {spec.options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      );
    case "boolean":
      return <input id={id} type="checkbox" checked={value === true} aria-describedby={describedBy} onChange={(e) => onChange(e.target.checked)} />;
    case "union":
      return <UnionControl id={id} name={name} spec={spec} value={value} onChange={onChange} context={context} describedBy={describedBy} />;
    case "object":
      return <ObjectFields fields={spec.fields} value={value} onField={(key, next) => onChange(withField(value, key, next))} context={context} />;
    case "array":
      return <ListControl name={name} spec={spec.items} value={value} onChange={onChange} context={context} />;
    case "record":
      return <RecordControl name={name} spec={spec.values} value={value} onChange={onChange} context={context} />;
    default:
      return <ValueControl id={id} name={name} value={value} onChange={onChange} templated={context.templated} hints={context.hints} describedBy={describedBy} />;
  }
}

function UnionControl({ id, name, spec, value, onChange, context, describedBy }: ControlProps & { spec: Extract<FieldSpec, { kind: "union" }> }) {
  const found = spec.variants.findIndex((variant) => fits(variant, value));
  const index = found === -1 ? 0 : found;
  const variant = spec.variants[index]!;
  return (
    <div className="seq-union">
      <select className="select" aria-label={`${name}: kind`} value={value === undefined ? "" : String(index)} onChange={(e) => onChange(e.target.value === "" ? undefined : initialValue(spec.variants[Number(e.target.value)]!))}>
        <option value="">(default)</option>
        {spec.variants.map((option, at) => (
          <option key={at} value={at}>
            {variantLabel(option)}
          </option>
        ))}
      </select>
      {value !== undefined && <Control id={id} name={name} spec={variant} value={value} onChange={onChange} context={context} describedBy={describedBy} />}
    </div>
  );
}

function ListControl({ name, spec, value, onChange, context }: { name: string; spec: FieldSpec; value: unknown; onChange(value: unknown): void; context: FormContext }) {
  const items = Array.isArray(value) ? value : [];
  const set = (index: number, next: unknown) => onChange(items.map((item, at) => (at === index ? next : item)));
  return (
    <div className="seq-list">
      {items.map((item, index) => (
        <div key={index} className="seq-list-item">
          <span className="muted">{index + 1}.</span>
          <div className="seq-list-body">
            <Control id={`${name}-${index}`} name={name} spec={spec} value={item} onChange={(next) => set(index, next)} context={context} />
          </div>
          <button type="button" className="btn btn-small" aria-label={`Remove ${name} ${index + 1}`} onClick={() => onChange(items.filter((_, at) => at !== index))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" className="btn btn-small" onClick={() => onChange([...items, initialValue(spec)])}>
        Add to {name}
      </button>
    </div>
  );
}

function RecordControl({ name, spec, value, onChange, context }: { name: string; spec: FieldSpec; value: unknown; onChange(value: unknown): void; context: FormContext }) {
  const entries = Object.entries(isRecord(value) ? value : {});
  const rebuild = (next: [string, unknown][]) => onChange(Object.fromEntries(next));
  return (
    <div className="seq-list">
      {entries.map(([key, item], index) => (
        <div key={index} className="seq-list-item">
          <input
            className="input seq-key"
            aria-label={`${name} name ${index + 1}`}
            value={key}
            onChange={(e) => rebuild(entries.map((entry, at) => (at === index ? [e.target.value, entry[1]] : entry)))}
          />
          <div className="seq-list-body">
            <Control id={`${name}-${index}`} name={key} spec={spec} value={item} onChange={(next) => rebuild(entries.map((entry, at) => (at === index ? [entry[0], next] : entry)))} context={context} />
          </div>
          <button type="button" className="btn btn-small" aria-label={`Remove ${name} ${key || index + 1}`} onClick={() => rebuild(entries.filter((_, at) => at !== index))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" className="btn btn-small" onClick={() => rebuild([...entries, [entries.some(([key]) => key === "") ? `key${entries.length + 1}` : "", initialValue(spec)]])}>
        Add to {name}
      </button>
    </div>
  );
}
