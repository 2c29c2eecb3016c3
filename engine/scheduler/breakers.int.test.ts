// Circuit breakers in the running engine, against a real PostgreSQL and a local HTTP vendor:
// one tenant's failing vendor opens that tenant's breaker and nobody else's, Open breakers
// survive restarts with their cooldown clock, fallbacks, persistence and fleet convergence.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { createBuiltInHandlers } from "../handlers/registry.ts";
import { listOpenBreakers, resetBreaker, setBreakerSettings, upsertOpenBreaker } from "../storage/breakers.ts";
import { Scheduler, type SchedulerConfig } from "./scheduler.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { asTenantId } from "../storage/index.ts";

let db: TestDatabase;
let vendor: http.Server;
let base = "";
const running: Scheduler[] = [];
beforeAll(async () => {
  db = await freshDatabase();
  vendor = http.createServer((req, res) => {
    res.statusCode = req.url?.startsWith("/fail") ? 500 : 200;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ ok: res.statusCode === 200 }));
  });
  await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});
afterAll(async () => {
  vendor.close();
  await db.drop();
});

async function engine(config: Partial<SchedulerConfig> = {}) {
  const scheduler = makeScheduler(db, { handlers: createBuiltInHandlers({ httpAllow: ["127.0.0.1"] }), config, ownerId: `engine-${running.length}` });
  running.push(scheduler);
  await scheduler.start();
  return scheduler;
}

const call = (id: string, path: string, extra: object = {}) => ({ type: "step", id, handler: "http_request", params: { url: `${base}${path}` }, ...extra });

async function states(tenant: string) {
  const { rows } = await db.sql.query("SELECT state, defer_reason, next_fire_at FROM task_instances WHERE tenant_id = $1", [tenant]);
  return rows;
}

