import pino from "pino";
import { describe, expect, it } from "vitest";
import { fail } from "./fail.ts";
import { log } from "./log.ts";
import { noop } from "./noop.ts";
import { createBuiltInHandlers } from "./registry.ts";
import { sleep } from "./sleep.ts";
import { makeInput } from "./test-support.ts";

describe("noop", () => {
  it.each([null, {}, { anything: 1 }])("outputs {} for params %j", async (params) => {
    expect(await noop(makeInput(params))).toEqual({ kind: "success", output: {} });
  });
});

describe("log", () => {
  function capture() {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    return { lines, logger };
  }

  it("echoes the message and logs it at the given level", async () => {
    const { lines, logger } = capture();
    const outcome = await log(makeInput({ message: "hello", level: "warn" }, { log: logger }));
    expect(outcome).toEqual({ kind: "success", output: { message: "hello" } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, message: "hello", tenant_id: "tenant-a", instance_id: "instance-1", block_id: "step-1" });
  });

  it.each([
    [null, "no message"],
    [{}, "no message"],
    [{ message: 42 }, 42],
    [{ message: null }, null],
    [{ message: { nested: [1, true] } }, { nested: [1, true] }],
  ])("params %j output message %j", async (params, message) => {
    expect(await log(makeInput(params))).toEqual({ kind: "success", output: { message } });
  });

  it("logs at info by default and for an unknown level, and never fails", async () => {
    const { lines, logger } = capture();
    await log(makeInput({ message: "a" }, { log: logger }));
    const outcome = await log(makeInput({ message: "b", level: "shout" }, { log: logger }));
    expect(outcome.kind).toBe("success");
    expect(lines.map((line) => line.level)).toEqual([30, 30]);
  });

  it("logs at debug", async () => {
    const { lines, logger } = capture();
    await log(makeInput({ message: "d", level: "debug" }, { log: logger }));
    expect(lines[0]).toMatchObject({ level: 20, message: "d" });
  });
});

describe("sleep", () => {
  it("sleeps duration_ms and outputs slept_ms", async () => {
    const started = performance.now();
    const outcome = await sleep(makeInput({ duration_ms: 120 }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
    expect(outcome).toEqual({ kind: "success", output: { slept_ms: 120 } });
  });

  it.each([null, {}, { duration_ms: -5 }, { duration_ms: "1000" }, { duration_ms: 1.5 }])("defaults to 100 ms for params %j", async (params) => {
    const started = performance.now();
    expect(await sleep(makeInput(params))).toEqual({ kind: "success", output: { slept_ms: 100 } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });

  it("ends early with a retryable failure when the signal aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    const outcome = await sleep(makeInput({ duration_ms: 10_000 }, { signal: controller.signal }));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(outcome).toEqual({ kind: "failure", retryable: true, message: "sleep interrupted" });
  });

  it("does not start when the signal is already aborted, even for 0 ms", async () => {
    const signal = AbortSignal.abort();
    expect(await sleep(makeInput({ duration_ms: 0 }, { signal }))).toEqual({ kind: "failure", retryable: true, message: "sleep interrupted" });
  });
});

describe("fail", () => {
  it.each([
    [null, false, "forced failure"],
    [{}, false, "forced failure"],
    [{ message: "boom" }, false, "boom"],
    [{ message: "try again", retryable: true }, true, "try again"],
    [{ retryable: "yes" }, false, "forced failure"],
    [{ message: { code: 7 } }, false, '{"code":7}'],
  ])("params %j fail with retryable=%s and %j", async (params, retryable, message) => {
    expect(await fail(makeInput(params))).toEqual({ kind: "failure", retryable, message });
  });
});

describe("createBuiltInHandlers", () => {
  const registry = createBuiltInHandlers({ httpAllow: [] });

  it("registers the built-in handlers by name", () => {
    expect(registry.names().sort()).toEqual([
      "emit_event", "fail", "http_request", "human_review", "llm_call", "log", "noop", "query_instance", "self_modify", "send_signal", "sleep",
    ]);
    expect(registry.get("noop")).toBe(noop);
    expect(registry.isBuiltIn("sleep")).toBe(true);
  });

  it.each(["will_fail_handler", "flaky_service", "constructor", "__proto__", "toString", ""])("has no handler named %j", (name) => {
    expect(registry.get(name)).toBeUndefined();
    expect(registry.isBuiltIn(name)).toBe(false);
  });

  it("refuses a malformed allow-list entry at creation", () => {
    expect(() => createBuiltInHandlers({ httpAllow: ["http://example.com/"] })).toThrow(/invalid BULKHEAD_HTTP_ALLOW entry/);
  });
});
