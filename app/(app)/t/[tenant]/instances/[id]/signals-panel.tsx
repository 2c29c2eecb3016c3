"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { useTRPC } from "../../../../../_components/trpc";
import { Time } from "../instance-ui";
import type { InstanceDetailData } from "./detail-types";

type Kind = "custom" | "update_context";

const TEMPLATES: Record<Kind, string> = { custom: "", update_context: '{\n  "data": {}\n}' };

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

const isObject = (value: Json | undefined): value is { [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value);

type Parsed =
  | { ok: true; kind: "custom"; value: Json }
  | { ok: true; kind: "update_context"; value: { data: { [key: string]: Json } } }
  | { ok: false; message: string };

/**
 * The payload as the server will take it, or why not. Checked before sending, so a typo is
 * pointed out next to the field instead of coming back as a request error.
 */
function parsePayload(kind: Kind, text: string): Parsed {
  if (text.trim() === "") {
    return kind === "custom" ? { ok: true, kind, value: null } : { ok: false, message: 'Enter an object such as {"data": {"key": "value"}}.' };
  }
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch (error) {
    return { ok: false, message: `This is not valid JSON: ${(error as Error).message}` };
  }
  if (kind === "custom") return { ok: true, kind, value };
  if (!isObject(value) || !isObject(value.data)) return { ok: false, message: 'The payload must be an object with a "data" object.' };
  const extra = Object.keys(value).filter((key) => key !== "data");
  if (extra.length > 0) return { ok: false, message: `Only "data" is merged into the context; remove ${extra.map((k) => `"${k}"`).join(", ")}.` };
  return { ok: true, kind, value: { data: value.data } };
}

const summary = (payload: unknown) => {
  if (payload === null) return "—";
  const text = JSON.stringify(payload);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
};

export function SignalsPanel({
  tenantId, instanceId, signals, canSignal,
}: { tenantId: string; instanceId: string; signals: InstanceDetailData["signals"]; canSignal: boolean }) {
  return (
    <>
      {signals.length === 0 ? (
        <p className="empty">No signals sent to this instance yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Recent signals, newest first">
            <thead>
              <tr>
                <th scope="col">Signal</th>
                <th scope="col">Payload</th>
                <th scope="col">Status</th>
                <th scope="col">Sent</th>
              </tr>
            </thead>
            <tbody>
              {signals.map((signal) => (
                <tr key={signal.id}>
                  <td><code>{signal.type === "custom" ? signal.name : signal.type}</code>{signal.type === "custom" && <span className="muted"> (custom)</span>}</td>
                  <td><code title={signal.payload === null ? undefined : JSON.stringify(signal.payload)}>{summary(signal.payload)}</code></td>
                  <td>{signal.delivered ? <span className="badge badge-ok">delivered</span> : <span className="badge badge-warn">queued</span>}</td>
                  <td><Time iso={signal.createdAt} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canSignal ? (
        <SendSignalForm tenantId={tenantId} instanceId={instanceId} />
      ) : (
        <p className="muted status-line">The instance has finished: it takes no more signals.</p>
      )}
    </>
  );
}

function SendSignalForm({ tenantId, instanceId }: { tenantId: string; instanceId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const id = useId();
  const [kind, setKind] = useState<Kind>("custom");
  const [name, setName] = useState("");
  const [payload, setPayload] = useState(TEMPLATES.custom);
  const [invalid, setInvalid] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const signal = useMutation(
    trpc.instances.signal.mutationOptions({
      onMutate: () => setSent(null),
      onSuccess: (_result, variables) => setSent(`${variables.signal.type === "custom" ? `“${variables.signal.name}”` : "Context update"} sent.`),
      onSettled: () => queryClient.invalidateQueries(trpc.instances.pathFilter()),
    }),
  );
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;

  return (
    <form
      aria-label="Send a signal"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        const parsed = parsePayload(kind, payload);
        if (!parsed.ok) {
          setInvalid(parsed.message);
          return;
        }
        if (parsed.kind === "custom" && name.trim() === "") {
          setInvalid("Give the custom signal a name.");
          return;
        }
        setInvalid(null);
        signal.mutate({
          tenantId,
          instanceId,
          signal: parsed.kind === "custom"
            ? { type: "custom", name: name.trim(), payload: parsed.value }
            : { type: "update_context", payload: parsed.value },
        });
      }}
    >
      <h3>Send a signal</h3>
      <div className="form-row">
        <label>
          Kind
          <select
            className="select"
            value={kind}
            onChange={(event) => {
              const next = event.target.value as Kind;
              setKind(next);
              setPayload(TEMPLATES[next]);
              setInvalid(null);
            }}
          >
            <option value="custom">Custom</option>
            <option value="update_context">Update context</option>
          </select>
        </label>
        {kind === "custom" && (
          <label>
            Name
            <input className="input" value={name} onChange={(event) => setName(event.target.value)} maxLength={256} required />
          </label>
        )}
      </div>
      <div className="field">
        <label htmlFor={`${id}-payload`}>Payload (JSON)</label>
        <textarea
          id={`${id}-payload`}
          className="input textarea"
          value={payload}
          onChange={(event) => setPayload(event.target.value)}
          spellCheck={false}
          aria-invalid={invalid !== null}
          aria-describedby={invalid ? `${hintId} ${errorId}` : hintId}
        />
        <p id={hintId} className="muted">
          {kind === "update_context"
            ? "The top-level keys of data replace those in the context's data; other keys stay."
            : "Any JSON value, or empty for none. Custom signals have no built-in effect, except human_input:<block id>, which answers a step's input gate."}
        </p>
        {invalid && (
          <p id={errorId} className="field-error" role="alert">
            {invalid}
          </p>
        )}
      </div>
      {signal.error && (
        <div className="alert alert-error" role="alert">
          Could not send the signal: {signal.error.message}
        </div>
      )}
      <button type="submit" className="btn btn-primary" disabled={signal.isPending}>
        {signal.isPending ? "Sending…" : "Send signal"}
      </button>
      <p className="status-line" role="status">{sent}</p>
    </form>
  );
}
