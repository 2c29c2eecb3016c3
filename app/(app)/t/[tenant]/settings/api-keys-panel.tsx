"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { ChangeError, ConfirmButton } from "../../../../_components/confirm-button";
import { OneTimeSecret } from "./one-time-secret";
import { LocalTime, utcTime } from "../../../../_components/local-time";

export function ApiKeysPanel({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.apiKeys.list.queryOptions({ tenantId }));
  const invalidate = () => queryClient.invalidateQueries(trpc.apiKeys.pathFilter());
  const revoke = useMutation(trpc.apiKeys.revoke.mutationOptions({ onSettled: invalidate }));

  let table;
  if (keys.error) table = <QueryError error={keys.error} />;
  else if (!keys.data) table = <div className="skeleton" aria-busy="true" aria-label="Loading API keys" />;
  else if (keys.data.length === 0) table = <p className="empty">No API keys yet. Create one below to call the REST API.</p>;
  else {
    table = (
      <div className="table-wrap">
        <table className="table" aria-label="API keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {keys.data.map((k) => (
              <tr key={k.id}>
                <td>{k.name || <span className="muted">unnamed</span>}</td>
                {/* Only the prefix is known after creation: enough to recognise a key. */}
                <td><code>{k.prefix}…</code></td>
                <td><LocalTime iso={k.createdAt} /></td>
                <td>{k.lastUsedAt ? <LocalTime iso={k.lastUsedAt} /> : <span className="muted">never</span>}</td>
                <td>
                  {k.revokedAt ? (
                    <span className="badge badge-danger" title={utcTime(k.revokedAt)}>
                      revoked <LocalTime iso={k.revokedAt} shown="date" />
                    </span>
                  ) : (
                    <span className="badge badge-ok">active</span>
                  )}
                </td>
                <td className="cell-actions">
                  {!k.revokedAt && (
                    <ConfirmButton
                      label="Revoke"
                      accessibleLabel={`Revoke key ${k.name || k.prefix} (${k.prefix}…)`}
                      question="Revoke? Calls with it fail at once."
                      pending={revoke.isPending && revoke.variables?.id === k.id}
                      pendingLabel="Revoking…"
                      onConfirm={() => revoke.mutate({ tenantId, id: k.id })}
                    />
                  )}
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
        Keys call the REST API (<code>/api/v1</code>) as this tenant, sent in the <code>x-api-key</code> header.
      </p>
      <ChangeError what="revoke the key" error={revoke.error} />
      {table}
      <CreateKeyForm tenantId={tenantId} onCreated={invalidate} />
    </>
  );
}

/** Creates a key; its secret is shown once, in a box of its own, until dismissed. */
function CreateKeyForm({ tenantId, onCreated }: { tenantId: string; onCreated: () => void }) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const create = useMutation(trpc.apiKeys.create.mutationOptions({ onSettled: onCreated }));
  return (
    <>
      {created && (
        <OneTimeSecret
          label="New API key secret"
          title={`API key "${created.name}" created`}
          note="Store this secret where your client can read it (e.g. a secrets manager)."
          value={created.secret}
          onDismiss={() => setCreated(null)}
        />
      )}
      <ChangeError what="create the key" error={create.error} />
      <form
        className="form-row"
        aria-label="Create an API key"
        onSubmit={(event) => {
          event.preventDefault();
          setCreated(null);
          create.mutate(
            { tenantId, name },
            {
              onSuccess: (key) => {
                setCreated({ name: key.name, secret: key.secret });
                // Kept only in `created`, not also in the mutation's cache.
                create.reset();
                setName("");
              },
            },
          );
        }}
      >
        <label>
          Key name
          <input
            className="input"
            name="name"
            required
            maxLength={100}
            pattern=".*\S.*"
            title="A name that says what uses the key, e.g. ci-deploys"
            autoComplete="off"
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        </label>
        <button className="btn btn-primary" type="submit" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create key"}
        </button>
      </form>
    </>
  );
}
