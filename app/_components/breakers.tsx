"use client";

import { ConfirmButton } from "./confirm-button";
import { useEffect, useState } from "react";

// Pieces shared by the tenant's breakers page and the operator's: the state badge, a countdown
// to the end of the cooldown, and the reset button with its inline confirmation.

export type BreakerState = "closed" | "open" | "half_open";

const STATE_LABEL: Record<BreakerState, string> = { closed: "closed", open: "open", half_open: "half open" };
const STATE_CLASS: Record<BreakerState, string> = { closed: "badge badge-ok", open: "badge badge-danger", half_open: "badge badge-warn" };

export function BreakerStateBadge({ state }: { state: BreakerState }) {
  return <span className={STATE_CLASS[state]}>{STATE_LABEL[state]}</span>;
}

/**
 * A clock that ticks every second, for countdowns. It reads `start` until its first tick, so the
 * page the server drew and its first render in the browser say the same.
 */
function useNow(start: number): number {
  const [now, setNow] = useState(start);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

function formatSeconds(total: number): string {
  if (total < 60) return `${total} s`;
  const minutes = Math.floor(total / 60);
  const seconds = total % 60;
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

/**
 * Time left in the cooldown, counted down from what the server said when the data was fetched
 * (`fetchedAt`), so the browser's clock being off does not matter.
 */
export function TimeLeft({ state, secondsLeft, fetchedAt }: { state: BreakerState; secondsLeft: number; fetchedAt: number }) {
  const now = useNow(fetchedAt);
  if (state !== "open") return <span className="muted">next call probes</span>;
  const left = Math.max(0, secondsLeft - Math.floor(Math.max(0, now - fetchedAt) / 1_000));
  return left > 0 ? <span className="mono">{formatSeconds(left)}</span> : <span className="muted">probing soon</span>;
}

/** "Reset" and then an inline "Reset? Confirm / Cancel": a reset is never one click. */
export function ResetButton({ handler, pending, onConfirm }: { handler: string; pending: boolean; onConfirm: () => void }) {
  return (
    <ConfirmButton label="Reset" accessibleLabel={`Reset ${handler}`} question="Reset?" pending={pending} pendingLabel="Resetting…" onConfirm={onConfirm} />
  );
}

/** A reset that failed, said next to the table rather than lost. */
export function MutationError({ error }: { error: { message: string } | null }) {
  if (!error) return null;
  return (
    <div className="alert alert-error" role="alert">
      Could not reset: {error.message}
    </div>
  );
}
