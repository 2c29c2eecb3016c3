"use client";

import { useId, useRef, useState } from "react";

/**
 * A secret the server returns once (a new API key, a new account's password): shown in a marked
 * box with Copy, until dismissed. It lives only in this component's state, never in a query cache.
 */
export function OneTimeSecret({
  label,
  title,
  note,
  value,
  onDismiss,
}: {
  /** The value's accessible name, e.g. "New API key secret" (tests find it by this). */
  label: string;
  title: string;
  note: string;
  value: string;
  onDismiss: () => void;
}) {
  const titleId = useId();
  const input = useRef<HTMLInputElement>(null);
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <div className="secret-box" role="region" aria-labelledby={titleId}>
      <p className="secret-box-title" id={titleId}>
        <strong>{title}</strong> <span className="badge badge-warn">shown once</span>
      </p>
      <p className="secret-box-note">{note} It is shown once: copy it now, it cannot be shown again.</p>
      <div className="secret-box-row">
        {/* Focused on arrival, so keyboard users can copy it straight away. */}
        <input
          ref={input}
          className="input mono secret-box-value"
          readOnly
          value={value}
          aria-label={label}
          autoComplete="off"
          spellCheck={false}
          autoFocus
          onFocus={(event) => event.currentTarget.select()}
        />
        <button
          type="button"
          className="btn"
          aria-label={`Copy ${label.toLowerCase()}`}
          onClick={() => {
            navigator.clipboard.writeText(value).then(
              () => setCopy("copied"),
              () => {
                // No clipboard access (e.g. plain http): leave it selected for Ctrl+C.
                input.current?.select();
                setCopy("failed");
              },
            );
          }}
        >
          Copy
        </button>
        <button type="button" className="btn" onClick={onDismiss}>
          Done
        </button>
      </div>
      <p className="secret-box-status muted" role="status">
        {copy === "copied" ? "Copied to the clipboard." : copy === "failed" ? "Could not copy: it is selected, press Ctrl+C (⌘C)." : ""}
      </p>
    </div>
  );
}
