// A batch action larger than one call's limit, as successive calls.

export interface CallResult {
  matched: number;
  applied: number;
  skipped: number;
  failed: number;
}

export type Totals = Omit<CallResult, "matched">;

export const NO_TOTALS: Totals = { applied: 0, skipped: 0, failed: 0 };

/**
 * Calls `call` until one applies nothing or selects fewer than `limit` (it took all that was
 * left), or `shouldStop` says so before the next call. The second condition matters for cancel:
 * it queues a signal and the instances keep their state until the engine takes it, so another
 * call would select the same ones again. A thrown error ends the run; `onProgress` has the
 * totals so far.
 */
export async function runInCalls(
  call: () => Promise<CallResult>,
  { limit, shouldStop, onProgress }: { limit: number; shouldStop: () => boolean; onProgress: (totals: Totals) => void },
): Promise<{ totals: Totals; stopped: boolean }> {
  let totals = NO_TOTALS;
  for (;;) {
    const result = await call();
    totals = { applied: totals.applied + result.applied, skipped: totals.skipped + result.skipped, failed: totals.failed + result.failed };
    onProgress(totals);
    if (result.applied === 0 || result.matched < limit) return { totals, stopped: false };
    if (shouldStop()) return { totals, stopped: true };
  }
}
