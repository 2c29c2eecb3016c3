"use client";

// A control for any JSON value (value-kinds.ts): pick its kind, then fill it in; objects and
// lists hold further values, each with its own control.
import { TemplateInput } from "./template-input";
import type { TemplateHints } from "./template-hints.ts";
import { convert, freshKey, KIND_LABELS, kindOf, renameKey, VALUE_KINDS, type ValueKind } from "./value-kinds.ts";

export interface ValueControlProps {
  id: string;
  /** Names the value in the controls' labels. */
  name: string;
  value: unknown;
  onChange(value: unknown): void;
  /** Strings are templates (B.1). */
  templated?: boolean;
  hints: TemplateHints;
  describedBy?: string;
  /** How a value not given yet is shown, ready to be filled in (text unless said). */
  defaultKind?: ValueKind;
}

type Json = Record<string, unknown>;

export function ValueControl(props: ValueControlProps) {
  const { name, value, onChange, defaultKind = "text" } = props;
  // A value not given yet is shown as the common case, so that it takes one entry, not two.
  const kind = value === undefined ? defaultKind : kindOf(value);
  return (
    <div className="seq-value">
      <select className="select seq-value-kind" aria-label={`${name}: kind`} value={kind} onChange={(e) => onChange(convert(value, e.target.value as ValueKind))}>
        {VALUE_KINDS.map((option) => (
          <option key={option} value={option}>
            {KIND_LABELS[option]}
          </option>
        ))}
      </select>
      <ValueBody {...props} value={value ?? convert(undefined, kind)} kind={kind} />
    </div>
  );
}

function ValueBody({ id, name, value, onChange, templated, hints, describedBy, kind }: ValueControlProps & { kind: ValueKind }) {
  switch (kind) {
    case "text": {
      const text = typeof value === "string" ? value : "";
      return templated ? (
        <TemplateInput id={id} label={name} value={text} mode="template" hints={hints} describedBy={describedBy} onChange={onChange} />
      ) : (
        <input id={id} className="input" aria-label={name} value={text} aria-describedby={describedBy} onChange={(e) => onChange(e.target.value)} />
      );
    }
    case "number":
      return (
        <input
          id={id}
          className="input"
          type="number"
          step="any"
          aria-label={name}
          value={typeof value === "number" ? String(value) : ""}
          aria-describedby={describedBy}
          onChange={(e) => onChange(e.target.value.trim() === "" ? 0 : Number(e.target.value))}
        />
      );
    case "boolean":
      return (
        <label className="seq-check">
          <input id={id} type="checkbox" checked={value === true} aria-describedby={describedBy} onChange={(e) => onChange(e.target.checked)} /> {name} is true
        </label>
      );
    case "null":
      return null;
    case "object": {
      const object = value as Json;
      const entries = Object.entries(object);
      return (
        <div className="seq-list">
          {entries.map(([key, item], index) => (
            <div key={index} className="seq-value-entry">
              <input className="input" aria-label={`${name} name ${index + 1}`} value={key} onChange={(e) => onChange(renameKey(object, key, e.target.value))} />
              <button type="button" className="btn btn-small" aria-label={`Remove ${name}.${key}`} onClick={() => onChange(Object.fromEntries(entries.filter((_, at) => at !== index)))}>
                Remove
              </button>
              <div className="seq-value-body">
                <ValueControl id={`${id}-${index}`} name={`${name}.${key}`} value={item} onChange={(next) => onChange({ ...object, [key]: next ?? null })} templated={templated} hints={hints} />
              </div>
            </div>
          ))}
          <button type="button" className="btn btn-small" onClick={() => onChange({ ...object, [freshKey(object)]: "" })}>
            Add to {name}
          </button>
        </div>
      );
    }
    case "list": {
      const items = value as unknown[];
      return (
        <div className="seq-list">
          {items.map((item, index) => (
            <div key={index} className="seq-value-entry">
              <span className="muted">{`${name}[${index}]`}</span>
              <button type="button" className="btn btn-small" aria-label={`Remove ${name}[${index}]`} onClick={() => onChange(items.filter((_, at) => at !== index))}>
                Remove
              </button>
              <div className="seq-value-body">
                <ValueControl
                  id={`${id}-${index}`}
                  name={`${name}[${index}]`}
                  value={item}
                  onChange={(next) => onChange(items.map((old, at) => (at === index ? (next ?? null) : old)))}
                  templated={templated}
                  hints={hints}
                />
              </div>
            </div>
          ))}
          <button type="button" className="btn btn-small" onClick={() => onChange([...items, ""])}>
            Add to {name}
          </button>
        </div>
      );
    }
  }
}
