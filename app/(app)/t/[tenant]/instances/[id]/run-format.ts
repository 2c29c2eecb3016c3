// Words and numbers of the run view: durations, attempt counts, error facts. Pure, so they can be
// used in memoised computations and rendered the same on the server and in the browser.
import type { DetailNode, WireError } from "./detail-types";

/** "340 ms", "1.2 s", "3 min 12 s", "2 h 5 min". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 60_000) return `${Math.floor(ms / 1_000)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.floor((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A time of day to the second, for rows that all happen on the same day (the full date is in `dateTime` and the title). */
export function clockTime(iso: string): string {
  return new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** "16:11:54.123 UTC": the same text on the server and in any browser, so it may sit in an attribute that hydration does not patch. */
export function utcClock(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 23)} UTC`;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "attempt 3 of 3" (attempt numbers are 0-based on the wire). Past the policy's allowance (a manual retry), the allowance is said apart. */
export function attemptOf(attempt: number, maxAttempts: number | null): string {
  const n = attempt + 1;
  if (maxAttempts === null) return `attempt ${n}`;
  if (n <= maxAttempts) return `attempt ${n} of ${maxAttempts}`;
  return `attempt ${n} (its retry policy allows ${maxAttempts}; the rest were manual retries)`;
}

/** The attempt a failed step failed on: its last recorded attempt, or the node's counter. */
export function failedAttempt(node: DetailNode): number {
  return node.attempts.at(-1)?.attempt ?? node.attempt;
}

/** "3 attempts (up to 3 allowed)"; after a manual retry the counter runs on, and the earlier attempts are not kept: "1 attempt in this run (attempt 4 in all)". */
export function attemptsSummary(node: DetailNode): string {
  const kept = node.attempts.length;
  const inAll = (node.attempts.at(-1)?.attempt ?? 0) + 1;
  const allowed = node.maxAttempts !== null ? `up to ${node.maxAttempts} allowed` : null;
  if (inAll > kept) return `${plural(kept, "attempt")} in this run (attempt ${inAll} in all${allowed ? `; ${allowed}` : ""})`;
  return `${plural(kept, "attempt")}${allowed ? ` (${allowed})` : ""}`;
}

/** An error's facts beside its message: code, HTTP status, handler. */
export function errorFacts(error: WireError): string[] {
  return [
    error.httpStatus !== null ? `HTTP ${error.httpStatus}` : null,
    error.code !== null ? `code ${error.code}` : null,
    error.handler !== null ? `handler ${error.handler}` : null,
    error.retryable ? "retryable" : "not retryable",
  ].filter((fact): fact is string => fact !== null);
}

const MARKERS = new Set(["__in_progress__", "__retry__", "__error__"]);

/** An output row that is a real output, not one of the engine's markers. */
export const isRealOutput = (outputRef: string | null) => outputRef === null || !MARKERS.has(outputRef);

/** The message of an `__error__` output (`{__error__: true, message, retryable}`), or null when it is not one. */
export function errorOutputMessage(outputRef: string | null, output: unknown): string | null {
  const record = typeof output === "object" && output !== null ? (output as Record<string, unknown>) : null;
  if (outputRef !== "__error__" && record?.__error__ !== true) return null;
  return typeof record?.message === "string" ? record.message : "failed (no message was recorded)";
}
