"use client";

// Run the saved version: a form generated from its input_schema (free JSON when the schema is
// not an object one, or there is none), checked before submitting; then the new instance's page.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useId, useMemo, useState, type FormEvent } from "react";
import { useTRPC } from "../../../../../_components/trpc";
import { runFields, runInputProblem } from "./run-input.ts";
import { ObjectFields, withField } from "./schema-fields";
import { NO_HINTS } from "./template-hints.ts";

const CONTEXT = { hints: NO_HINTS, handlerList: "" };

export function RunForm({ tenantId, sequenceId, version, inputSchema }: { tenantId: string; sequenceId: string; version: unknown; inputSchema: unknown }) {
  const trpc = useTRPC();
  const router = useRouter();
  const jsonId = useId();
  const fields = useMemo(() => runFields(inputSchema), [inputSchema]);
  const [values, setValues] = useState<Record<string, unknown>>({});
  const [json, setJson] = useState("{}");
  const [problem, setProblem] = useState<string | null>(null);
  const run = useMutation(trpc.sequences.run.mutationOptions({ onSuccess: ({ instanceId }) => router.push(`/t/${tenantId}/instances/${instanceId}`) }));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    let input: unknown = values;
    if (!fields) {
      try {
        input = json.trim() === "" ? null : JSON.parse(json);
      } catch (e) {
        setProblem(`Not valid JSON: ${(e as Error).message}`);
        return;
      }
    }
    const refused = runInputProblem(inputSchema, fields, input);
    setProblem(refused ?? null);
    if (!refused) run.mutate({ tenantId, sequenceId, input: input as never });
  };

  const shown = problem ?? run.error?.message;
  return (
    <form onSubmit={submit} noValidate aria-label="Run input">
      {fields ? (
        <fieldset className="seq-fieldset">
          <legend>Input (context.data), from the input schema</legend>
          <ObjectFields fields={fields} value={values} onField={(name, value) => setValues((v) => withField(v, name, value))} context={CONTEXT} />
        </fieldset>
      ) : (
        <>
          <label htmlFor={jsonId}>Input context data (JSON)</label>
          <textarea id={jsonId} className="input textarea" value={json} onChange={(e) => setJson(e.target.value)} spellCheck={false} />
        </>
      )}
      {shown && (
        <p className="field-error" role="alert">
          {shown}
        </p>
      )}
      <div className="toolbar">
        <button type="submit" className="btn" disabled={run.isPending}>
          Run
        </button>
        <span className="muted">Runs the saved version v{String(version)}.</span>
      </div>
    </form>
  );
}
