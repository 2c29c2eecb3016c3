// The operator console's Resources procedures against a real PostgreSQL: the ledger as the
// engine declares it, and the step slots' use from the engines' tenant_metrics minutes (the last
// two), each tenant's peak against its own limit or the engine default; a raised limit shows at
// once. The throttled API callers from the audit log's api.throttled rows of the last 10 minutes
// (a real refusal through admitRequest among them), and the tenants that waited for another
// bounded resource from the same minutes of tenant_metrics. Non-operators get exactly the answer
// of a procedure that does not exist.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEDGER } from "../../engine/resources/ledger.ts";
import type { MetricRow } from "../../engine/metrics/tenant-metrics.ts";
import { writeTenantMetrics } from "../../engine/storage/metrics.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser } from "../../test/factories.ts";
import { admitRequest, type Caller } from "../request-rate.ts";
import { appRouter, createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

/** The engine default of the step limit in this file's configuration. */
const DEFAULT_STEPS = 6;
const MINUTE_MS = 60_000;

let db: TestDatabase;
let operator: { id: string; email: string };
let member: { id: string };
let admin: { id: string };
beforeAll(async () => {
  db = await freshDatabase({ BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: String(DEFAULT_STEPS), BULKHEAD_MAX_CONCURRENT_STEPS: "100" });
  operator = await makeUser(db, { isOperator: true });
  const tenant = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenant, "member"]] });
  admin = await makeUser(db, { memberOf: [[tenant, "admin"]] });
});
afterAll(() => db.drop());

const callerFor = (userId: string | null) => createCaller(createContext(db, userId));
const resources = () => callerFor(operator.id).resources;
const ops = () => callerFor(operator.id).ops;

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

/** The raw HTTP answer of the tRPC endpoint for one query. */
async function httpQuery(userId: string, path: string) {
  const response = await fetchRequestHandler({
    endpoint: "/api/trpc", req: new Request(`http://localhost/api/trpc/${path}`), router: appRouter, createContext: () => createContext(db, userId),
  });
  return { status: response.status, headers: [...response.headers.entries()], body: await response.text() };
}

/** A minute of one tenant's metrics, `minutesAgo` minutes before the current one. */
function minute(
  tenantId: string, minutesAgo: number, steps: { peak: number; waited?: number; claimed?: number; resourceWaits?: Record<string, number> },
): MetricRow {
  const now = Date.now();
  return {
    tenantId, minute: new Date(now - (now % MINUTE_MS) - minutesAgo * MINUTE_MS), claimed: steps.claimed ?? 1, completed: 0, failed: 0,
    deferred: {}, lagBuckets: [], backlogSamples: [], stepsPeak: steps.peak, stepsWaited: steps.waited ?? 0, resourceWaits: steps.resourceWaits ?? {},
  };
}

/** Audit rows of throttled callers, as request-rate.ts writes them, `at` as given. */
async function throttleRows(rows: { tenantId: string | null; actor: string; at: Date; kind?: "api_key" | "user"; rate?: number; burst?: number }[]) {
  await db.prisma.auditLog.createMany({
    data: rows.map((r) => ({
      tenantId: r.tenantId, actor: r.actor, at: r.at, action: "api.throttled",
      details: { principal: r.kind ?? "api_key", rate_per_sec: r.rate ?? 50, burst: r.burst ?? 200, retry_after_secs: 1 },
    })),
  });
}

const ago = (ms: number) => new Date(Date.now() - ms);
/** `ago` from one fixed moment, for rows whose order must follow `ms` exactly (Date.now() moves between calls). */
const agoFrom = (base: number) => (ms: number) => new Date(base - ms);
/** A pause, so rows `ago` a few milliseconds are newer than every row written before it. */
const pause = (ms = 100) => new Promise((resolve) => setTimeout(resolve, ms));
const keyPrefix = () => `bk_${randomUUID().slice(0, 8)}`;

