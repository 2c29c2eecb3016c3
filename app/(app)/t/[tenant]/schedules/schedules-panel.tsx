"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { ChangeError, ConfirmButton } from "../../../../_components/confirm-button";
import { useLiveRefresh } from "../../../../_components/live";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { cronInWords, OVERLAP_LABELS, timeIn, viewerZone } from "./cron-words";
import { ScheduleForm, type ScheduleDraft } from "./schedule-form";
import { useHydrated } from "../../../../_components/local-time";

interface Schedule {
  id: string;
  sequenceId: string;
  cronExpr: string;
  timezone: string;
  enabled: boolean;
  overlapPolicy: keyof typeof OVERLAP_LABELS;
  skippedFires: number;
  lastTriggeredAt: string | null;
  nextFires: string[];
  latestRuns: { id: string; state: string; createdAt: string }[];
}

/**
 * The tenant's schedules (or one sequence's, with `sequenceId`): each in words with its next 5
 * fires in its zone and the viewer's, its latest runs, and enable/disable, edit and delete; a form
 * to add one. Refreshed as the tenant's instances change (a fire creates one), so a new run shows.
 */
export function SchedulesPanel({ tenantId, sequenceId }: { tenantId: string; sequenceId?: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { tenantId, ...(sequenceId ? { sequenceId } : {}) };
  const schedules = useQuery(trpc.schedules.list.queryOptions(input, {
    refetchInterval: useLiveRefresh(tenantId, trpc.schedules.list.queryKey(input), 5_000),
  }));
  const sequences = useQuery(trpc.sequences.list.queryOptions({ tenantId }));
  const invalidate = () => queryClient.invalidateQueries(trpc.schedules.pathFilter());
  const update = useMutation(trpc.schedules.update.mutationOptions({ onSettled: invalidate }));
  const remove = useMutation(trpc.schedules.remove.mutationOptions({ onSettled: invalidate }));
  const [editing, setEditing] = useState<ScheduleDraft | null>(null);

  const nameOf = (id: string) => {
    const sequence = sequences.data?.find((s) => s.id === id);
    return sequence ? `${sequence.name} v${sequence.version}` : id.slice(0, 8);
  };

  let list;
  if (schedules.error) list = <QueryError error={schedules.error} />;
  else if (!schedules.data) list = <div className="skeleton" aria-busy="true" aria-label="Loading schedules" />;
  else if (schedules.data.length === 0) {
    list = <p className="empty">No schedules yet. Add one below to start {sequenceId ? "this sequence" : "a sequence"} on a cron expression.</p>;
  } else {
    list = (
      <ul className="schedule-list" aria-label="Schedules">
        {schedules.data.map((schedule) => (
          <ScheduleCard
            key={schedule.id}
            tenantId={tenantId}
            schedule={schedule}
            sequenceName={nameOf(schedule.sequenceId)}
            busy={(update.isPending && update.variables?.id === schedule.id) || (remove.isPending && remove.variables?.id === schedule.id)}
            onToggle={() => update.mutate({ tenantId, id: schedule.id, enabled: !schedule.enabled })}
            onEdit={() => setEditing({ ...schedule })}
            onDelete={() => remove.mutate({ tenantId, id: schedule.id })}
          />
        ))}
      </ul>
    );
  }

  return (
    <>
      <ChangeError what="change the schedule" error={update.error} />
      <ChangeError what="delete the schedule" error={remove.error} />
      {list}
      <ScheduleForm
        key={editing?.id ?? "new"}
        tenantId={tenantId}
        sequences={sequences.data ?? null}
        fixedSequenceId={sequenceId}
        initial={editing}
        onSaved={() => { setEditing(null); void invalidate(); }}
        onCancel={() => setEditing(null)}
      />
    </>
  );
}

function ScheduleCard({
  tenantId, schedule, sequenceName, busy, onToggle, onEdit, onDelete,
}: {
  tenantId: string;
  schedule: Schedule;
  sequenceName: string;
  busy: boolean;
  onToggle: () => void;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const words = cronInWords(schedule.cronExpr);
  // The viewer's zone and locale are the browser's: the server (and hydration) say UTC, in English.
  const hydrated = useHydrated();
  const here = hydrated ? viewerZone() : "UTC";
  const at = (iso: string, zone?: string) => (hydrated ? timeIn(iso, zone) : timeIn(iso, zone ?? "UTC", "en-US"));
  return (
    <li className="card schedule" aria-label={`Schedule ${schedule.cronExpr} of ${sequenceName}`}>
      <div className="schedule-head">
        <div>
          <strong>{words ?? schedule.cronExpr}</strong>
          <div className="muted">
            <code>{schedule.cronExpr}</code> in {schedule.timezone} · <Link prefetch={false} href={`/t/${tenantId}/sequences/${schedule.sequenceId}`}>{sequenceName}</Link>
          </div>
        </div>
        <span className={schedule.enabled ? "badge badge-ok" : "badge"}>{schedule.enabled ? "enabled" : "disabled"}</span>
      </div>
      <p className="muted">
        {OVERLAP_LABELS[schedule.overlapPolicy]}
        {schedule.skippedFires > 0 ? ` · ${schedule.skippedFires} skipped` : ""}
        {schedule.lastTriggeredAt ? ` · last fired ${at(schedule.lastTriggeredAt)}` : " · not fired yet"}
      </p>
      <div className="table-wrap">
        <table className="table" aria-label={`Next fires of ${schedule.cronExpr}`}>
          <thead>
            <tr>
              <th scope="col">Next fires in {schedule.timezone}</th>
              <th scope="col">Your time ({here})</th>
            </tr>
          </thead>
          <tbody>
            {schedule.nextFires.length === 0 ? (
              <tr><td colSpan={2} className="muted">No later occurrence.</td></tr>
            ) : schedule.nextFires.map((fire) => (
              <tr key={fire}>
                <td><time dateTime={fire}>{at(fire, schedule.timezone)}</time></td>
                <td><time dateTime={fire}>{at(fire)}</time></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {schedule.latestRuns.length > 0 && (
        <p aria-label="Latest runs">
          Latest runs:{" "}
          {schedule.latestRuns.map((run, index) => (
            <span key={run.id}>
              {index > 0 && ", "}
              <Link prefetch={false} href={`/t/${tenantId}/instances/${run.id}`}>{run.id.slice(0, 8)}</Link> <span className="badge">{run.state}</span>
            </span>
          ))}
        </p>
      )}
      <div className="cell-actions">
        <button type="button" className="btn btn-small" disabled={busy} onClick={onToggle} aria-label={`${schedule.enabled ? "Disable" : "Enable"} schedule ${schedule.cronExpr}`}>
          {schedule.enabled ? "Disable" : "Enable"}
        </button>
        <button type="button" className="btn btn-small" onClick={onEdit} aria-label={`Edit schedule ${schedule.cronExpr}`}>Edit</button>
        <ConfirmButton
          label="Delete"
          accessibleLabel={`Delete schedule ${schedule.cronExpr}`}
          question="Delete this schedule? Runs it started are kept."
          pending={busy}
          pendingLabel="Deleting…"
          onConfirm={onDelete}
        />
      </div>
    </li>
  );
}
