// Noisy neighbour for step slots, through the scheduler on a real PostgreSQL: a tenant fanning out
// 4 × 100 parallel branches against a slow vendor never has more than its step limit open at once,
// and another tenant's single step starts in the same vendor round instead of behind the fan-out.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { HandlerRegistry } from "../handlers/registry.ts";
import type { Handler } from "../handlers/types.ts";
import { readTenantMetrics } from "../storage/metrics.ts";

const PER_TENANT = Number(process.env.TEST_STEPS_PER_TENANT ?? 32);
const VENDOR_MS = 500;

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

/** A vendor that answers after VENDOR_MS and counts the calls open at once, per tenant. */
function slowVendor() {
  const open = new Map<string, number>();
  const peak = new Map<string, number>();
  const started: { tenantId: string; at: number }[] = [];
  const handler: Handler = async (input) => {
    const now = (open.get(input.tenantId) ?? 0) + 1;
    open.set(input.tenantId, now);
    peak.set(input.tenantId, Math.max(peak.get(input.tenantId) ?? 0, now));
    started.push({ tenantId: input.tenantId, at: performance.now() });
    try {
      await sleep(VENDOR_MS, undefined, { signal: input.signal });
      return { kind: "success", output: { ok: true } };
    } catch {
      return { kind: "failure", retryable: true, message: "interrupted" };
    } finally {
      open.set(input.tenantId, open.get(input.tenantId)! - 1);
    }
  };
  return { handler, open: (tenant: string) => open.get(tenant) ?? 0, peak: (tenant: string) => peak.get(tenant) ?? 0, started };
}

it("a fan-out of 4 × 100 branches stays within the tenant's step limit; another tenant's step starts in the same round", async () => {
  const vendor = slowVendor();
  const scheduler = makeScheduler(db, {
    handlers: new HandlerRegistry([["vendor", vendor.handler]]),
    config: { BULKHEAD_MAX_CONCURRENT_STEPS: 128, BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: PER_TENANT },
  });
  const branches = Array.from({ length: 100 }, (_, i) => [{ type: "step", id: `call-${i}`, handler: "vendor" }]);
  const fanOut = await insertSequence(db, "noisy", [{ type: "parallel", id: "fan", branches }]);
  const single = await insertSequence(db, "quiet", [{ type: "step", id: "one", handler: "vendor" }]);
  await insertInstancesOf(db, "noisy", fanOut, 4);
  await scheduler.start();
  try {
    // Saturated: the noisy tenant has its limit open and more of its steps wait for slots.
    await expect.poll(() => vendor.open("noisy"), { timeout: 10_000, interval: 10 }).toBeGreaterThanOrEqual(PER_TENANT);
    const noisyStartedBefore = vendor.started.filter((s) => s.tenantId === "noisy").length;
    const [quietId] = await insertInstancesOf(db, "quiet", single);
    await expect.poll(() => vendor.started.some((s) => s.tenantId === "quiet"), { timeout: 5_000, interval: 10 }).toBe(true);
    // The quiet step began while at most one more round of the fan-out could have: it did not
    // queue behind the 400 branches.
    const noisyStartedBeforeQuiet = vendor.started.findIndex((s) => s.tenantId === "quiet");
    expect(noisyStartedBeforeQuiet).toBeLessThanOrEqual(noisyStartedBefore + PER_TENANT);
    const state = async (id: string) => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state;
    await expect.poll(() => state(quietId!), { timeout: 5_000 }).toBe("completed");

    const done = async () => (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = 'noisy' AND state = 'completed'")).rows[0].n;
    await expect.poll(done, { timeout: 60_000, interval: 100 }).toBe(4);
    expect(vendor.peak("noisy")).toBe(PER_TENANT);
    expect(vendor.started.filter((s) => s.tenantId === "noisy")).toHaveLength(400);
  } finally {
    await scheduler.stop();
  }
  // What the operator's Resources page reads: the tenant reached its limit, and its steps waited.
  const minutes = await readTenantMetrics(db.sql, new Date(Date.now() - 3_600_000), new Date(Date.now() + 60_000));
  const noisy = minutes.filter((m) => m.tenantId === "noisy");
  expect(Math.max(...noisy.map((m) => m.stepsPeak))).toBe(PER_TENANT);
  expect(noisy.reduce((n, m) => n + m.stepsWaited, 0)).toBeGreaterThan(300);
}, 90_000);
