// The operator console's Resources procedures against a real PostgreSQL: the ledger as the
// engine declares it, and the step slots' use from the engines' tenant_metrics minutes (the last
// two), each tenant's peak against its own limit or the engine default; a raised limit shows at
// once. Non-operators get exactly the answer of a procedure that does not exist.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEDGER } from "../../engine/resources/ledger.ts";
import type { MetricRow } from "../../engine/metrics/tenant-metrics.ts";
import { writeTenantMetrics } from "../../engine/storage/metrics.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser } from "../../test/factories.ts";
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
function minute(tenantId: string, minutesAgo: number, steps: { peak: number; waited?: number; claimed?: number }): MetricRow {
  const now = Date.now();
  return {
    tenantId, minute: new Date(now - (now % MINUTE_MS) - minutesAgo * MINUTE_MS), claimed: steps.claimed ?? 1, completed: 0, failed: 0,
    deferred: {}, lagBuckets: [], backlogSamples: [], stepsPeak: steps.peak, stepsWaited: steps.waited ?? 0, resourceWaits: {},
  };
}

/** Waits out the last seconds of a minute, so rows written for "this minute" are still in it when read. */
async function wellInsideAMinute(): Promise<void> {
  const left = MINUTE_MS - (Date.now() % MINUTE_MS);
  if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

const usageOf = async (tenantId: string) => (await resources().usage()).tenants.find((t) => t.tenantId === tenantId);

describe("resources procedures", () => {
  it("refuse non-operators with exactly the answer of a procedure that does not exist", async () => {
    for (const userId of [member.id, admin.id]) {
      for (const call of [callerFor(userId).resources.ledger(), callerFor(userId).resources.usage()]) {
        const error = await trpcError(call);
        expect(error.code).toBe("NOT_FOUND");
      }
      for (const path of ["resources.ledger", "resources.usage"]) {
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
    expect(ledger.every((e) => e.enforced)).toBe(true);
  });

  it("show a tenant at its step limit, and below its new limit once ops.limits.set raises it", async () => {
    await wellInsideAMinute();
    const tenant = (await makeTenant(db)).id;
    await ops().limits.set({ tenantId: tenant, claimCap: 3, maxConcurrency: 7, maxSteps: 4 });
    await writeTenantMetrics(db.sql, [minute(tenant, 1, { peak: 3, waited: 10 }), minute(tenant, 0, { peak: 4, waited: 25 })]);
    expect(await usageOf(tenant)).toEqual({ tenantId: tenant, limit: 4, ownLimit: 4, peak: 4, waited: 35, atLimit: true });

    // The Resources page's inline form sends the step limit alone: the other two are kept.
    expect(await ops().limits.set({ tenantId: tenant, maxSteps: 12 })).toEqual({ claimCap: 3, maxConcurrency: 7, maxSteps: 12, outboundPerHost: null, apiRatePerSec: null });
    expect(await usageOf(tenant)).toEqual({ tenantId: tenant, limit: 12, ownLimit: 12, peak: 4, waited: 35, atLimit: false });
    expect(await ops().limits.get({ tenantId: tenant })).toMatchObject({ claimCap: 3, maxConcurrency: 7, maxSteps: 12 });
    const audit = await db.sql.query("SELECT actor, action, details FROM audit_log WHERE tenant_id = $1 ORDER BY id", [tenant]);
    expect(audit.rows.at(-1)).toEqual({ actor: operator.email, action: "limits.set", details: { claim_cap: 3, max_concurrency: 7, max_steps: 12, outbound_per_host: null, api_rate_per_sec: null } });

    // Back to the engine default, which it is at as well.
    await ops().limits.set({ tenantId: tenant, claimCap: 3, maxConcurrency: 7, maxSteps: null });
    await writeTenantMetrics(db.sql, [minute(tenant, 0, { peak: DEFAULT_STEPS })]);
    expect(await usageOf(tenant)).toEqual({ tenantId: tenant, limit: DEFAULT_STEPS, ownLimit: null, peak: DEFAULT_STEPS, waited: 35, atLimit: true });
    // With no override left, the tenant has no row at all.
    await ops().limits.set({ tenantId: tenant, claimCap: null, maxConcurrency: null });
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
});
