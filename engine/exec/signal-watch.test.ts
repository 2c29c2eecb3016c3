// One query per poll for every watched run, only the runs with signals told, nothing once none
// is watched, and a slow poll not stacked on.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { createLogger } from "../logger.ts";
import { SIGNAL_POLL_MS, SignalWatch } from "./signal-watch.ts";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it("asks once per poll for all runs and tells only those with queued signals", async () => {
  const asked: string[][] = [];
  const watch = new SignalWatch(async (ids) => (asked.push([...ids]), new Set(["b"])), createLogger("test", "silent"));
  const told: string[] = [];
  const stops = ["a", "b", "c"].map((id) => watch.watch(id, () => told.push(id)));
  await vi.advanceTimersByTimeAsync(SIGNAL_POLL_MS);
  expect(asked).toEqual([["a", "b", "c"]]);
  expect(told).toEqual(["b"]);
  stops[1]!();
  await vi.advanceTimersByTimeAsync(SIGNAL_POLL_MS);
  expect(asked.at(-1)).toEqual(["a", "c"]);
  expect(told).toEqual(["b"]);
  for (const stop of stops) stop();
  await vi.advanceTimersByTimeAsync(SIGNAL_POLL_MS * 4);
  expect(asked).toHaveLength(2);
});

it("does not start a poll while the last one is still out", async () => {
  let calls = 0;
  let finish = () => {};
  const watch = new SignalWatch(() => {
    calls += 1;
    return new Promise<Set<string>>((resolve) => (finish = () => resolve(new Set())));
  }, createLogger("test", "silent"));
  const stop = watch.watch("a", () => {});
  await vi.advanceTimersByTimeAsync(SIGNAL_POLL_MS * 3);
  expect(calls).toBe(1);
  finish();
  await vi.advanceTimersByTimeAsync(SIGNAL_POLL_MS);
  expect(calls).toBe(2);
  stop();
});
