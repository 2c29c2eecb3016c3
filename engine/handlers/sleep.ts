// `sleep` (wire-format D): waits `duration_ms` (default 100) and outputs `{ slept_ms }`.
// Polling for pause/cancel signals belongs to the engine; here an aborted signal ends the sleep
// early as a retryable failure, so an interrupted sleep never records success.
import { setTimeout as delay } from "node:timers/promises";
import { SleepParams } from "./basic-params.ts";
import { failure, paramsObject, success, type Handler } from "./types.ts";

/** setTimeout fires at once for delays above 2^31-1 ms, so longer sleeps wait in chunks. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const sleep: Handler = async (input) => {
  const { duration_ms: durationMs } = SleepParams.parse(paramsObject(input.params) ?? {});
  try {
    for (let left = durationMs; left > 0; left -= MAX_TIMER_MS) {
      await delay(Math.min(left, MAX_TIMER_MS), undefined, { signal: input.signal });
    }
    if (input.signal.aborted) throw input.signal.reason;
  } catch {
    return failure(true, "sleep interrupted");
  }
  return success({ slept_ms: durationMs });
};
