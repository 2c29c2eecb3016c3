"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeError, ConfirmButton } from "../../../../_components/confirm-button";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";

/** The tenant's trigger slugs: names for sequences that `emit_event` steps start by. */
export function TriggersPanel({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const triggers = useQuery(trpc.triggers.list.queryOptions({ tenantId }));
  const invalidate = () => queryClient.invalidateQueries(trpc.triggers.pathFilter());
  const remove = useMutation(trpc.triggers.remove.mutationOptions({ onSettled: invalidate }));
  // Editing a row fills the form; saving an existing slug repoints it.
  const [editing, setEditing] = useState<{ slug: string; sequenceName: string; sequenceVersion: number | null } | null>(null);

  let table;
  if (triggers.error) table = <QueryError error={triggers.error} />;
  else if (!triggers.data) table = <div className="skeleton" aria-busy="true" aria-label="Loading triggers" />;
  else if (triggers.data.length === 0) table = <p className="empty">No triggers yet. Add one below to start a sequence from an <code>emit_event</code> step.</p>;
  else {
    table = (
      <div className="table-wrap">
        <table className="table" aria-label="Triggers">
          <thead>
            <tr>
              <th scope="col">Slug</th>
              <th scope="col">Sequence</th>
              <th scope="col">Version</th>
              <th scope="col">Updated</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {triggers.data.map((t) => (
              <tr key={t.slug}>
                <td><code>{t.slug}</code></td>
                <td>{t.sequenceName}</td>
                <td>{t.sequenceVersion ?? <span className="muted">latest</span>}</td>
                <td>{new Date(t.updatedAt).toLocaleString()}</td>
                <td className="cell-actions">
                  <button type="button" className="btn btn-small" aria-label={`Edit trigger ${t.slug}`} onClick={() => setEditing({ ...t })}>
                    Edit
                  </button>
                  <ConfirmButton
                    label="Remove"
                    accessibleLabel={`Remove trigger ${t.slug}`}
                    question={`Remove ${t.slug}? emit_event steps naming it will fail.`}
                    pending={remove.isPending && remove.variables?.slug === t.slug}
                    pendingLabel="Removing…"
                    onConfirm={() => remove.mutate({ tenantId, slug: t.slug })}
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
        A step <code>{'{"handler": "emit_event", "params": {"trigger_slug": "…"}}'}</code> starts the trigger&apos;s sequence in
        this tenant, in the emitting instance&apos;s namespace.
      </p>
      <ChangeError what="remove the trigger" error={remove.error} />
      {table}
      <TriggerForm
        key={editing?.slug ?? ""}
        tenantId={tenantId}
        initial={editing}
        onSaved={() => { setEditing(null); void invalidate(); }}
        onCancel={() => setEditing(null)}
      />
    </>
  );
}

/** Creates a trigger, or repoints the one with the same slug. */
function TriggerForm({
  tenantId, initial, onSaved, onCancel,
}: {
  tenantId: string;
  initial: { slug: string; sequenceName: string; sequenceVersion: number | null } | null;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const sequences = useQuery(trpc.sequences.list.queryOptions({ tenantId }));
  const [slug, setSlug] = useState(initial?.slug ?? "");
  const [sequenceName, setSequenceName] = useState(initial?.sequenceName ?? "");
  const [version, setVersion] = useState(initial?.sequenceVersion?.toString() ?? "");
  const save = useMutation(trpc.triggers.put.mutationOptions());

  const names = [...new Set((sequences.data ?? []).map((s) => s.name))].sort();
  const versions = (sequences.data ?? []).filter((s) => s.name === sequenceName && !s.deprecated).map((s) => s.version);

  return (
    <>
      <ChangeError what="save the trigger" error={save.error} />
      <form
        className="form-row"
        aria-label={initial ? `Edit trigger ${initial.slug}` : "Add a trigger"}
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate(
            { tenantId, slug, sequenceName, sequenceVersion: version === "" ? null : Number(version) },
            {
              onSuccess: () => {
                save.reset();
                setSlug("");
                setSequenceName("");
                setVersion("");
                onSaved();
              },
            },
          );
        }}
      >
        <label>
          Slug
          <input
            className="input"
            name="slug"
            required
            maxLength={64}
            pattern="[a-z0-9][a-z0-9._\-]*"
            title="Lower-case letters, digits, '.', '-' or '_', e.g. order-paid"
            autoComplete="off"
            readOnly={initial !== null}
            value={slug}
            onChange={(event) => setSlug(event.target.value)}
          />
        </label>
        <label>
          Sequence
          <select
            className="input"
            name="sequence"
            required
            value={sequenceName}
            disabled={!sequences.data}
            onChange={(event) => {
              setSequenceName(event.target.value);
              setVersion("");
            }}
          >
            <option value="">{sequences.data ? (names.length ? "Choose…" : "No sequences yet") : "Loading…"}</option>
            {names.map((name) => <option key={name} value={name}>{name}</option>)}
          </select>
        </label>
        <label>
          Version
          <select className="input" name="version" value={version} onChange={(event) => setVersion(event.target.value)}>
            <option value="">Latest</option>
            {versions.map((v) => <option key={v} value={v}>{v}</option>)}
          </select>
        </label>
        <button className="btn btn-primary" type="submit" disabled={save.isPending}>
          {save.isPending ? "Saving…" : initial ? "Save trigger" : "Add trigger"}
        </button>
        {initial && <button type="button" className="btn" onClick={onCancel}>Cancel</button>}
      </form>
    </>
  );
}
