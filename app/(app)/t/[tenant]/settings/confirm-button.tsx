"use client";

import { useState } from "react";

/**
 * A button that asks first: "Remove" becomes an inline "Remove x? Confirm / Cancel", so a
 * destructive action is never one click (or one stray Enter).
 */
export function ConfirmButton({
  label,
  accessibleLabel,
  question,
  pending,
  pendingLabel,
  onConfirm,
}: {
  label: string;
  /** The button's name for screen readers, naming what it acts on (it must contain `label`). */
  accessibleLabel: string;
  question: string;
  pending: boolean;
  pendingLabel: string;
  onConfirm: () => void;
}) {
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button type="button" className="btn btn-small" aria-label={accessibleLabel} onClick={() => setConfirming(true)} disabled={pending}>
        {pending ? pendingLabel : label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={`Confirm: ${accessibleLabel}`}>
      <span>{question}</span>
      <button
        type="button"
        className="btn btn-small btn-danger"
        onClick={() => {
          setConfirming(false);
          onConfirm();
        }}
      >
        Confirm
      </button>
      {/* Focus lands on Cancel: a second Enter must not confirm. */}
      <button type="button" className="btn btn-small" onClick={() => setConfirming(false)} autoFocus>
        Cancel
      </button>
    </span>
  );
}

/** A failed change, said next to what it was about rather than lost. */
export function ChangeError({ what, error }: { what: string; error: { message: string } | null }) {
  if (!error) return null;
  return (
    <div className="alert alert-error" role="alert">
      Could not {what}: {error.message}
    </div>
  );
}
