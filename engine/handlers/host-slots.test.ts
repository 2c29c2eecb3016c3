// The per-(tenant, host) semaphore: the bound, FIFO hand-over, isolation between tenants and
// hosts, abort while waiting, and no leaked places.
import { describe, expect, it } from "vitest";
import { DEFAULT_OUTBOUND_PER_HOST, HostSlots, type ReleaseSlot } from "./host-slots.ts";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Starts an acquire and records when it is granted. */
function track(slots: HostSlots, tenant: string, host: string, signal = new AbortController().signal) {
  const state: { release?: ReleaseSlot; error?: unknown } = {};
  const promise = slots.acquire(tenant, host, signal).then(
    (release) => (state.release = release),
    (error: unknown) => (state.error = error),
  );
  return Object.assign(state, { promise });
}

describe("HostSlots", () => {
  it("grants up to the bound at once and queues the rest", async () => {
    const slots = new HostSlots(() => 3);
    const calls = Array.from({ length: 5 }, () => track(slots, "a", "h:80"));
    await tick();
    expect(calls.map((call) => call.release !== undefined)).toEqual([true, true, true, false, false]);
    expect(slots.usage("a", "h:80")).toEqual({ active: 3, waiting: 2 });
  });

  it("hands a freed slot to the longest waiter (FIFO)", async () => {
    const slots = new HostSlots(() => 1);
    const first = track(slots, "a", "h:80");
    const waiters = Array.from({ length: 4 }, () => track(slots, "a", "h:80"));
    await tick();
    const order: number[] = [];
    waiters.forEach((waiter, index) => void waiter.promise.then(() => order.push(index)));
    first.release!();
    for (const waiter of waiters) {
      await tick();
      waiter.release!();
    }
    await tick();
    expect(order).toEqual([0, 1, 2, 3]);
    expect(slots.usage("a", "h:80")).toEqual({ active: 0, waiting: 0 });
  });

  it("does not let a newcomer overtake a waiter", async () => {
    const slots = new HostSlots(() => 1);
    const holder = track(slots, "a", "h:80");
    const waiter = track(slots, "a", "h:80");
    await tick();
    holder.release!();
    const newcomer = track(slots, "a", "h:80");
    await tick();
    expect(waiter.release).toBeDefined();
    expect(newcomer.release).toBeUndefined();
  });

  it("keeps tenants and hosts apart: a full (tenant, host) blocks neither another tenant nor another host", async () => {
    const slots = new HostSlots(() => 2);
    for (let i = 0; i < 10; i++) track(slots, "noisy", "h:80");
    const quiet = track(slots, "quiet", "h:80");
    const otherHost = track(slots, "noisy", "other:80");
    await tick();
    expect(quiet.release).toBeDefined();
    expect(otherHost.release).toBeDefined();
    expect(slots.usage("noisy", "h:80")).toEqual({ active: 2, waiting: 8 });
    expect(slots.usage("quiet", "h:80")).toEqual({ active: 1, waiting: 0 });
  });

  it("asks the limit per tenant", async () => {
    const slots = new HostSlots((tenant) => (tenant === "big" ? 4 : 1));
    const big = Array.from({ length: 5 }, () => track(slots, "big", "h:80"));
    const small = Array.from({ length: 2 }, () => track(slots, "small", "h:80"));
    await tick();
    expect(big.filter((call) => call.release).length).toBe(4);
    expect(small.filter((call) => call.release).length).toBe(1);
  });

  it("an abort while waiting rejects with the signal's reason and withdraws the place", async () => {
    const slots = new HostSlots(() => 1);
    const holder = track(slots, "a", "h:80");
    const controller = new AbortController();
    const aborted = track(slots, "a", "h:80", controller.signal);
    const next = track(slots, "a", "h:80");
    await tick();
    expect(slots.usage("a", "h:80")).toEqual({ active: 1, waiting: 2 });
    const reason = new Error("step timed out");
    controller.abort(reason);
    await tick();
    expect(aborted.error).toBe(reason);
    expect(slots.usage("a", "h:80")).toEqual({ active: 1, waiting: 1 });
    holder.release!();
    await tick();
    expect(next.release).toBeDefined(); // the aborted caller's place went to nobody
    next.release!();
    expect(slots.usage("a", "h:80")).toEqual({ active: 0, waiting: 0 });
  });

  it("refuses an already-aborted signal without taking a slot", async () => {
    const slots = new HostSlots(() => 1);
    const reason = new Error("gone");
    await expect(slots.acquire("a", "h:80", AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(slots.usage("a", "h:80")).toEqual({ active: 0, waiting: 0 });
    const next = track(slots, "a", "h:80");
    await tick();
    expect(next.release).toBeDefined();
  });

  it("a release called twice gives one slot back", async () => {
    const slots = new HostSlots(() => 1);
    const holder = track(slots, "a", "h:80");
    const waiters = [track(slots, "a", "h:80"), track(slots, "a", "h:80")];
    await tick();
    holder.release!();
    holder.release!();
    await tick();
    expect(waiters.map((waiter) => waiter.release !== undefined)).toEqual([true, false]);
    expect(slots.usage("a", "h:80")).toEqual({ active: 1, waiting: 1 });
  });

  it("a raised limit lets waiters in before a newcomer", async () => {
    let limit = 1;
    const slots = new HostSlots(() => limit);
    track(slots, "a", "h:80");
    const waiter = track(slots, "a", "h:80");
    await tick();
    limit = 3;
    const newcomer = track(slots, "a", "h:80");
    await tick();
    expect(waiter.release).toBeDefined();
    expect(newcomer.release).toBeDefined();
    expect(slots.usage("a", "h:80")).toEqual({ active: 3, waiting: 0 });
  });

  it("treats a limit below 1 as 1 (never a queue nothing can leave) and Infinity as no bound", async () => {
    const zero = new HostSlots(() => 0);
    track(zero, "a", "h:80");
    track(zero, "a", "h:80");
    await tick();
    expect(zero.usage("a", "h:80")).toEqual({ active: 1, waiting: 1 });
    const unbounded = new HostSlots(() => Infinity);
    for (let i = 0; i < 100; i++) track(unbounded, "a", "h:80");
    await tick();
    expect(unbounded.usage("a", "h:80")).toEqual({ active: 100, waiting: 0 });
  });

  it("defaults to 16 per (tenant, host)", async () => {
    expect(DEFAULT_OUTBOUND_PER_HOST).toBe(16);
    const slots = new HostSlots();
    for (let i = 0; i < 20; i++) track(slots, "a", "h:80");
    await tick();
    expect(slots.usage("a", "h:80")).toEqual({ active: 16, waiting: 4 });
  });
});
