"use client";

import { useState } from "react";

/**
 * A button that asks first: "Remove" becomes an inline "Remove x? Confirm / Cancel", so a
 * destructive action is never one click (or one stray Enter). One component for every such
 * action: resets, removals, revocations, cancelling an instance.
 */
export function ConfirmButton({
  label,
  accessibleLabel = label,
  question,
  confirmLabel = "Confirm",
  cancelLabel = "Cancel",
  pending,
  pendingLabel = label,
  disabled = false,
  prominent = false,
  onConfirm,
}: {
  label: string;
  /** The button's name for screen readers, naming what it acts on (it must contain `label`). */
  accessibleLabel?: string;
  question: string;
  confirmLabel?: string;
  cancelLabel?: string;
  pending: boolean;
  pendingLabel?: string;
  disabled?: boolean;
  /** A full-size danger button (a page action) rather than a small one in a table row. */
  prominent?: boolean;
  onConfirm: () => void;
}) {
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button
        type="button"
        className={prominent ? "btn btn-danger" : "btn btn-small"}
        aria-label={accessibleLabel}
        onClick={() => setConfirming(true)}
        disabled={disabled || pending}
      >
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
        {confirmLabel}
      </button>
      {/* Focus lands on the safe choice: a second Enter must not confirm. */}
      <button type="button" className="btn btn-small" onClick={() => setConfirming(false)} autoFocus>
        {cancelLabel}
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
