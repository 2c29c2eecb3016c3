"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeError } from "../../../../_components/confirm-button";
import { useTRPC } from "../../../../_components/trpc";
import styles from "./triggers.module.css";

/** What the panel keeps of a create's answer, in its own state only (the secret is never shown again). */
export interface CreatedTrigger {
  slug: string;
  webhookPath: string | null;
  secret: string | null;
}

type TriggerType = "webhook" | "event";

const EMPTY = { slug: "", sequenceName: "", version: "", triggerType: "webhook" as TriggerType, sign: true };

/**
 * Creates a trigger (admins). A trigger is never edited: to point one elsewhere, remove it and
 * create it again. Triggers start sequences of the default namespace, the only ones offered.
 */
export function CreateTriggerForm({ tenantId, onCreated }: { tenantId: string; onCreated: (created: CreatedTrigger) => void }) {
  const trpc = useTRPC();
  const sequences = useQuery(trpc.sequences.list.queryOptions({ tenantId }));
  const create = useMutation(trpc.triggers.create.mutationOptions());
  const [fields, setFields] = useState(EMPTY);
  const set = (patch: Partial<typeof fields>) => setFields((current) => ({ ...current, ...patch }));

  const inDefault = (sequences.data ?? []).filter((s) => s.namespace === "default");
  const names = [...new Set(inDefault.map((s) => s.name))].sort();
  const versions = inDefault.filter((s) => s.name === fields.sequenceName).sort((a, b) => b.version - a.version);
  const webhook = fields.triggerType === "webhook";

  return (
    <>
      <ChangeError what="add the trigger" error={create.error} />
      <form
        className="form-row"
        aria-label="Add a trigger"
        onSubmit={(event) => {
          event.preventDefault();
          const { slug, sequenceName, version, triggerType, sign } = fields;
          create.mutate(
            {
              tenantId, slug, sequenceName, sequenceVersion: version === "" ? null : Number(version), triggerType,
              generateSecret: triggerType === "webhook" && sign,
            },
            {
              onSuccess: (trigger) => {
                // The secret is handed to the caller's state and dropped from the mutation's.
                create.reset();
                setFields(EMPTY);
                onCreated({ slug: trigger.slug, webhookPath: trigger.webhookPath, secret: trigger.secret });
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
            maxLength={255}
            pattern="[A-Za-z0-9._~\-]+"
            title="Letters, digits, '-', '_', '.' or '~' (it is part of the webhook's URL), e.g. order-paid"
            autoComplete="off"
            value={fields.slug}
            onChange={(event) => set({ slug: event.target.value })}
          />
        </label>
        <label>
          Sequence
          <select
            className="input"
            name="sequence"
            required
            value={fields.sequenceName}
            disabled={!sequences.data}
            onChange={(event) => set({ sequenceName: event.target.value, version: "" })}
          >
            <option value="">{sequences.data ? (names.length ? "Choose…" : "No sequences yet") : "Loading…"}</option>
            {names.map((name) => <option key={name} value={name}>{name}</option>)}
          </select>
        </label>
        <label>
          Version
          <select className="input" name="version" value={fields.version} onChange={(event) => set({ version: event.target.value })}>
            <option value="">Latest</option>
            {/* A pinned version is used even once deprecated; the latest skips deprecated ones. */}
            {versions.map((s) => (
              <option key={s.id} value={s.version}>
                {s.version}{s.deprecated ? " (deprecated)" : ""}
              </option>
            ))}
          </select>
        </label>
        <label>
          Type
          <select className="input" name="type" value={fields.triggerType} onChange={(event) => set({ triggerType: event.target.value as TriggerType })}>
            <option value="webhook">webhook</option>
            <option value="event">event</option>
          </select>
        </label>
        {webhook && (
          <label className={`choice ${styles.check}`}>
            <input type="checkbox" name="sign" checked={fields.sign} onChange={(event) => set({ sign: event.target.checked })} />
            Sign with a generated secret
          </label>
        )}
        <button className="btn btn-primary" type="submit" disabled={create.isPending}>
          {create.isPending ? "Adding…" : "Add trigger"}
        </button>
      </form>
      <p className="muted form-hint">
        {webhook
          ? fields.sign
            ? "A webhook is called over HTTP at its own URL, each request signed with the secret shown once after adding it."
            : "Without a secret, the webhook's URL refuses every request (401); it can still be fired by a test event, /fire or emit_event."
          : <>An event trigger is started from inside: by an <code>emit_event</code> step, <code>/fire</code> or a test event.</>}
      </p>
    </>
  );
}
