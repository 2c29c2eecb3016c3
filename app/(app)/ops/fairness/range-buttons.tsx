"use client";

import { usePathname, useSearchParams } from "next/navigation";
import { RANGES, readRange, type FairnessRange } from "./fairness-data";

/** The range in the address (?range=), read and set without a server round trip. */
export function useRange(): [FairnessRange, (next: FairnessRange) => void] {
  const pathname = usePathname();
  const range = readRange(useSearchParams().get("range"));
  // replaceState keeps the range in the address; Next.js follows it in useSearchParams.
  return [range, (next) => window.history.replaceState(null, "", `${pathname}?range=${next}`)];
}

export function RangeButtons({ range, onChange }: { range: FairnessRange; onChange: (next: FairnessRange) => void }) {
  return (
    <div className="segmented" role="group" aria-label="Time range">
      {RANGES.map((r) => (
        <button key={r.value} type="button" className="btn btn-small" aria-pressed={r.value === range} onClick={() => onChange(r.value)}>
          {r.label}
        </button>
      ))}
    </div>
  );
}
