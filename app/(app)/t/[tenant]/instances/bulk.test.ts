// Bulk actions: which instances each action takes from the list's filters, and the run in calls of one limit.
import { describe, expect, it } from "vitest";
import { actionFilter, bulkBlockedReason } from "./bulk-scope";
import { runInCalls, type CallResult } from "./run-in-calls";

const SEQ = "0190f7a2-0000-7000-8000-000000000001";

describe("actionFilter", () => {
  it("narrows the list's states to those the action changes", () => {
    expect(actionFilter("cancel", { states: [], sequence: SEQ })).toEqual({ states: ["scheduled", "running", "waiting", "paused"], sequenceId: SEQ });
    expect(actionFilter("cancel", { states: ["scheduled", "completed"], sequence: "" })).toEqual({ states: ["scheduled"] });
    expect(actionFilter("retry", { states: [], sequence: "" })).toEqual({ states: ["failed"] });
    expect(actionFilter("reschedule", { states: ["failed"], sequence: "" })).toBeNull();
  });
  it("blocks what the bulk filter cannot say", () => {
    expect(bulkBlockedReason({ q: "", after: "", before: "" })).toBeNull();
    expect(bulkBlockedReason({ q: " x ", after: "", before: "2026-01-01T00:00" })).toMatch(/the search and the created dates/);
  });
});

describe("runInCalls", () => {
  const calls = (results: CallResult[]) => {
    let i = 0;
    return { call: async () => results[i++]!, made: () => i };
  };
  const full = { matched: 10, applied: 10, skipped: 0, failed: 0 };

  it("goes on while calls are full, stops at a short one, adding up the totals", async () => {
    const { call, made } = calls([full, { matched: 10, applied: 8, skipped: 1, failed: 1 }, { matched: 4, applied: 4, skipped: 0, failed: 0 }, full]);
    const progress: number[] = [];
    const result = await runInCalls(call, { limit: 10, shouldStop: () => false, onProgress: (t) => progress.push(t.applied) });
    expect(result).toEqual({ totals: { applied: 22, skipped: 1, failed: 1 }, stopped: false });
    expect(progress).toEqual([10, 18, 22]);
    expect(made()).toBe(3);
  });
  it("stops at a call that applies nothing, and when asked between calls", async () => {
    const none = calls([{ matched: 10, applied: 0, skipped: 10, failed: 0 }, full]);
    expect((await runInCalls(none.call, { limit: 10, shouldStop: () => false, onProgress: () => {} })).stopped).toBe(false);
    expect(none.made()).toBe(1);
    const asked = calls([full, full, full]);
    let stop = false;
    const result = await runInCalls(asked.call, { limit: 10, shouldStop: () => stop, onProgress: () => { stop = true; } });
    expect(result).toEqual({ totals: { applied: 10, skipped: 0, failed: 0 }, stopped: true });
    expect(asked.made()).toBe(1);
  });
  it("ends with the error a call throws", async () => {
    let seen = 0;
    const failing = async (): Promise<CallResult> => { if (seen++ > 0) throw new Error("boom"); return full; };
    await expect(runInCalls(failing, { limit: 10, shouldStop: () => false, onProgress: () => {} })).rejects.toThrow("boom");
  });
});
