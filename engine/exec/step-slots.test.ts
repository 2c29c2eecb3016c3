// Step slots on their own: the global and per-tenant limits, FIFO within a tenant, round robin
// across tenants, and a withdrawn request that holds nothing.
import { describe, expect, it } from "vitest";
import type { TenantLimits } from "../storage/index.ts";
import { stepSlots } from "../scheduler/scheduler.ts";
import { Interrupt } from "./interrupt.ts";
import { holdsSlot, StepSlots, type Slot } from "./step-slots.ts";

const never = new Interrupt();
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("StepSlots", () => {
  it("grants at once up to both limits, then makes the rest wait", async () => {
    const slots = new StepSlots(3, () => 2);
    const a1 = await slots.acquire("a", never);
    const a2 = await slots.acquire("a", never);
    let a3: Slot | null = null;
    void slots.acquire("a", never).then((release) => (a3 = release));
    const b1 = await slots.acquire("b", never);
    await settle();
    expect([a1!.waited, b1!.waited]).toEqual([false, false]);
    expect([slots.running("a"), slots.running("b"), slots.running()]).toEqual([2, 1, 3]);
    expect(a3).toBeNull();
    expect(slots.waiting("a")).toBe(1);
    b1!.release();
    await settle();
    // The freed global slot cannot go to `a`: it is at its own limit of 2.
    expect(a3).toBeNull();
    a1!.release();
    await settle();
    expect(a3).not.toBeNull();
    expect(a3!.waited).toBe(true);
    expect(slots.running("a")).toBe(2);
    a2!.release();
    a3!.release();
    expect(slots.running()).toBe(0);
  });

  it("serves a tenant's steps in order and the waiting tenants in turn", async () => {
    const slots = new StepSlots(1, () => 10);
    const first = await slots.acquire("noisy", never);
    const order: string[] = [];
    const ask = (tenant: string, label: string) => void slots.acquire(tenant, never).then((release) => {
      order.push(label);
      setImmediate(() => release!.release());
    });
    for (let i = 1; i <= 4; i++) ask("noisy", `noisy-${i}`);
    ask("quiet", "quiet-1");
    ask("quiet", "quiet-2");
    first!.release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual(["noisy-1", "quiet-1", "noisy-2", "quiet-2", "noisy-3", "noisy-4"]);
  });

  it("a tenant at its limit does not keep another tenant's steps waiting", async () => {
    const slots = new StepSlots(10, () => 2);
    await slots.acquire("noisy", never);
    await slots.acquire("noisy", never);
    const queued = Array.from({ length: 50 }, () => slots.acquire("noisy", never));
    expect(slots.waiting("noisy")).toBe(50);
    expect(await slots.acquire("quiet", never)).toEqual({ release: expect.any(Function), waited: false });
    expect(slots.running("quiet")).toBe(1);
    expect(queued).toHaveLength(50);
  });

  it("an aborted request resolves null and leaves no place behind", async () => {
    const slots = new StepSlots(1, () => 1);
    const held = await slots.acquire("a", never);
    const abort = new Interrupt();
    const waiting = slots.acquire("a", abort);
    abort.abort("cancelled");
    expect(await waiting).toBeNull();
    expect(slots.waiting()).toBe(0);
    held!.release();
    expect(await slots.acquire("a", never)).toEqual({ release: expect.any(Function), waited: false });
    const aborted = new Interrupt();
    aborted.abort("shutdown");
    expect(await slots.acquire("b", aborted)).toBeNull();
  });

  it("timer handlers hold no slot", () => {
    expect(holdsSlot("sleep")).toBe(false);
    expect(holdsSlot("http_request")).toBe(true);
    expect(holdsSlot("my_worker_handler")).toBe(true);
  });

  it("a tenant's own step limit, set by an operator, replaces the default for that tenant only", async () => {
    const limits: Record<string, TenantLimits> = { vip: { claimCap: null, maxConcurrency: null, maxSteps: 1, outboundPerHost: null, apiRatePerSec: null, cronSchedules: null, webhookRatePerSec: null, lagObjectiveMs: null, retentionDays: null } };
    const slots = stepSlots({ BULKHEAD_MAX_CONCURRENT_STEPS: 100, BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: 3 }, { limitsOf: (tenantId) => limits[tenantId] });
    await slots.acquire("vip", never);
    const abort = new Interrupt();
    const second = slots.acquire("vip", abort);
    for (let i = 0; i < 3; i++) await slots.acquire("other", never);
    expect([slots.running("vip"), slots.waiting("vip"), slots.running("other")]).toEqual([1, 1, 3]);
    abort.abort("cancelled");
    expect(await second).toBeNull();
  });
});
