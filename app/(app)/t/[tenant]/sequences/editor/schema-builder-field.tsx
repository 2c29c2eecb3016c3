"use client";

// A JSON Schema field (input_schema, output_schema) as a list of properties: name, type,
// required. A schema that says more than that is edited as JSON, and JSON is also the way to
// write such a schema in the first place.
import { useId, useState } from "react";
import { JsonField } from "./json-field";
import { freshPropertyName, PROPERTY_TYPES, propertiesOf, propertyProblems, schemaOf, type PropertyType, type SchemaProperty } from "./schema-builder.ts";

export interface SchemaBuilderProps {
  /** The field's name, e.g. "input_schema". */
  name: string;
  /** What the schema checks, said under the switch. */
  hint: string;
  value: unknown;
  /** `undefined`: no schema. */
  onChange(value: unknown): void;
}

export function SchemaBuilder({ name, hint, value, onChange }: SchemaBuilderProps) {
  const id = useId();
  const on = value !== undefined && value !== null;
  const representable = on ? propertiesOf(value) : null;
  // Rows being typed that do not make a schema yet (a name emptied or repeated) live here.
  const [draft, setDraft] = useState<SchemaProperty[] | null>(null);
  const rows = draft ?? representable ?? [];
  const problems = propertyProblems(rows);
  const write = (next: SchemaProperty[]) => {
    setDraft(propertyProblems(next).length ? next : null);
    onChange(schemaOf(next));
  };
  const set = (index: number, fields: Partial<SchemaProperty>) => write(rows.map((row, at) => (at === index ? { ...row, ...fields } : row)));
  return (
    <fieldset className="seq-fieldset seq-schema" aria-label={name}>
      <legend>
        <label className="seq-check">
          <input
            type="checkbox"
            checked={on}
            aria-describedby={`${id}-hint`}
            onChange={(e) => {
              setDraft(null);
              onChange(e.target.checked ? schemaOf([]) : undefined);
            }}
          />{" "}
          {name}
        </label>
      </legend>
      <p id={`${id}-hint`} className="muted form-hint">
        {hint}
      </p>
      {on && (representable || draft) && (
        <>
          {rows.length === 0 && <p className="muted form-hint">An object; no properties yet.</p>}
          {rows.map((row, index) => (
            <div key={index} className="seq-schema-row">
              <input className="input seq-key" aria-label={`${name} property ${index + 1} name`} value={row.name} onChange={(e) => set(index, { name: e.target.value })} />
              <select className="select" aria-label={`${name} property ${index + 1} type`} value={row.type} onChange={(e) => set(index, { type: e.target.value as PropertyType })}>
                {PROPERTY_TYPES.map((type) => (
                  <option key={type} value={type}>
                    {type}
                  </option>
                ))}
              </select>
              <label className="seq-check">
                <input type="checkbox" checked={row.required} onChange={(e) => set(index, { required: e.target.checked })} /> required
              </label>
              <button type="button" className="btn btn-small" aria-label={`Remove ${name} property ${row.name || index + 1}`} onClick={() => write(rows.filter((_, at) => at !== index))}>
                Remove
              </button>
            </div>
          ))}
          {problems.length > 0 && (
            <ul className="field-error seq-problems" role="alert">
              {problems.map((problem) => (
                <li key={problem}>{problem}</li>
              ))}
            </ul>
          )}
          <button type="button" className="btn btn-small" onClick={() => write([...rows, { name: freshPropertyName(rows), type: "string", required: false }])}>
            Add property to {name}
          </button>
        </>
      )}
      {on && !representable && !draft && <p className="muted form-hint">This schema says more than a list of properties; edit it as JSON.</p>}
      {on && (
        <details className="seq-raw" open={!representable && !draft}>
          <summary>{name} as JSON (formats, enums, nested schemas…)</summary>
          <JsonField
            key={JSON.stringify(value)}
            label={`${name} (JSON Schema)`}
            value={value}
            onChange={(next) => {
              setDraft(null);
              onChange(next === null ? undefined : next);
            }}
          />
        </details>
      )}
    </fieldset>
  );
}
