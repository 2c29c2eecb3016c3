"use client";

// A step's handler and params: the handler is picked from the built-ins or typed (a worker's
// handler); a built-in's params get the form of its own schema (engine/handlers/descriptors.ts),
// and the problems its handler would refuse them for; a worker's params are any value, built with
// the value control.
import { useId } from "react";
import { handlerDescriptor } from "../../../../../../engine/handlers/descriptors.ts";
import { paramsSpec } from "./form-spec.ts";
import { JsonField } from "./json-field";
import type { JsonBlock } from "./model.ts";
import { ObjectFields, withField, type FormContext } from "./schema-fields";
import { ValueControl } from "./value-control";

const TEMPLATE_HINT = "Strings may use templates: type {{ for data, outputs of earlier blocks and filters.";

/** What the handler would refuse these params for, leaving out values that are still templates. */
export function paramsProblems(handler: string, params: unknown): string[] {
  const descriptor = handlerDescriptor(handler);
  if (!descriptor) return [];
  const parsed = descriptor.params.safeParse(params ?? {});
  if (parsed.success) return [];
  return parsed.error.issues
    .filter((issue) => !issue.path.some((_, index) => JSON.stringify(valueAt(params, issue.path.slice(0, index + 1)) ?? null).includes("{{")))
    .map((issue) => `invalid params: ${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`);
}

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let node = root;
  for (const key of path) node = typeof node === "object" && node !== null ? (node as Record<PropertyKey, unknown>)[key] : undefined;
  return node;
}

export function ParamsFields({ block, context, onChange }: { block: JsonBlock; context: FormContext; onChange(fields: Record<string, unknown>): void }) {
  const id = useId();
  const handler = typeof block.handler === "string" ? block.handler : "";
  const descriptor = handlerDescriptor(handler);
  const spec = paramsSpec(handler);
  const problems = paramsProblems(handler, block.params);
  return (
    <>
      <div className="field">
        <label htmlFor={id}>Handler</label>
        <input id={id} className="input" role="combobox" value={handler} list={context.handlerList} aria-describedby={`${id}-hint`} onChange={(e) => onChange({ handler: e.target.value })} />
        <p id={`${id}-hint`} className="muted form-hint">
          {descriptor ? descriptor.description : handler ? "Not built in: runs as an external worker task." : "A built-in handler, or any name for a worker's handler."}
        </p>
      </div>
      {spec?.kind === "object" ? (
        <fieldset className="seq-fieldset">
          <legend>params</legend>
          <p className="muted form-hint">{TEMPLATE_HINT}</p>
          {spec.fields.length === 0 && <p className="muted form-hint">{handler} takes no params.</p>}
          <ObjectFields fields={spec.fields} value={block.params} onField={(name, value) => onChange({ params: withField(block.params, name, value) })} context={{ ...context, templated: true }} />
          {problems.length > 0 && (
            <ul className="alert alert-error seq-problems" aria-label="Params the handler would refuse">
              {problems.map((problem) => (
                <li key={problem}>{problem}</li>
              ))}
            </ul>
          )}
          <details className="seq-raw">
            <summary>params as JSON</summary>
            <JsonField key={JSON.stringify(block.params ?? null)} label="params (JSON)" value={block.params} onChange={(params) => onChange({ params })} />
          </details>
        </fieldset>
      ) : (
        <fieldset className="seq-fieldset">
          <legend>params</legend>
          <p id={`${id}-params-hint`} className="muted form-hint">
            Whatever the worker's handler takes. {TEMPLATE_HINT}
          </p>
          <ValueControl
            id={`${id}-params`}
            name="params"
            value={block.params ?? undefined}
            onChange={(params) => onChange({ params: params ?? null })}
            templated
            hints={context.hints}
            describedBy={`${id}-params-hint`}
            defaultKind="object"
          />
          <details className="seq-raw">
            <summary>params as JSON</summary>
            <JsonField key={JSON.stringify(block.params ?? null)} label="params (JSON)" value={block.params} onChange={(params) => onChange({ params })} />
          </details>
        </fieldset>
      )}
    </>
  );
}
