"use client";

// The instances page's search box: what is typed is applied (to the address, which the list
// reads) once typing pauses, or at once on Enter. Its text follows the address too, so Back and
// "Clear filters" show in the box what the list shows.

import { useEffect, useEffectEvent, useId, useState } from "react";
import { SEARCH_HINT } from "../../../../../engine/instance-search.ts";
import styles from "./instance-search.module.css";

const DEBOUNCE_MS = 300;

export function InstanceSearchBox({
  applied, onApply, error, searching,
}: {
  /** The search the list shows (the address's `q`). */
  applied: string;
  onApply: (text: string) => void;
  /** Why the applied text is no search, or null. */
  error: string | null;
  /** A search is being read. */
  searching: boolean;
}) {
  const [text, setText] = useState(applied);
  // The address changed without the box (Back, "Clear filters"): show what it says now.
  const [shown, setShown] = useState(applied);
  if (applied !== shown) {
    setShown(applied);
    setText(applied);
  }
  const apply = useEffectEvent((value: string) => onApply(value));
  useEffect(() => {
    if (text === applied) return;
    const timer = setTimeout(() => apply(text), DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text, applied]);

  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  return (
    <div className={styles.box}>
      <label htmlFor={inputId}>Search</label>
      <input
        id={inputId}
        className="input"
        type="search"
        name="q"
        value={text}
        placeholder={'1b2c3d, a whole id, or data.order = "A-102"'}
        autoComplete="off"
        spellCheck={false}
        aria-invalid={error !== null}
        aria-describedby={error !== null ? errorId : hintId}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter") {
            event.preventDefault();
            onApply(text);
          }
        }}
      />
      {error !== null ? (
        <span id={errorId} className="field-error" role="alert">{error}</span>
      ) : (
        <span id={hintId} className="field-hint" aria-live="polite">
          {searching ? "Searching…" : `Search by ${SEARCH_HINT}.`}
        </span>
      )}
    </div>
  );
}
