"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../../../_components/trpc";
import type { InstanceState } from "./instance-ui";
import { BulkProgress } from "./bulk-progress";
import { RescheduleShift, describeShift } from "./reschedule-shift";
import { actionFilter, bulkBlockedReason, BULK_CALL_LIMIT, sameFilter, VERB, type BulkFilter, type BulkKind } from "./bulk-scope";
import { useBulkRun } from "./use-bulk-run";

export interface ListFilters {
  states: InstanceState[];
  sequence: string;
  q: string;
  after: string;
  before: string;
}

type Step =
  | { at: "closed" }
  | { at: "menu" }
  | { at: "shift" }
  | { at: "preview"; kind: BulkKind; filter: BulkFilter | null; offsetSecs?: number };

const n = (count: number) => count.toLocaleString("en-US");

/**
 * Cancel, retry or reschedule every instance the list's state and sequence filters match (not
 * only the rows loaded): a dry run's count first, then Confirm. For tenant admins.
 */
export function BulkActions({ tenantId, list }: { tenantId: string; list: ListFilters }) {
  const trpc = useTRPC();
  const [step, setStep] = useState<Step>({ at: "closed" });
  const count = useMutation(trpc.instances.batchAction.mutationOptions());
  const bulk = useBulkRun(tenantId);
  const blocked = bulkBlockedReason(list);

  const preview = (kind: BulkKind, offsetSecs?: number) => {
    const filter = actionFilter(kind, list);
    setStep({ at: "preview", kind, filter, offsetSecs });
    count.reset();
    // Only counts: the action is irrelevant to a dry run, which selects by the filter alone.
    if (filter) count.mutate({ tenantId, action: kind === "reschedule" ? "pause" : kind, filter, dryRun: true, limit: BULK_CALL_LIMIT });
  };
  // A preview made for other filters than the list now has counts the wrong set: choose again.
  const current = step.at === "preview" && !sameFilter(step.filter, actionFilter(step.kind, list)) ? { at: "menu" as const } : step;

  let body: React.ReactNode = null;
  if (bulk.run.phase !== "idle") {
    body = <BulkProgress run={bulk.run} onStop={bulk.stop} onDismiss={() => { bulk.dismiss(); setStep({ at: "closed" }); }} />;
  } else if (current.at === "menu") {
    body = (
      <div className="bulk-panel">
        <div className="actions bulk-choices" role="group" aria-label="Choose a bulk action">
          <button type="button" className="btn btn-small" onClick={() => preview("cancel")}>Cancel…</button>
          <button type="button" className="btn btn-small" onClick={() => preview("retry")}>Retry failed…</button>
          <button type="button" className="btn btn-small" onClick={() => setStep({ at: "shift" })}>Reschedule…</button>
        </div>
        <p className="muted bulk-hint">Acts on every instance these filters match, not only the rows loaded below.</p>
      </div>
    );
  } else if (current.at === "shift") {
    body = (
      <div className="bulk-panel">
        <RescheduleShift onPreview={(secs) => preview("reschedule", secs)} onBack={() => setStep({ at: "menu" })} />
      </div>
    );
  } else if (current.at === "preview") {
    const { kind, filter, offsetSecs } = current;
    const matched = filter ? count.data?.matched : 0;
    const back = () => setStep({ at: "menu" });
    body = (
      <div className="bulk-panel" aria-busy={count.isPending}>
        {count.error ? (
          <>
            <p className="alert alert-error" role="alert">Could not count them: {count.error.message}</p>
            <div className="actions">
              <button type="button" className="btn btn-small" onClick={() => preview(kind, offsetSecs)}>Try again</button>
              <button type="button" className="btn btn-small" onClick={back}>Back</button>
            </div>
          </>
        ) : matched === undefined ? (
          <p className="muted" role="status">Counting the instances…</p>
        ) : matched === 0 ? (
          <>
            <p className="bulk-preview" role="status">Nothing to do: no {scopeText(kind, filter)} match these filters.</p>
            <button type="button" className="btn btn-small" onClick={back}>Back</button>
          </>
        ) : (
          <>
            <p className="bulk-preview" role="status">
              This will {VERB[kind].now} <strong>{matched >= BULK_CALL_LIMIT ? "at least " : ""}{n(matched)}</strong>{" "}
              {scopeText(kind, filter, matched)}
              {kind === "reschedule" && offsetSecs !== undefined && <> {describeShift(offsetSecs)}</>}.
            </p>
            {matched >= BULK_CALL_LIMIT && kind !== "reschedule" && (
              <p className="muted bulk-hint">It runs {n(BULK_CALL_LIMIT)} at a time until none are left; you can stop it between calls.</p>
            )}
            <div className="actions">
              <button
                type="button"
                className="btn btn-small btn-danger"
                onClick={() => filter && bulk.start({ kind, filter, expected: matched, offsetSecs })}
              >
                Confirm
              </button>
              {/* Focus lands on the safe choice, as in ConfirmButton: a second Enter must not apply. */}
              <button type="button" className="btn btn-small" onClick={back} autoFocus>Back</button>
            </div>
          </>
        )}
      </div>
    );
  }

  const open = current.at !== "closed" || bulk.run.phase !== "idle";
  return (
    <section className="card bulk" aria-label="Bulk actions">
      <div className="bulk-bar">
        <button
          type="button"
          className="btn btn-small"
          aria-expanded={open}
          disabled={blocked !== null || bulk.run.phase === "running"}
          aria-describedby={blocked ? "bulk-blocked" : undefined}
          onClick={() => setStep(open ? { at: "closed" } : { at: "menu" })}
        >
          Bulk actions
        </button>
        {blocked && <span id="bulk-blocked" className="muted">{blocked}</span>}
      </div>
      {!blocked || bulk.run.phase !== "idle" ? body : null}
    </section>
  );
}

/** "scheduled instances of this sequence", as the filter has them. */
function scopeText(kind: BulkKind, filter: BulkFilter | null, count = 2): string {
  const noun = count === 1 ? "instance" : "instances";
  const states = kind === "cancel" ? "" : `${filter?.states.join(" or ") ?? (kind === "retry" ? "failed" : "scheduled")} `;
  return `${states}${noun}${filter?.sequenceId ? " of this sequence" : ""}`;
}
