import { describe, expect, it } from "vitest";
import { backoffMs, mayRetry, nextAttemptAt } from "./retry.ts";

const policy = { max_attempts: 4, initial_backoff: 100, max_backoff: 500, backoff_multiplier: 2 };
const now = new Date("2026-01-01T00:00:00Z");

describe("retry", () => {
  it("backs off as min(initial * multiplier^n, max)", () => {
    expect([0, 1, 2, 3, 4].map((n) => backoffMs(policy, n))).toEqual([100, 200, 400, 500, 500]);
    expect(backoffMs({ ...policy, backoff_multiplier: 1.5 }, 2)).toBe(225);
  });

  it("counts max_attempts as the total number of runs", () => {
    expect(nextAttemptAt(policy, 0, true, now)).toEqual(new Date(now.getTime() + 100));
    expect(nextAttemptAt(policy, 2, true, now)).toEqual(new Date(now.getTime() + 400));
    expect(nextAttemptAt(policy, 3, true, now)).toBeNull(); // the 4th run failed: no 5th
    expect(nextAttemptAt({ ...policy, max_attempts: 1 }, 0, true, now)).toBeNull();
  });

  it("never retries a permanent failure, nor a retryable one without a policy", () => {
    expect(nextAttemptAt(policy, 0, false, now)).toBeNull();
    expect(nextAttemptAt(null, 0, true, now)).toBeNull();
  });
});

describe("retry filters", () => {
  const always = () => true;
  it("refuse a message carrying a non-retryable code", () => {
    expect(mayRetry({ retry_if: undefined, non_retryable_codes: ["HTTP 404"] }, "HTTP 404 Not Found: gone", always)).toBe(false);
    expect(mayRetry({ retry_if: undefined, non_retryable_codes: ["HTTP 404"] }, "HTTP 503 Service Unavailable", always)).toBe(true);
  });
  it("ask retry_if when it is set", () => {
    const seen: string[] = [];
    expect(mayRetry({ retry_if: "runtime.attempt < 2", non_retryable_codes: undefined }, "x", (e) => (seen.push(e), false))).toBe(false);
    expect(seen).toEqual(["runtime.attempt < 2"]);
    expect(mayRetry(null, "x", () => false)).toBe(true);
  });
});
