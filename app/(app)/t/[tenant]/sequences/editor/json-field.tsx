"use client";

// A JSON value edited as text: applied when it loses focus and parses, otherwise the error shows.
import { useId, useState } from "react";

/** A JSON value edited as text; applied on blur when it parses, otherwise the error shows. */
export function JsonField({ label, value, onChange, hint, absentAs }: { label: string; value: unknown; onChange(value: unknown): void; hint?: string; absentAs?: unknown }) {
  const id = useId();
  const shown = value === undefined ? absentAs : value;
  const [draft, setDraft] = useState(() => JSON.stringify(shown ?? null, null, 2));
  const [error, setError] = useState<string | null>(null);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="input textarea"
        value={draft}
        aria-invalid={error ? true : undefined}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={() => {
          try {
            const parsed: unknown = draft.trim() === "" ? null : JSON.parse(draft);
            setError(null);
            onChange(parsed);
          } catch (e) {
            setError(`Not valid JSON: ${(e as Error).message}`);
          }
        }}
      />
      {hint && (
        <p id={`${id}-hint`} className="muted form-hint">
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
