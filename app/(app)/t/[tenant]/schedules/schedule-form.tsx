"use client";

import { keepPreviousData, useMutation, useQuery } from "@tanstack/react-query";
import { useDeferredValue, useState } from "react";
import { ChangeError } from "../../../../_components/confirm-button";
import { useTRPC } from "../../../../_components/trpc";
import { cronInWords, OVERLAP_LABELS, timeIn, viewerZone } from "./cron-words";
import { useHydrated } from "../../../../_components/local-time";

type Policy = keyof typeof OVERLAP_LABELS;
const POLICIES = Object.keys(OVERLAP_LABELS) as Policy[];

/** The fields an edit starts from. */
export interface ScheduleDraft {
  id: string;
  sequenceId: string;
  cronExpr: string;
  timezone: string;
  overlapPolicy: Policy;
}

/** Every IANA zone the browser knows, for the zone field's suggestions. */
const ZONES = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : ["UTC"];

/**
 * Adds a schedule (pick a sequence unless the page is one sequence's), or edits one: the
 * expression, the zone and the overlap policy. What the expression means and its next fires are
 * shown as it is typed, or why the server refuses it.
 */
export function ScheduleForm({
  tenantId, sequences, fixedSequenceId, initial, onSaved, onCancel,
}: {
  tenantId: string;
  sequences: readonly { id: string; name: string; version: number; deprecated: boolean }[] | null;
  fixedSequenceId?: string;
  initial: ScheduleDraft | null;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const [sequenceId, setSequenceId] = useState(initial?.sequenceId ?? fixedSequenceId ?? "");
  const [cronExpr, setCronExpr] = useState(initial?.cronExpr ?? "0 * * * *");
  // The viewer's zone is the browser's: the server (and hydration) start from UTC.
  const hydrated = useHydrated();
  const [chosenZone, setTimezone] = useState<string | null>(initial?.timezone ?? null);
  const timezone = chosenZone ?? (hydrated ? viewerZone() : "UTC");
  const [overlapPolicy, setOverlapPolicy] = useState<Policy>(initial?.overlapPolicy ?? "allow");
  const create = useMutation(trpc.schedules.create.mutationOptions());
  const update = useMutation(trpc.schedules.update.mutationOptions());
  const save = initial ? update : create;

  const typed = useDeferredValue({ cronExpr, timezone });
  const preview = useQuery(trpc.schedules.preview.queryOptions(
    { tenantId, cronExpr: typed.cronExpr, timezone: typed.timezone, n: 5 },
    { enabled: typed.cronExpr.trim() !== "" && typed.timezone.trim() !== "", placeholderData: keepPreviousData, retry: false },
  ));
  const words = cronInWords(cronExpr);
  const choices = (sequences ?? []).filter((s) => !s.deprecated || s.id === sequenceId);

  const done = () => {
    save.reset();
    onSaved();
  };

  return (
    <section className="card" aria-labelledby="schedule-form-heading">
      <h2 id="schedule-form-heading">{initial ? `Edit schedule ${initial.cronExpr}` : "Add a schedule"}</h2>
      <ChangeError what="save the schedule" error={save.error} />
      <form
        className="form-row"
        aria-label={initial ? "Edit the schedule" : "Add a schedule"}
        onSubmit={(event) => {
          event.preventDefault();
          if (initial) update.mutate({ tenantId, id: initial.id, cronExpr, timezone, overlapPolicy }, { onSuccess: done });
          else create.mutate({ tenantId, sequenceId, cronExpr, timezone, overlapPolicy }, { onSuccess: done });
        }}
      >
        {!fixedSequenceId && !initial && (
          <label>
            Sequence
            <select className="input" name="sequence" required value={sequenceId} disabled={!sequences} onChange={(event) => setSequenceId(event.target.value)}>
              <option value="">{sequences ? "Pick a sequence" : "Loading…"}</option>
              {choices.map((s) => <option key={s.id} value={s.id}>{s.name} v{s.version}</option>)}
            </select>
          </label>
        )}
        <label>
          Cron expression
          <input
            className="input"
            name="cronExpr"
            required
            maxLength={256}
            autoComplete="off"
            spellCheck={false}
            value={cronExpr}
            onChange={(event) => setCronExpr(event.target.value)}
          />
        </label>
        <label>
          Time zone
          <input className="input" name="timezone" required maxLength={64} list="schedule-zones" value={timezone} onChange={(event) => setTimezone(event.target.value)} />
          {hydrated && <datalist id="schedule-zones">{ZONES.map((zone) => <option key={zone} value={zone} />)}</datalist>}
        </label>
        <label>
          When a run is still active
          <select className="input" name="overlapPolicy" value={overlapPolicy} onChange={(event) => setOverlapPolicy(event.target.value as Policy)}>
            {POLICIES.map((policy) => <option key={policy} value={policy}>{OVERLAP_LABELS[policy]}</option>)}
          </select>
        </label>
        <button className="btn btn-primary" type="submit" disabled={save.isPending || preview.isError}>
          {save.isPending ? "Saving…" : initial ? "Save schedule" : "Add schedule"}
        </button>
        {initial && <button className="btn" type="button" onClick={onCancel}>Cancel</button>}
      </form>
      <div aria-live="polite" aria-label="Preview">
        {preview.isError ? (
          <p className="alert alert-error" role="alert">{preview.error.message}</p>
        ) : (
          <>
            {words && <p><strong>{words}</strong> ({timezone})</p>}
            {preview.data && preview.data.fires.length > 0 && (
              <ol className="muted" aria-label="Next fires">
                {preview.data.fires.map((fire) => <li key={fire}><time dateTime={fire}>{timeIn(fire, preview.data.timezone)}</time> · yours: {timeIn(fire)}</li>)}
              </ol>
            )}
          </>
        )}
      </div>
    </section>
  );
}