async function until(check: () => Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("a tenant's failing vendor", () => {
  it("opens that tenant's http_request breaker while another tenant's http_request keeps running (the article's bug)", async () => {
    const failing = await insertSequence(db, "tenant-a", [call("c", "/fail")]);
    const healthy = await insertSequence(db, "tenant-b", [call("c", "/ok")]);
    await insertInstancesOf(db, "tenant-a", failing, 20);
    await insertInstancesOf(db, "tenant-b", healthy, 20);
    // One at a time per tenant, so exactly the threshold's worth of calls reach the failing vendor.
    await engine({ BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 1 });
    await until(async () => (await states("tenant-b")).every((r) => r.state === "completed"));
    await until(async () => (await states("tenant-a")).every((r) => r.state !== "running" && r.state !== "scheduled" || r.defer_reason === "breaker"));

    const a = await states("tenant-a");
    expect(a.filter((r) => r.state === "failed")).toHaveLength(5); // the five that opened it
    const deferred = a.filter((r) => r.state === "scheduled");
    expect(deferred.length).toBe(15);
    for (const r of deferred) {
      expect(r.defer_reason).toBe("breaker");
      expect(new Date(r.next_fire_at).getTime()).toBeGreaterThan(Date.now() + 50_000); // the cooldown, not a hot loop
    }
    expect((await listOpenBreakers(db.sql)).map((b) => [b.tenantId, b.handler, b.failureCount])).toEqual([["tenant-a", "http_request", 5]]);
  });

  it("follows a tenant admin's own threshold for a handler", async () => {
    await setBreakerSettings(db.sql, { tenantId: "strict", handler: "http_request", failureThreshold: 2, cooldownSecs: 30 }, { threshold: [1, 10], cooldownSecs: [5, 60] });
    const seq = await insertSequence(db, "strict", [call("c", "/fail")]);
    await insertInstancesOf(db, "strict", seq, 6);
    await engine({ BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 1 });
    await until(async () => (await states("strict")).every((r) => r.state === "failed" || r.defer_reason === "breaker"));
    const rows = await states("strict");
    expect(rows.filter((r) => r.state === "failed")).toHaveLength(2);
    for (const r of rows.filter((x) => x.state === "scheduled")) expect(new Date(r.next_fire_at).getTime() - Date.now()).toBeLessThanOrEqual(30_000);
  });

  it("an untracked `fail` step never opens anything", async () => {
    const seq = await insertSequence(db, "untracked", [{ type: "step", id: "f", handler: "fail" }]);
    await insertInstancesOf(db, "untracked", seq, 12);
    await engine();
    await until(async () => (await states("untracked")).every((r) => r.state === "failed"));
    expect((await listOpenBreakers(db.sql, "untracked"))).toEqual([]);
  });
});

describe("open breakers", () => {
  it("keep deferring after a restart for the remaining cooldown only", async () => {
    await upsertOpenBreaker(db.sql, { tenantId: "restarted", handler: "http_request", failureCount: 5, openedAt: new Date(Date.now() - 50_000) });
    const seq = await insertSequence(db, "restarted", [call("c", "/ok")]);
    await insertInstancesOf(db, "restarted", seq, 1);
    await engine();
    await until(async () => (await states("restarted"))[0].defer_reason === "breaker");
    const due = new Date((await states("restarted"))[0].next_fire_at).getTime() - Date.now();
    expect(due).toBeGreaterThan(5_000);
    expect(due).toBeLessThanOrEqual(10_000);
  });

  it("a recovered breaker (probe succeeded) leaves no row", async () => {
    await upsertOpenBreaker(db.sql, { tenantId: "recovering", handler: "http_request", failureCount: 5, openedAt: new Date(Date.now() - 120_000) });
    const seq = await insertSequence(db, "recovering", [call("c", "/ok")]);
    await insertInstancesOf(db, "recovering", seq, 3);
    await engine();
    await until(async () => (await states("recovering")).every((r) => r.state === "completed"));
    await until(async () => (await listOpenBreakers(db.sql, "recovering")).length === 0);
  });

  it("take the fallback handler when it is closed, and defer when it is open too", async () => {
    await upsertOpenBreaker(db.sql, { tenantId: "fallback", handler: "http_request", failureCount: 5, openedAt: new Date() });
    const viaLog = await insertSequence(db, "fallback", [call("c", "/ok", { fallback_handler: "log" })]);
    const [id] = await insertInstancesOf(db, "fallback", viaLog, 1);
    await upsertOpenBreaker(db.sql, { tenantId: "fallback", handler: "llm_call", failureCount: 5, openedAt: new Date() });
    const bothOpen = await insertSequence(db, "fallback", [call("c", "/ok", { fallback_handler: "llm_call" })]);
    const [stuck] = await insertInstancesOf(db, "fallback", bothOpen, 1);
    await engine();
    await until(async () => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state === "completed");
    const { rows: out } = await db.sql.query("SELECT output FROM block_outputs WHERE instance_id = $1", [id]);
    expect(out).toHaveLength(1); // the log handler ran in place of the open http_request
    await until(async () => (await db.sql.query("SELECT defer_reason FROM task_instances WHERE id = $1", [stuck])).rows[0].defer_reason === "breaker");
  });

  it("are written before shutdown completes", async () => {
    const seq = await insertSequence(db, "flush", [call("c", "/fail")]);
    await insertInstancesOf(db, "flush", seq, 5);
    const scheduler = await engine();
    await until(async () => scheduler.breakers.isOpen("flush", "http_request"));
    await scheduler.stop();
    running.splice(running.indexOf(scheduler), 1);
    expect((await listOpenBreakers(db.sql, "flush")).map((b) => b.handler)).toEqual(["http_request"]);
  });
});

describe("fleet convergence", () => {
  it("an Open row from one process is honoured by another, and a reset reaches both, within 5 s", async () => {
    const first = await engine();
    const second = await engine();
    const seq = await insertSequence(db, "fleet", [call("c", "/fail")]);
    // Threshold 5 per process: with 10 failures split between the two engines, one sees 5.
    await insertInstancesOf(db, "fleet", seq, 10);
    await until(async () => first.breakers.isOpen("fleet", "http_request") || second.breakers.isOpen("fleet", "http_request"));
    const opened = Date.now();
    await until(async () => first.breakers.isOpen("fleet", "http_request") && second.breakers.isOpen("fleet", "http_request"), 5_000);
    expect(Date.now() - opened).toBeLessThan(5_000);

    await resetBreaker(db.sql, asTenantId("fleet"), "http_request", "test");
    const reset = Date.now();
    await until(async () => !first.breakers.isOpen("fleet", "http_request") && !second.breakers.isOpen("fleet", "http_request"), 5_000);
    expect(Date.now() - reset).toBeLessThan(5_000);
    expect(await listOpenBreakers(db.sql, "fleet")).toEqual([]);
  });
});
