"use client";

// The form for the selected block, one per block type. Every change goes straight into the model
// (and so into validation); JSON fields are checked when they lose focus.
import { useId, useState } from "react";
import { getAt, type JsonBlock } from "./model.ts";

type Fields = Record<string, unknown>;

export interface InspectorProps {
  block: JsonBlock;
  problems: string[];
  handlers: { builtins: string[]; seen: string[] };
  onChange(fields: Fields): void;
  onAddBranch(): void;
  onRemoveBranch(index: number): void;
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

/** A JSON value edited as text; applied on blur when it parses, otherwise the error shows. */
export function JsonField({ label, value, onChange, hint, absentAs }: { label: string; value: unknown; onChange(value: unknown): void; hint?: string; absentAs?: unknown }) {
  const id = useId();
  const shown = value === undefined ? absentAs : value;
  const [draft, setDraft] = useState(() => JSON.stringify(shown ?? null, null, 2));
  const [error, setError] = useState<string | null>(null);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="input textarea"
        value={draft}
        aria-invalid={error ? true : undefined}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={() => {
          try {
            const parsed: unknown = draft.trim() === "" ? null : JSON.parse(draft);
            setError(null);
            onChange(parsed);
          } catch (e) {
            setError(`Not valid JSON: ${(e as Error).message}`);
          }
        }}
      />
      {hint && (
        <p id={`${id}-hint`} className="muted form-hint">
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

const TEMPLATE_HINT = "Strings may use templates: {{data.field}}, {{config.key}}, {{outputs.<block id>.field}}, {{instance_id}}, with fallbacks {{data.x | \"default\"}}.";

function StepFields({ block, handlers, onChange }: Pick<InspectorProps, "block" | "handlers" | "onChange">) {
  const listId = useId();
  const retry = isRecord(block.retry) ? block.retry : null;
  const window = isRecord(block.send_window) ? block.send_window : null;
  const days = Array.isArray(window?.days) ? (window.days as unknown[]).join(",") : "";
  return (
    <>
      <datalist id={listId}>
        {[...handlers.builtins, ...handlers.seen].map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <TextField label="Handler" value={block.handler} list={listId} onChange={(handler) => onChange({ handler })} />
      <JsonField label="Params (JSON)" value={block.params} onChange={(params) => onChange({ params })} hint={TEMPLATE_HINT} />
      <NumberField label="Timeout (ms)" value={block.timeout} onChange={(timeout) => onChange({ timeout })} />
      <NumberField label="Deadline (ms)" value={block.deadline} onChange={(deadline) => onChange({ deadline })} />
      <TextField label="Fallback handler" value={block.fallback_handler} list={listId} onChange={(v) => onChange({ fallback_handler: v || undefined })} />
      <TextField label="Rate-limit key" value={block.rate_limit_key} onChange={(v) => onChange({ rate_limit_key: v || undefined })} />
      <fieldset className="seq-fieldset">
        <legend>Retry</legend>
        <CheckField
          label="Retry on failure"
          checked={retry !== null}
          onChange={(on) => onChange({ retry: on ? { max_attempts: 3, initial_backoff: 1000, max_backoff: 60000, backoff_multiplier: 2 } : null })}
        />
        {retry && (
          <>
            <NumberField label="Max attempts" value={retry.max_attempts} onChange={(v) => onChange({ retry: { ...retry, max_attempts: v } })} />
            <NumberField label="Initial backoff (ms)" value={retry.initial_backoff} onChange={(v) => onChange({ retry: { ...retry, initial_backoff: v } })} />
            <NumberField label="Max backoff (ms)" value={retry.max_backoff} onChange={(v) => onChange({ retry: { ...retry, max_backoff: v } })} />
            <NumberField label="Backoff multiplier" value={retry.backoff_multiplier} onChange={(v) => onChange({ retry: { ...retry, backoff_multiplier: v } })} />
          </>
        )}
      </fieldset>
      <fieldset className="seq-fieldset">
        <legend>Send window</legend>
        <CheckField label="Only run inside a send window" checked={window !== null} onChange={(on) => onChange({ send_window: on ? { start_hour: 9, end_hour: 17, days: [] } : undefined })} />
        {window && (
          <>
            <NumberField label="Start hour (0-23)" value={window.start_hour} onChange={(v) => onChange({ send_window: { ...window, start_hour: v } })} />
            <NumberField label="End hour (0-23, exclusive)" value={window.end_hour} onChange={(v) => onChange({ send_window: { ...window, end_hour: v } })} />
            <TextField
              label="Days (0 = Monday … 6 = Sunday, comma-separated; empty = every day)"
              value={days}
              onChange={(v) => onChange({ send_window: { ...window, days: v.split(",").map((d) => d.trim()).filter(Boolean).map(Number) } })}
            />
          </>
        )}
      </fieldset>
    </>
  );
}

function BranchList({ block, onChange, onAddBranch, onRemoveBranch }: Omit<InspectorProps, "problems" | "handlers">) {
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
            <TextField
              label={`Route ${index + 1} condition`}
              value={getAt(route, ["condition"])}
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

function TypeFields(props: Omit<InspectorProps, "problems">) {
  const { block, onChange } = props;
  switch (block.type) {
    case "step":
      return <StepFields {...props} />;
    case "loop":
      return (
        <>
          <TextField label="Condition" value={block.condition} onChange={(condition) => onChange({ condition })} placeholder="data.count < 3" />
          <NumberField label="Max iterations" value={block.max_iterations} onChange={(max_iterations) => onChange({ max_iterations })} />
          <TextField label="Break on" value={block.break_on} onChange={(v) => onChange({ break_on: v || undefined })} />
        </>
      );
    case "for_each":
      return (
        <>
          <TextField label="Collection" value={block.collection} onChange={(collection) => onChange({ collection })} placeholder="items or {{data.items}}" />
          <TextField label="Item variable" value={block.item_var} onChange={(item_var) => onChange({ item_var })} />
          <NumberField label="Max iterations" value={block.max_iterations} onChange={(max_iterations) => onChange({ max_iterations })} />
        </>
      );
    case "race":
      return (
        <>
          <SelectField
            label="Semantics"
            value={text(block.semantics) || "first_to_resolve"}
            options={["first_to_resolve", "first_to_succeed"]}
            onChange={(semantics) => onChange({ semantics })}
          />
          <BranchList {...props} />
        </>
      );
    case "try_catch":
      return <CheckField label="Has a finally block" checked={Array.isArray(block.finally_block)} onChange={(on) => onChange({ finally_block: on ? [] : null })} />;
    case "sub_sequence":
      return (
        <>
          <TextField label="Sequence name" value={block.sequence_name} onChange={(sequence_name) => onChange({ sequence_name })} />
          <NumberField label="Version (empty = latest)" value={block.version} onChange={(version) => onChange({ version })} />
          <JsonField label="Input (JSON)" value={block.input} onChange={(input) => onChange({ input })} />
        </>
      );
    case "saga":
      return <JsonField label="Saga steps (JSON)" value={block.steps} onChange={(steps) => onChange({ steps })} absentAs={[]} />;
    default:
      return <BranchList {...props} />;
  }
}

function SelectField({ label, value, options, onChange }: { label: string; value: string; options: string[]; onChange(value: string): void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} className="select" value={value} onChange={(e) => onChange(e.target.value)}>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Inspector(props: InspectorProps) {
  const { block, problems, onChange } = props;
  return (
    <div className="seq-inspector-form">
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
      <TypeFields {...props} />
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
