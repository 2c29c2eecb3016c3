// The operator console's placement procedures against two real backends: tenants with their
// placement, backends with health, advancing with the expected epoch (a stale one is a CONFLICT
// that changes nothing), starting a move that an engine then runs, and the audit trail.
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { MoveRunner } from "../../engine/moves/move-runner.ts";
import { createLogger } from "../../engine/logger.ts";
import { TenantMetrics } from "../../engine/metrics/tenant-metrics.ts";
import { writeTenantMetrics } from "../../engine/storage/metrics.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let second: TestDatabase;
let db: TestDatabase;
let operator: { id: string; email: string };
beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  operator = await makeUser(db, { isOperator: true });
});
afterAll(async () => {
  await db.drop();
  await second.drop();
});

const ops = () => createCaller(createContext(db, operator.id)).ops;
const audit = async (tenantId: string) =>
  (await db.sql.query("SELECT actor, action, details FROM audit_log WHERE tenant_id = $1 ORDER BY id", [tenantId])).rows;

describe("ops placement procedures", () => {
  it("list the registered backends with their health, never a connection string", async () => {
    const backends = await ops().backends();
    expect(backends.map((b) => b.id)).toEqual(["primary", "eu-1"]);
    expect(backends.every((b) => b.reachable && typeof b.latencyMs === "number")).toBe(true);
    expect(JSON.stringify(backends)).not.toMatch(/postgres(ql)?:\/\//);
  });

  it("advance a placement only past the epoch the operator saw; a stale one is a CONFLICT and changes nothing", async () => {
    const tenant = (await makeTenant(db)).id;
    expect(await ops().advancePlacement({ tenantId: tenant, backendId: "eu-1", epoch: 2 })).toEqual({ tenantId: tenant, backendId: "eu-1", epoch: 2 });
    const stale = await ops().advancePlacement({ tenantId: tenant, backendId: "primary", epoch: 2 }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(TRPCError);
    expect(stale).toMatchObject({ code: "CONFLICT", message: "placement epoch 2 is not newer than the current epoch 2" });
    expect((await ops().tenants()).find((t) => t.id === tenant)).toMatchObject({ backendId: "eu-1", epoch: 2, quiesced: false });
    expect(await audit(tenant)).toEqual([{ actor: operator.email, action: "placement.advance", details: { backend_id: "eu-1", epoch: 2 } }]);
  });

  it("start a move that an engine runs, and show its phases until it is done", async () => {
    const tenant = (await makeTenant(db)).id;
    const seq = await insertSequence(db, tenant, [{ type: "step", id: "x", handler: "noop" }]);
    await insertInstancesOf(db, tenant, seq, 10);
    const started = await ops().startMove({ tenantId: tenant, backendId: "eu-1" });
    expect(started).toMatchObject({ kind: "started", moveId: expect.any(String) });
    expect(await ops().moves({ tenantId: tenant })).toMatchObject([{ id: started.moveId, phase: "quiesce", fromBackend: "primary", toBackend: "eu-1", requestedBy: operator.email }]);

    const runner = new MoveRunner(db.storage, createLogger("test", "silent"), { intervalMs: 50, graceMs: 200 });
    runner.start();
    try {
      await expect.poll(async () => (await ops().moves({ tenantId: tenant }))[0]!.phase, { timeout: 15_000 }).toBe("done");
    } finally {
      await runner.stop();
    }
    expect((await ops().tenants()).find((t) => t.id === tenant)).toMatchObject({ backendId: "eu-1", epoch: 2, quiesced: false });
    expect(await ops().startMove({ tenantId: tenant, backendId: "eu-1" })).toEqual({ kind: "already_placed", moveId: null });
    expect((await audit(tenant)).map((r) => [r.actor, r.action])).toEqual([[operator.email, "tenant.move.start"], ["engine", "tenant.move.done"]]);
  });

  it("refuse an unregistered backend and a tenant that does not exist", async () => {
    const tenant = (await makeTenant(db)).id;
    await expect(ops().startMove({ tenantId: tenant, backendId: "ap-9" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(ops().startMove({ tenantId: "no-such-tenant", backendId: "eu-1" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(ops().advancePlacement({ tenantId: tenant, backendId: "ap-9", epoch: 5 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("a quiesced tenant", () => {
  it("answers writes with 503 and SERVICE_UNAVAILABLE, and still serves reads", async () => {
    const tenant = (await makeTenant(db)).id;
    const admin = await makeUser(db, { memberOf: [[tenant, "admin"]] });
    const seq = await insertSequence(db, tenant, [{ type: "step", id: "x", handler: "noop" }]);
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [tenant]);
    const caller = createCaller(createContext(db, admin.id));
    await expect(caller.sequences.run({ tenantId: tenant, sequenceId: seq, input: null })).rejects.toMatchObject({
      code: "SERVICE_UNAVAILABLE", message: "the tenant is being moved to another backend; retry shortly",
    });
    expect(await caller.sequences.list({ tenantId: tenant })).toHaveLength(1);
  });

  it("refuses every write to its rows, tenant's or operator's, and still takes control-plane writes", async () => {
    const tenant = (await makeTenant(db)).id;
    const admin = await makeUser(db, { memberOf: [[tenant, "admin"]] });
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [tenant]);
    const caller = createCaller(createContext(db, admin.id));
    const moving = { code: "SERVICE_UNAVAILABLE", message: "the tenant is being moved to another backend; retry shortly" };
    await expect(caller.breakers.reset({ tenantId: tenant, handler: "h" })).rejects.toMatchObject(moving);
    await expect(caller.triggers.create({ tenantId: tenant, slug: "t", sequenceName: "s", sequenceVersion: null, triggerType: "event", generateSecret: false })).rejects.toMatchObject(moving);
    await expect(ops().limits.setBudget({ tenantId: tenant, stepsPerPeriod: 10, periodSecs: 60 })).rejects.toMatchObject(moving);
    await expect(ops().limits.setRateLimit({ tenantId: tenant, key: "k", maxCount: 1, windowMs: 1000 })).rejects.toMatchObject(moving);
    await expect(createCaller(createContext(db, operator.id)).breakers.ops.reset({ tenantId: tenant, handler: "h" })).rejects.toMatchObject(moving);
    // Members, API keys and the tenant's own limits live in the control plane, which a move does not copy.
    await caller.members.invite({ tenantId: tenant, email: `late-${tenant}@example.test`, role: "member" });
    await caller.apiKeys.create({ tenantId: tenant, name: "during-move" });
    await ops().limits.set({ tenantId: tenant, claimCap: 3, maxConcurrency: null });
    expect(await ops().limits.get({ tenantId: tenant })).toMatchObject({ claimCap: 3, budget: null, rateLimits: [] });
  });
});

describe("ops.fairness", () => {
  it("reads every backend's rollups, each tenant only where it is placed, the breaches first with the ledger's reason", async () => {
    const quiet = (await makeTenant(db)).id;
    const loud = (await makeTenant(db)).id;
    await ops().advancePlacement({ tenantId: loud, backendId: "eu-1", epoch: 2 });
    const now = Date.now();
    const metrics = new TenantMetrics();
    metrics.claimed(quiet, 5, now);
    await writeTenantMetrics(db.sql, metrics.drain());
    for (let i = 0; i < 30; i++) metrics.claimed(loud, 3_000, now);
    metrics.backlog(loud, 300, now);
    metrics.deferred(loud, "breaker", now);
    await writeTenantMetrics(second.sql, metrics.drain());
    // A stale copy of the loud tenant's minute on the primary, as a move leaves behind until cleanup.
    metrics.claimed(loud, 5, now);
    await writeTenantMetrics(db.sql, metrics.drain());

    const result = await ops().fairness({ range: "15m" });
    const ours = result.tenants.filter((t) => t.tenantId === quiet || t.tenantId === loud);
    // The loud tenant's p99 (≤ 5 s) is over the default 1 s objective: listed first, with its breaker deferral.
    expect(ours).toMatchObject([
      { tenantId: loud, claimed: 30, backlog: 300, breach: true, objectiveMs: 1_000, lagP99: { ms: 5_000, over: false }, reasons: [{ key: "breaker", ledgerId: "handler_failures", count: 1 }] },
      { tenantId: quiet, claimed: 1, backlog: 0, breach: false, lagP50: { ms: 10, over: false }, reasons: [] },
    ]);
    // Other tests of this file run engines too: ours are among the counted.
    expect(result.totals.tenants).toBeGreaterThanOrEqual(2);
    expect(result.totals.breaches).toBeGreaterThanOrEqual(1);
    expect(result.minutes.length).toBeGreaterThan(0);
    expect(result.minutes.at(-1)!.jain).toBeGreaterThan(0);

    // The drill-down reads the tenant where it is placed.
    const drill = await ops().fairnessTenant({ tenantId: loud, range: "15m" });
    expect(drill).toMatchObject({ tenantId: loud, backendId: "eu-1", objectiveMs: 1_000, summary: { claimed: 30, breach: true } });
    expect(drill.minutes.at(-1)).toMatchObject({ claimed: 30, deferred: { breaker: 1 } });
    await expect(ops().fairnessTenant({ tenantId: "no-such-tenant", range: "1h" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("operator tenant management", () => {
  it("creates a tenant on a chosen backend with its first admin, whose one-time password is returned once", async () => {
    const created = await ops().createTenant({ slug: "umbrella", name: "Umbrella", backendId: "eu-1", adminEmail: "Ada@Umbrella.test" });
    expect(created).toMatchObject({ tenantId: "umbrella", backendId: "eu-1", adminEmail: "ada@umbrella.test", oneTimePassword: expect.any(String) });
    expect((await ops().tenants()).find((t) => t.id === "umbrella")).toMatchObject({ backendId: "eu-1", epoch: 1, memberCount: 1 });
    expect((await audit("umbrella")).map((r) => r.action)).toEqual(["tenant.create", "user.create", "member.add"]);
    // A second tenant for the same person: the existing account, no new password.
    expect(await ops().createTenant({ slug: "umbrella-2", adminEmail: "ada@umbrella.test" })).toMatchObject({ backendId: "primary", oneTimePassword: null });
  });

  it("refuses a bad slug, a taken one, a bad email and an unknown backend, creating nothing", async () => {
    const before = await db.prisma.tenant.count();
    for (const input of [
      { slug: "Bad Slug", adminEmail: "a@b.test" }, { slug: "umbrella", adminEmail: "a@b.test" },
      { slug: "fresh-one", adminEmail: "not-an-email" }, { slug: "fresh-two", adminEmail: "a@b.test", backendId: "ap-9" },
    ]) {
      await expect(ops().createTenant(input)).rejects.toBeInstanceOf(TRPCError);
    }
    expect(await db.prisma.tenant.count()).toBe(before);
  });

  it("sets a tenant's own limits, budget and rate limits, each in the audit log", async () => {
    const tenant = (await makeTenant(db)).id;
    await ops().limits.set({ tenantId: tenant, claimCap: 4, maxConcurrency: 8 });
    await ops().limits.setBudget({ tenantId: tenant, stepsPerPeriod: 100, periodSecs: 60 });
    await ops().limits.setRateLimit({ tenantId: tenant, key: "vendor", maxCount: 5, windowMs: 1000 });
    expect(await ops().limits.get({ tenantId: tenant })).toMatchObject({
      claimCap: 4, maxConcurrency: 8, defaults: { claimCap: db.config.BULKHEAD_MAX_INSTANCES_PER_TENANT },
      budget: { stepsPerPeriod: 100, periodSecs: 60, used: 0 }, rateLimits: [{ key: "vendor", maxCount: 5, windowMs: 1000 }],
    });
    await ops().limits.set({ tenantId: tenant, claimCap: null, maxConcurrency: null });
    await ops().limits.setBudget({ tenantId: tenant, stepsPerPeriod: 0, periodSecs: 60 });
    expect(await ops().limits.get({ tenantId: tenant })).toMatchObject({ claimCap: null, maxConcurrency: null, budget: null });
    expect((await audit(tenant)).map((r) => r.action)).toEqual(["limits.set", "budget.set", "rate_limit.set", "limits.set", "budget.remove"]);
    await expect(ops().limits.set({ tenantId: "no-such-tenant", claimCap: 1, maxConcurrency: null })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("pages through the audit log newest first, filtered by tenant, action prefix and actor", async () => {
    const tenant = (await makeTenant(db)).id;
    for (const maxCount of [1, 2, 3]) await ops().limits.setRateLimit({ tenantId: tenant, key: "k", maxCount, windowMs: 1000 });
    const first = await ops().audit.list({ tenantId: tenant, action: "rate_limit.", limit: 2 });
    expect(first.items.map((i) => (i.details as { max_count: number }).max_count)).toEqual([3, 2]);
    const second = await ops().audit.list({ tenantId: tenant, action: "rate_limit.", limit: 2, cursor: first.next });
    expect(second).toMatchObject({ items: [{ details: { max_count: 1 }, actor: operator.email }], next: null });
    expect((await ops().audit.list({ actor: "nobody-like-this" })).items).toEqual([]);
  });
});
