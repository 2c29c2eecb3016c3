"use client";

import { formatDuration } from "./run-format";
import { useNow } from "./use-now";

/**
 * "12 s" since `since`, ticking every second. Without a clock yet (server render, hydration) it
 * counts to `fallbackNow`, the latest time the data knows.
 */
export function Elapsed({ since, fallbackNow }: { since: number; fallbackNow: number }) {
  const now = useNow(true) ?? fallbackNow;
  return <span className="elapsed">{formatDuration(Math.max(0, now - since))}</span>;
}
