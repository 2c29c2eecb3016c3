"use client";

import { useState } from "react";

const UNIT_SECS = { minutes: 60, hours: 3_600 } as const;
type Unit = keyof typeof UNIT_SECS;
/** bulkReschedule's bound either way (a year). */
const MAX_SECS = 31_536_000;

/** "2 hours later" / "30 minutes earlier". */
export function describeShift(secs: number): string {
  const abs = Math.abs(secs);
  const [amount, unit] = abs % 3_600 === 0 ? [abs / 3_600, "hour"] : [abs / 60, "minute"];
  return `${amount.toLocaleString("en-US")} ${unit}${amount === 1 ? "" : "s"} ${secs < 0 ? "earlier" : "later"}`;
}

/** How far to move scheduled instances: a signed whole number of minutes or hours. */
export function RescheduleShift({ onPreview, onBack }: { onPreview: (offsetSecs: number) => void; onBack: () => void }) {
  const [amount, setAmount] = useState("1");
  const [unit, setUnit] = useState<Unit>("hours");
  const value = Number(amount);
  const secs = value * UNIT_SECS[unit];
  const error = !Number.isInteger(value) || value === 0
    ? "A whole number other than 0 (negative: earlier)."
    : Math.abs(secs) > MAX_SECS ? "At most a year either way." : null;

  return (
    <form
      className="form-row bulk-shift"
      aria-label="Reschedule by"
      onSubmit={(event) => {
        event.preventDefault();
        if (!error) onPreview(secs);
      }}
    >
      <label>
        Move due time by
        <input
          className="input"
          type="number"
          step={1}
          value={amount}
          onChange={(event) => setAmount(event.target.value)}
          aria-invalid={error !== null}
          aria-describedby="shift-help"
        />
      </label>
      <label>
        Unit
        <select className="select" value={unit} onChange={(event) => setUnit(event.target.value as Unit)}>
          <option value="minutes">minutes</option>
          <option value="hours">hours</option>
        </select>
      </label>
      <button type="submit" className="btn btn-small" disabled={error !== null}>Preview</button>
      <button type="button" className="btn btn-small" onClick={onBack}>Back</button>
      <p id="shift-help" className={error ? "field-error" : "muted bulk-hint"}>{error ?? "Scheduled instances only; negative moves them earlier."}</p>
    </form>
  );
}