/** Waits out the last seconds of a minute, so rows written for "this minute" are still in it when read. */
async function wellInsideAMinute(): Promise<void> {
  const left = MINUTE_MS - (Date.now() % MINUTE_MS);
  if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

const usageOf = async (tenantId: string) => (await resources().usage()).tenants.find((t) => t.tenantId === tenantId);

describe("resources procedures", () => {
  it("refuse non-operators with exactly the answer of a procedure that does not exist", async () => {
    for (const userId of [member.id, admin.id]) {
      const theirs = callerFor(userId).resources;
      for (const call of [() => theirs.ledger(), () => theirs.usage(), () => theirs.throttled(), () => theirs.waits()]) {
        const error = await trpcError(call());
        expect(error.code).toBe("NOT_FOUND");
      }
      for (const path of ["resources.ledger", "resources.usage", "resources.throttled", "resources.waits"]) {
        const refused = await httpQuery(userId, path);
        const missing = await httpQuery(userId, "resources.noSuchProcedure");
        expect(refused.status).toBe(404);
        expect(refused.body).toContain(`No procedure found on path \\"${path}\\"`);
        // The same bytes but for the path each names.
        expect({ ...refused, body: refused.body.replaceAll(path, "<path>") }).toEqual({ ...missing, body: missing.body.replaceAll("resources.noSuchProcedure", "<path>") });
      }
    }
  });

  it("serve the ledger as the engine declares it", async () => {
    const ledger = await resources().ledger();
    expect(ledger).toEqual(LEDGER);
    expect(ledger.find((e) => e.id === "step_slots")).toMatchObject({ boundary: "tiered", enforced: true });
    expect(ledger.find((e) => e.id === "api_requests")).toMatchObject({ boundary: "tiered", override: "tenant page: API rate" });
    expect(ledger.find((e) => e.id === "outbound_per_host")).toMatchObject({ boundary: "tiered", override: "tenant page: outbound per host" });
    expect(ledger.every((e) => e.enforced)).toBe(true);
  });

  it("show a tenant at its step limit, and below its new limit once ops.limits.set raises it", async () => {
    await wellInsideAMinute();
    const tenant = (await makeTenant(db)).id;
    await ops().limits.set({ tenantId: tenant, claimCap: 3, maxConcurrency: 7, maxSteps: 4 });
    await writeTenantMetrics(db.sql, [minute(tenant, 1, { peak: 3, waited: 10 }), minute(tenant, 0, { peak: 4, waited: 25 })]);
    expect(await usageOf(tenant)).toEqual({ tenantId: tenant, limit: 4, ownLimit: 4, peak: 4, waited: 35, atLimit: true });

    // The Resources page's inline form sends the step limit alone: the other two are kept.
    expect(await ops().limits.set({ tenantId: tenant, maxSteps: 12 })).toEqual({ claimCap: 3, maxConcurrency: 7, maxSteps: 12, outboundPerHost: null, apiRatePerSec: null, cronSchedules: null, webhookRatePerSec: null, lagObjectiveMs: null, retentionDays: null });
    expect(await usageOf(tenant)).toEqual({ tenantId: tenant, limit: 12, ownLimit: 12, peak: 4, waited: 35, atLimit: false });
    expect(await ops().limits.get({ tenantId: tenant })).toMatchObject({ claimCap: 3, maxConcurrency: 7, maxSteps: 12 });
    const audit = await db.sql.query("SELECT actor, action, details FROM audit_log WHERE tenant_id = $1 ORDER BY id", [tenant]);
    expect(audit.rows.at(-1)).toEqual({ actor: operator.email, action: "limits.set", details: { claim_cap: 3, max_concurrency: 7, max_steps: 12, outbound_per_host: null, api_rate_per_sec: null, cron_schedules: null, webhook_rate_per_sec: null, lag_objective_ms: null, retention_days: null } });

    // Back to the engine default, which it is at as well.
    await ops().limits.set({ tenantId: tenant, claimCap: 3, maxConcurrency: 7, maxSteps: null });
    await writeTenantMetrics(db.sql, [minute(tenant, 0, { peak: DEFAULT_STEPS })]);
    expect(await usageOf(tenant)).toEqual({ tenantId: tenant, limit: DEFAULT_STEPS, ownLimit: null, peak: DEFAULT_STEPS, waited: 35, atLimit: true });
    // With no override left, the tenant has no row at all.
    await ops().limits.set({ tenantId: tenant, claimCap: null, maxConcurrency: null });
    expect((await db.sql.query("SELECT 1 FROM tenant_limits WHERE tenant_id = $1", [tenant])).rowCount).toBe(0);
  });

  it("keep a tenant's own lag objective and retention, within their bounds, and return them to the defaults", async () => {
    const tenant = (await makeTenant(db)).id;
    expect(await ops().limits.get({ tenantId: tenant })).toMatchObject({
      lagObjectiveMs: null, retentionDays: null, defaults: { lagObjectiveMs: 1000, retentionDays: 30 },
    });
    await ops().limits.set({ tenantId: tenant, lagObjectiveMs: 250, retentionDays: 7 });
    expect(await ops().limits.get({ tenantId: tenant })).toMatchObject({ lagObjectiveMs: 250, retentionDays: 7 });
    // Over a hundred years, or under a day, is refused and nothing changes.
    await expect(ops().limits.set({ tenantId: tenant, retentionDays: 36_501 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(ops().limits.set({ tenantId: tenant, retentionDays: 0 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await ops().limits.get({ tenantId: tenant })).toMatchObject({ lagObjectiveMs: 250, retentionDays: 7 });
    await ops().limits.set({ tenantId: tenant, lagObjectiveMs: null, retentionDays: null });
    expect((await db.sql.query("SELECT 1 FROM tenant_limits WHERE tenant_id = $1", [tenant])).rowCount).toBe(0);
  });

  it("count only the last two minutes and only tenants that ran steps, busiest first, with the engine defaults", async () => {
    await wellInsideAMinute();
    const [busy, quiet, stale, stepless] = (await Promise.all([1, 2, 3, 4].map(() => makeTenant(db)))).map((t) => t.id) as [string, string, string, string];
    await writeTenantMetrics(db.sql, [
      minute(busy, 1, { peak: 5, waited: 2 }), minute(busy, 0, { peak: 1 }),
      minute(quiet, 0, { peak: 2 }),
      minute(stale, 2, { peak: 50, waited: 500 }), minute(stale, 5, { peak: 50 }),
      // Claimed instances that ran only sleeps hold no slot.
      minute(stepless, 0, { peak: 0, claimed: 40 }),
    ]);
    const usage = await resources().usage();
    const ours = usage.tenants.filter((t) => [busy, quiet, stale, stepless].includes(t.tenantId));
    expect(ours).toEqual([
      { tenantId: busy, limit: DEFAULT_STEPS, ownLimit: null, peak: 5, waited: 2, atLimit: false },
      { tenantId: quiet, limit: DEFAULT_STEPS, ownLimit: null, peak: 2, waited: 0, atLimit: false },
    ]);
    const peaks = usage.tenants.map((t) => t.peak);
    expect(peaks).toEqual([...peaks].sort((a, b) => b - a));
    expect(usage.windowMinutes).toBe(2);
    expect(usage.defaults).toEqual({
      maxStepsPerTenant: DEFAULT_STEPS, maxSteps: 100, maxInstancesInFlightPerTenant: db.config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT,
      maxInstancesInFlight: db.config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT, claimCap: db.config.BULKHEAD_MAX_INSTANCES_PER_TENANT,
    });
  });

  it("list at most the top 20 tenants by peak, and say how many ran steps", async () => {
    await wellInsideAMinute();
    const before = (await resources().usage()).activeTenants;
    const tenants = await Promise.all(Array.from({ length: 22 }, async () => (await makeTenant(db)).id));
    await writeTenantMetrics(db.sql, tenants.map((tenantId, i) => minute(tenantId, 0, { peak: 100 + i })));
    const usage = await resources().usage();
    expect(usage.activeTenants).toBe(before + 22);
    expect(usage.tenants.map((t) => t.tenantId)).toEqual(tenants.slice(2).reverse());
    expect(usage.tenants.every((t) => t.atLimit)).toBe(true);
  });

  it("list the callers throttled in the last 10 minutes by tenant and caller, most recently throttled first, with the rate of the latest row", async () => {
    const [a, b] = (await Promise.all([1, 2].map(() => makeTenant(db)))).map((t) => t.id) as [string, string];
    const key = keyPrefix();
    const platformKey = keyPrefix();
    const email = `throttled-${randomUUID().slice(0, 6)}@example.test`;
    await throttleRows([
      // The key for tenant a: three minutes in the window (the latest held it to the tenant's own 5/s), one before it.
      { tenantId: a, actor: key, at: ago(9 * MINUTE_MS), rate: 50, burst: 200 },
      { tenantId: a, actor: key, at: ago(3 * MINUTE_MS), rate: 50, burst: 200 },
      { tenantId: a, actor: key, at: ago(1 * MINUTE_MS), rate: 5, burst: 20 },
      { tenantId: a, actor: key, at: ago(11 * MINUTE_MS) },
      // The same key acting for tenant b is another caller; so is a user of tenant a.
      { tenantId: b, actor: key, at: ago(4 * MINUTE_MS) },
      { tenantId: a, actor: email, kind: "user", at: ago(2 * MINUTE_MS) },
      // An operator key acting for no tenant.
      { tenantId: null, actor: platformKey, at: ago(5 * MINUTE_MS) },
      // Out of the window altogether.
      { tenantId: b, actor: email, kind: "user", at: ago(12 * MINUTE_MS) },
    ]);
    // Other actions are not throttles.
    await db.prisma.auditLog.create({ data: { tenantId: a, actor: key, action: "limits.set", details: {} } });

    const throttled = await resources().throttled();
    expect(throttled.windowMinutes).toBe(10);
    expect(throttled.complete).toBe(true);
    const ours = throttled.callers.filter((c) => [key, email, platformKey].includes(c.actor));
    expect(ours).toEqual([
      { tenantId: a, actor: key, kind: "api_key", minutes: 3, lastThrottledAt: expect.any(String), ratePerSec: 5, burst: 20, refusedThisMinute: null },
      { tenantId: a, actor: email, kind: "user", minutes: 1, lastThrottledAt: expect.any(String), ratePerSec: 50, burst: 200, refusedThisMinute: null },
      { tenantId: b, actor: key, kind: "api_key", minutes: 1, lastThrottledAt: expect.any(String), ratePerSec: 50, burst: 200, refusedThisMinute: null },
      { tenantId: null, actor: platformKey, kind: "api_key", minutes: 1, lastThrottledAt: expect.any(String), ratePerSec: 50, burst: 200, refusedThisMinute: null },
    ]);
    const times = throttled.callers.map((c) => Date.parse(c.lastThrottledAt));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect(Date.now() - Date.parse(ours[0]!.lastThrottledAt)).toBeGreaterThanOrEqual(MINUTE_MS);
    expect(Date.now() - Date.parse(ours[0]!.lastThrottledAt)).toBeLessThan(2 * MINUTE_MS);
  });

  it("show a caller refused through admitRequest for the tenant's own rate, with this process's refusals of the minute", async () => {
    await wellInsideAMinute();
    const tenant = (await makeTenant(db)).id;
    await ops().limits.set({ tenantId: tenant, apiRatePerSec: 1 });
    const prefix = keyPrefix();
    const caller: Caller = { kind: "api_key", id: randomUUID(), actor: async () => prefix };
    // 1/s, so a burst of 4 (the default 50/s has 200): the fifth request at once is refused, and so is every one after it.
    const answers: string[] = [];
    for (let i = 0; i < 8; i++) answers.push(await admitRequest(db, caller, tenant).then(() => "ok", (e: { code?: string }) => e.code ?? "?"));
    expect(answers.slice(0, 4)).toEqual(["ok", "ok", "ok", "ok"]);
    const refused = answers.filter((a) => a === "rate_limited").length;
    expect(refused).toBeGreaterThanOrEqual(3);
    expect(answers.filter((a) => a !== "ok" && a !== "rate_limited")).toEqual([]);

    const shown = (await resources().throttled()).callers.filter((c) => c.tenantId === tenant);
    expect(shown).toEqual([
      { tenantId: tenant, actor: prefix, kind: "api_key", minutes: 1, lastThrottledAt: expect.any(String), ratePerSec: 1, burst: 4, refusedThisMinute: refused },
    ]);
    // Only the caller and tenant refused: the same key for another tenant has no count of this minute.
    await throttleRows([{ tenantId: (await makeTenant(db)).id, actor: prefix, at: new Date() }]);
    const again = (await resources().throttled()).callers.filter((c) => c.actor === prefix);
    expect(again.map((c) => [c.tenantId === tenant, c.refusedThisMinute])).toEqual([[false, null], [true, refused]]);
  });

  it("list at most 20 callers, the most recently throttled, and say how many were throttled", async () => {
    const tenant = (await makeTenant(db)).id;
    const before = (await resources().throttled()).throttledCallers;
    const actors = Array.from({ length: 22 }, keyPrefix);
    await pause();
    const at = agoFrom(Date.now());
    await throttleRows(actors.map((actor, i) => ({ tenantId: tenant, actor, at: at(i) })));
    const throttled = await resources().throttled();
    expect(throttled.callers.map((c) => c.actor)).toEqual(actors.slice(0, 20));
    expect(throttled.throttledCallers).toBe(before + 22);
    expect(throttled.complete).toBe(true);
  });

  it("count a shown caller's every minute in the window when the newest rows alone do not hold them all", async () => {
    const tenant = (await makeTenant(db)).id;
    const busy = keyPrefix();
    // 1,000 newer rows of other callers (20 each, as if from 20 web processes) between the busy caller's two minutes.
    const others = Array.from({ length: 50 }, keyPrefix);
    await pause();
    const at = agoFrom(Date.now());
    await throttleRows([
      { tenantId: tenant, actor: busy, at: at(8 * MINUTE_MS) },
      ...Array.from({ length: 1_000 }, (_, i) => ({ tenantId: tenant, actor: others[i % 50]!, at: at(1 + i) })),
      { tenantId: tenant, actor: busy, at: at(0) },
    ]);
    const throttled = await resources().throttled();
    expect(throttled.complete).toBe(false);
    expect(throttled.callers).toHaveLength(20);
    expect(throttled.callers[0]).toMatchObject({ tenantId: tenant, actor: busy, minutes: 2 });
    expect(throttled.callers.slice(1).map((c) => c.actor)).toEqual(others.slice(0, 19));
  });

  it("show the tenants that waited for another bounded resource in the last two minutes, per resource most waits first, at their limit", async () => {
    await wellInsideAMinute();
    const [own, plain, pooled, emitter, stale, none] = (await Promise.all([1, 2, 3, 4, 5, 6].map(() => makeTenant(db)))).map((t) => t.id) as
      [string, string, string, string, string, string];
    await ops().limits.set({ tenantId: own, outboundPerHost: 3 });
    // A step limit of its own is not an outbound limit.
    await ops().limits.set({ tenantId: plain, maxSteps: 9 });
    await writeTenantMetrics(db.sql, [
      minute(own, 1, { peak: 1, resourceWaits: { outbound_per_host: 5 } }), minute(own, 0, { peak: 1, resourceWaits: { outbound_per_host: 7 } }),
      minute(plain, 0, { peak: 2, resourceWaits: { outbound_per_host: 20 } }),
      minute(pooled, 0, { peak: 1, resourceWaits: { db_connections: 4, outbound_per_host: 1 } }),
      minute(emitter, 1, { peak: 1, resourceWaits: { event_fan_out: 9 } }),
      minute(stale, 2, { peak: 1, resourceWaits: { db_connections: 500, event_fan_out: 500 } }),
      minute(none, 0, { peak: 3, resourceWaits: { db_connections: 0 } }),
    ]);
    const answer = await resources().waits();
    expect(answer.windowMinutes).toBe(2);
    const entry = (id: string) => LEDGER.find((e) => e.id === id)!;
    const ours = answer.waits.filter((w) => [own, plain, pooled, emitter, stale, none].includes(w.tenantId));
    expect(ours).toEqual([
      { resourceId: "db_connections", resource: entry("db_connections").resource, tenantId: pooled, waits: 4, limit: entry("db_connections").default, ownLimit: null, atLimit: true },
      { resourceId: "outbound_per_host", resource: entry("outbound_per_host").resource, tenantId: plain, waits: 20, limit: entry("outbound_per_host").default, ownLimit: null, atLimit: true },
      { resourceId: "outbound_per_host", resource: entry("outbound_per_host").resource, tenantId: own, waits: 12, limit: "3 open at once (its own)", ownLimit: 3, atLimit: true },
      { resourceId: "outbound_per_host", resource: entry("outbound_per_host").resource, tenantId: pooled, waits: 1, limit: entry("outbound_per_host").default, ownLimit: null, atLimit: true },
      { resourceId: "event_fan_out", resource: entry("event_fan_out").resource, tenantId: emitter, waits: 9, limit: entry("event_fan_out").default, ownLimit: null, atLimit: true },
    ]);
    // Every resource's rows together, in the page's order, each most waits first.
    const order = answer.waits.map((w) => w.resourceId);
    expect(order).toEqual([...order].sort((x, y) => ["db_connections", "outbound_per_host", "event_fan_out"].indexOf(x) - ["db_connections", "outbound_per_host", "event_fan_out"].indexOf(y)));
    for (const id of new Set(order)) {
      const waits = answer.waits.filter((w) => w.resourceId === id).map((w) => w.waits);
      expect(waits).toEqual([...waits].sort((x, y) => y - x));
    }
    expect(answer.resources.map((r) => r.resourceId)).toEqual([...new Set(order)]);
  });

  it("list at most the top 20 tenants per resource by waits, and say how many waited", async () => {
    await wellInsideAMinute();
    const before = (await resources().waits()).resources.find((r) => r.resourceId === "event_fan_out")?.waitingTenants ?? 0;
    const tenants = await Promise.all(Array.from({ length: 22 }, async () => (await makeTenant(db)).id));
    await writeTenantMetrics(db.sql, tenants.map((tenantId, i) => minute(tenantId, 0, { peak: 1, resourceWaits: { event_fan_out: 10_000 + i } })));
    const answer = await resources().waits();
    expect(answer.resources.find((r) => r.resourceId === "event_fan_out")?.waitingTenants).toBe(before + 22);
    expect(answer.waits.filter((w) => w.resourceId === "event_fan_out").map((w) => w.tenantId)).toEqual(tenants.slice(2).reverse());
    // The other resources keep their own top 20.
    expect(answer.waits.filter((w) => w.resourceId === "outbound_per_host").length).toBeGreaterThan(0);
  });
});
