// What a failed attempt leads to (wire-format A.3 RetryPolicy, C.11, Appendix 13).
import type { RetryPolicy } from "../sequence/schema.ts";

type Backoff = Pick<RetryPolicy, "max_attempts" | "initial_backoff" | "max_backoff" | "backoff_multiplier">;

/** Backoff before re-running after 0-based attempt `n` failed: min(initial * multiplier^n, max). */
export function backoffMs(policy: Backoff, attempt: number): number {
  return Math.min(policy.initial_backoff * policy.backoff_multiplier ** attempt, policy.max_backoff);
}

/**
 * The due time of the next attempt, or null when the step has failed for good: a permanent
 * failure, no policy (a retryable failure without one is treated as permanent), or
 * `max_attempts` runs used (it counts every run, the first included).
 */
export function nextAttemptAt(policy: Backoff | null | undefined, attempt: number, retryable: boolean, now: Date): Date | null {
  if (!retryable || !policy || attempt + 1 >= policy.max_attempts) return null;
  return new Date(now.getTime() + backoffMs(policy, attempt));
}

/**
 * Whether a retryable failure may be retried under the policy's filters: none of
 * `non_retryable_codes` appears in the failure's message (handlers put codes such as "HTTP 404"
 * or a worker's error code in it), and `retry_if`, when set, is truthy. The expression is
 * lenient (a parse error reads as false) and sees `runtime.error` and `runtime.attempt`.
 */
export function mayRetry(
  policy: Pick<RetryPolicy, "retry_if" | "non_retryable_codes"> | null | undefined,
  message: string,
  retryIf: (expression: string) => boolean,
): boolean {
  if (!policy) return true;
  if (policy.non_retryable_codes?.some((code) => code !== "" && message.includes(code))) return false;
  return policy.retry_if === undefined || retryIf(policy.retry_if);
}
