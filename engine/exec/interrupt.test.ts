// Interrupt: listeners told once, removable, and an AbortSignal that says the same whenever it is made.
import { describe, expect, it } from "vitest";
import { Interrupt } from "./interrupt.ts";

describe("Interrupt", () => {
  it("tells each listener once, with the first reason, and forgets a removed one", () => {
    const interrupt = new Interrupt();
    const heard: string[] = [];
    interrupt.onAbort(() => heard.push(`a:${String(interrupt.reason)}`));
    const remove = interrupt.onAbort(() => heard.push("b"));
    remove();
    interrupt.abort("lease_lost");
    interrupt.abort("shutdown");
    expect(heard).toEqual(["a:lease_lost"]);
    expect([interrupt.aborted, interrupt.reason]).toEqual([true, "lease_lost"]);
  });

  it("does not call a listener added after the abort", () => {
    const interrupt = new Interrupt();
    interrupt.abort("paused");
    let called = false;
    interrupt.onAbort(() => (called = true))();
    expect(called).toBe(false);
  });

  it("its signal aborts with the same reason, made before or after the abort", () => {
    const before = new Interrupt();
    const signal = before.signal;
    let heard: unknown;
    signal.addEventListener("abort", () => (heard = signal.reason));
    expect(signal.aborted).toBe(false);
    before.abort("cancelled");
    expect([signal.aborted, heard]).toEqual([true, "cancelled"]);
    expect(before.signal).toBe(signal);

    const after = new Interrupt();
    after.abort("timeout");
    expect([after.signal.aborted, after.signal.reason]).toEqual([true, "timeout"]);
  });
});
