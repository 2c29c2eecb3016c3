"use client";

import { BULK_CALL_LIMIT, VERB } from "./bulk-scope";
import type { BulkRun } from "./use-bulk-run";

const n = (count: number) => count.toLocaleString("en-US");

/** A bulk job under way (done so far, Stop) or its summary (applied / skipped / failed). */
export function BulkProgress({ run, onStop, onDismiss }: { run: Exclude<BulkRun, { phase: "idle" }>; onStop: () => void; onDismiss: () => void }) {
  const { job, totals } = run;
  const verb = VERB[job.kind];
  // The dry run counts at most one call's worth: beyond that the total is not known.
  const of = job.expected >= BULK_CALL_LIMIT ? `${n(BULK_CALL_LIMIT)}+` : n(job.expected);
  const processed = totals.applied + totals.skipped + totals.failed;

  if (run.phase === "running") {
    return (
      <div className="bulk-panel" aria-busy="true">
        <p role="status" className="bulk-progress">
          {run.stopping ? "Stopping after this call… " : `${verb.doing}… `}
          {n(processed)} of {of} done
        </p>
        <progress max={Math.max(job.expected, processed, 1)} value={processed} aria-label={`${verb.now} progress`} />
        {job.kind !== "reschedule" && (
          <div className="actions">
            <button type="button" className="btn btn-small" onClick={onStop} disabled={run.stopping}>
              Stop after this call
            </button>
          </div>
        )}
      </div>
    );
  }
  return (
    <div className="bulk-panel">
      {run.error && (
        <p className="alert alert-error" role="alert">
          Stopped by an error: {run.error}
        </p>
      )}
      <p role="status" className="bulk-summary">
        {run.error ? "Before it: " : run.stopped ? "Stopped: " : "Done: "}
        <strong>{n(totals.applied)} {verb.done}</strong>
        {job.kind !== "reschedule" && <>, {n(totals.skipped)} skipped, {n(totals.failed)} failed</>}.
      </p>
      {job.kind === "cancel" && totals.applied > 0 && (
        <p className="muted">Each gets a cancel signal; the engine stops them in the next few seconds.</p>
      )}
      <button type="button" className="btn btn-small" onClick={onDismiss}>
        Close
      </button>
    </div>
  );
}
