"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeError, ConfirmButton } from "../../../../_components/confirm-button";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { LocalTime } from "../../../../_components/local-time";

const KINDS = ["api_key", "oauth2", "basic"] as const;
type Kind = (typeof KINDS)[number];

/** What a new credential's value looks like by convention (N); any text is accepted. */
const VALUE_HINT: Record<Kind, string> = {
  api_key: '{"token": "…"}',
  oauth2: '{"access_token": "…"}',
  basic: '{"username": "…", "password": "…"}',
};

const when = (iso: string | undefined) => (iso ? <LocalTime iso={iso} /> : <span className="muted">never</span>);

/**
 * The tenant's credentials. Values are write-only: typed once into a password field, sent, and
 * never shown again; a new value replaces the old one unseen.
 */
export function CredentialsPanel({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const credentials = useQuery(trpc.credentials.list.queryOptions({ tenantId }));
  const invalidate = () => queryClient.invalidateQueries(trpc.credentials.pathFilter());
  const update = useMutation(trpc.credentials.update.mutationOptions({ onSettled: invalidate }));
  const remove = useMutation(trpc.credentials.remove.mutationOptions({ onSettled: invalidate }));
  const [replacing, setReplacing] = useState<string | null>(null);

  let table;
  if (credentials.error) table = <QueryError error={credentials.error} />;
  else if (!credentials.data) table = <div className="skeleton" aria-busy="true" aria-label="Loading credentials" />;
  else if (credentials.data.length === 0) table = <p className="empty">No credentials yet. Add one below and refer to it from a step&apos;s params.</p>;
  else {
    table = (
      <div className="table-wrap">
        <table className="table" aria-label="Credentials">
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {credentials.data.map((c) => (
              <tr key={c.id}>
                <td><code>{c.id}</code></td>
                <td>{c.name}</td>
                <td>{c.kind}</td>
                <td>{when(c.expires_at)}</td>
                <td>{when(c.last_used_at)}</td>
                <td>{c.enabled ? "enabled" : <span className="muted">disabled</span>}</td>
                <td className="cell-actions">
                  <button
                    type="button"
                    className="btn btn-small"
                    aria-label={`${c.enabled ? "Disable" : "Enable"} credential ${c.id}`}
                    disabled={update.isPending && update.variables?.id === c.id}
                    onClick={() => update.mutate({ tenantId, id: c.id, patch: { enabled: !c.enabled } })}
                  >
                    {update.isPending && update.variables?.id === c.id ? "Saving…" : c.enabled ? "Disable" : "Enable"}
                  </button>
                  <button type="button" className="btn btn-small" aria-label={`Replace the value of ${c.id}`} onClick={() => setReplacing(c.id)}>
                    Replace value
                  </button>
                  <ConfirmButton
                    label="Delete"
                    accessibleLabel={`Delete credential ${c.id}`}
                    question={`Delete ${c.id}? Steps that refer to it will fail.`}
                    pending={remove.isPending && remove.variables?.id === c.id}
                    pendingLabel="Deleting…"
                    onConfirm={() => remove.mutate({ tenantId, id: c.id })}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <>
      <p className="muted">
        A step param that is exactly <code>credentials://&lt;id&gt;</code> gets the credential&apos;s value, and{" "}
        <code>credentials://&lt;id&gt;/&lt;field&gt;</code> one field of it. Values are stored encrypted and never shown again.
      </p>
      <ChangeError what="change the credential" error={update.error} />
      <ChangeError what="delete the credential" error={remove.error} />
      {table}
      {replacing ? (
        <ReplaceValueForm key={replacing} tenantId={tenantId} id={replacing} onDone={() => { setReplacing(null); void invalidate(); }} />
      ) : (
        <NewCredentialForm tenantId={tenantId} onSaved={() => void invalidate()} />
      )}
    </>
  );
}

function NewCredentialForm({ tenantId, onSaved }: { tenantId: string; onSaved: () => void }) {
  const trpc = useTRPC();
  const create = useMutation(trpc.credentials.create.mutationOptions());
  const [fields, setFields] = useState({ id: "", name: "", kind: "api_key" as Kind, value: "", expiresAt: "" });
  const set = (patch: Partial<typeof fields>) => setFields((current) => ({ ...current, ...patch }));

  return (
    <>
      <ChangeError what="add the credential" error={create.error} />
      <form
        className="form-row"
        aria-label="Add a credential"
        onSubmit={(event) => {
          event.preventDefault();
          const { id, name, kind, value, expiresAt } = fields;
          create.mutate(
            { tenantId, credential: { id, name, kind, value, expires_at: expiresAt ? new Date(expiresAt).toISOString() : null } },
            {
              onSuccess: () => {
                create.reset();
                setFields({ id: "", name: "", kind: "api_key", value: "", expiresAt: "" });
                onSaved();
              },
            },
          );
        }}
      >
        <label>
          Id
          <input
            className="input" name="id" required maxLength={255} pattern="[A-Za-z0-9._\-]+" autoComplete="off"
            title="Letters, digits, '.', '_' or '-', e.g. stripe.live" value={fields.id} onChange={(event) => set({ id: event.target.value })}
          />
        </label>
        <label>
          Name
          <input className="input" name="name" required autoComplete="off" value={fields.name} onChange={(event) => set({ name: event.target.value })} />
        </label>
        <label>
          Kind
          <select className="input" name="kind" value={fields.kind} onChange={(event) => set({ kind: event.target.value as Kind })}>
            {KINDS.map((kind) => <option key={kind} value={kind}>{kind}</option>)}
          </select>
        </label>
        <label>
          Value
          <input
            className="input" name="value" type="password" required autoComplete="new-password" placeholder={VALUE_HINT[fields.kind]}
            value={fields.value} onChange={(event) => set({ value: event.target.value })}
          />
        </label>
        <label>
          Expires
          <input className="input" name="expires" type="datetime-local" value={fields.expiresAt} onChange={(event) => set({ expiresAt: event.target.value })} />
        </label>
        <button className="btn btn-primary" type="submit" disabled={create.isPending}>{create.isPending ? "Adding…" : "Add credential"}</button>
      </form>
    </>
  );
}

function ReplaceValueForm({ tenantId, id, onDone }: { tenantId: string; id: string; onDone: () => void }) {
  const trpc = useTRPC();
  const update = useMutation(trpc.credentials.update.mutationOptions());
  const [value, setValue] = useState("");
  return (
    <>
      <ChangeError what="replace the value" error={update.error} />
      <form
        className="form-row"
        aria-label={`Replace the value of ${id}`}
        onSubmit={(event) => {
          event.preventDefault();
          update.mutate({ tenantId, id, patch: { value } }, { onSuccess: onDone });
        }}
      >
        <label>
          New value for <code>{id}</code>
          <input className="input" name="value" type="password" required autoComplete="new-password" value={value} onChange={(event) => setValue(event.target.value)} />
        </label>
        <button className="btn btn-primary" type="submit" disabled={update.isPending}>{update.isPending ? "Saving…" : "Replace value"}</button>
        <button type="button" className="btn" onClick={onDone}>Cancel</button>
      </form>
    </>
  );
}
