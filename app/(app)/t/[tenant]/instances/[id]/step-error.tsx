"use client";

import type { WireError } from "./detail-types";
import { errorFacts } from "./run-format";

/** A step error as text: its message, then its code, HTTP status and handler. Never the raw JSON. */
export function StepErrorText({ error, compact = false }: { error: WireError; compact?: boolean }) {
  const facts = errorFacts(error);
  if (compact) {
    return (
      <span className="step-error-inline" title={`${error.message} (${facts.join(" · ")})`}>
        {error.message}
      </span>
    );
  }
  return (
    <div className="step-error">
      <p className="step-error-message">{error.message}</p>
      <p className="step-error-facts">{facts.join(" · ")}</p>
    </div>
  );
}
