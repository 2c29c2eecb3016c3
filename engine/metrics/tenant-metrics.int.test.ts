// Tenant metrics through the real scheduler and PostgreSQL: a known workload gives exactly the
// expected claims, ends, deferrals and lag buckets in tenant_metrics.
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { setBudget } from "../storage/budgets.ts";
import { dueBacklog, pruneTenantMetrics, readTenantMetrics, writeTenantMetrics } from "../storage/metrics.ts";
import { TenantMetrics } from "./tenant-metrics.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { asTenantId } from "../storage/index.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

/** A tenant's minutes summed: the workload may straddle a minute boundary. */
async function totals(tenantId: string) {
  const rows = (await readTenantMetrics(db.sql, new Date(Date.now() - 3_600_000), new Date(Date.now() + 60_000))).filter((r) => r.tenantId === tenantId);
  const deferred: Record<string, number> = {};
  const lag = Array<number>(12).fill(0);
  for (const r of rows) {
    for (const [reason, n] of Object.entries(r.deferred)) deferred[reason] = (deferred[reason] ?? 0) + (n ?? 0);
    r.lagBuckets.forEach((n, i) => (lag[i] = lag[i]! + n));
  }
  const sum = (key: "claimed" | "completed" | "failed") => rows.reduce((n, r) => n + r[key], 0);
  return { claimed: sum("claimed"), completed: sum("completed"), failed: sum("failed"), deferred, lag };
}

async function dueAgo(tenantId: string, sequenceId: string, count: number, agoMs: number) {
  const ids = await insertInstancesOf(db, tenantId, sequenceId, count);
  await db.sql.query("UPDATE task_instances SET next_fire_at = now() - $2 * interval '1 millisecond' WHERE id = ANY($1)", [ids, agoMs]);
}

it("records exactly the claims, ends, deferrals and lag buckets of a known workload", async () => {
  await dueAgo("m-ok", await insertSequence(db, "m-ok", [{ type: "step", id: "x", handler: "noop" }]), 10, 30_000);
  await dueAgo("m-bad", await insertSequence(db, "m-bad", [{ type: "step", id: "x", handler: "fail" }]), 4, 2_000);
  await setBudget(db.sql, asTenantId("m-budget"), 2, 3_600, new Date());
  await dueAgo("m-budget", await insertSequence(db, "m-budget", [{ type: "step", id: "x", handler: "noop" }]), 5, 0);

  const scheduler = makeScheduler(db, { ownerId: "metrics-test" });
  await scheduler.start();
  const settled = async () => (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE state IN ('completed', 'failed') OR defer_reason = 'budget'")).rows[0].n;
  await expect.poll(settled, { timeout: 15_000 }).toBe(19);
  await scheduler.stop(); // writes what it counted

  const bucket = (index: number, n: number) => Array.from({ length: 12 }, (_, i) => (i === index ? n : 0));
  // Due 30 s ago: claimed with a lag in (30 s, 60 s]; due 2 s ago: in (1 s, 2.5 s]; due now: under 250 ms.
  expect(await totals("m-ok")).toEqual({ claimed: 10, completed: 10, failed: 0, deferred: {}, lag: bucket(10, 10) });
  expect(await totals("m-bad")).toEqual({ claimed: 4, completed: 0, failed: 4, deferred: {}, lag: bucket(6, 4) });
  const budgeted = await totals("m-budget");
  expect({ ...budgeted, lag: budgeted.lag.slice(4).every((n) => n === 0) }).toEqual({
    claimed: 5, completed: 2, failed: 0, deferred: { budget: 3 }, lag: true,
  });
});

it("adds a second write of the same minute to the first, bucket by bucket and reason by reason", async () => {
  const minute = new Date(Date.UTC(2026, 0, 1, 0, 0));
  const metrics = new TenantMetrics();
  metrics.claimed("m-merge", 5, minute.getTime());
  metrics.deferred("m-merge", "breaker", minute.getTime());
  metrics.backlog("m-merge", 3, minute.getTime());
  metrics.step("m-merge", 4, true, minute.getTime());
  metrics.waited("m-merge", "db_connections", minute.getTime());
  await writeTenantMetrics(db.sql, metrics.drain());
  metrics.claimed("m-merge", 400, minute.getTime());
  metrics.deferred("m-merge", "breaker", minute.getTime());
  metrics.deferred("m-merge", "cap", minute.getTime());
  metrics.backlog("m-merge", 1, minute.getTime());
  metrics.step("m-merge", 3, true, minute.getTime()); // another process's smaller peak: the greater one stays
  metrics.waited("m-merge", "db_connections", minute.getTime());
  metrics.waited("m-merge", "outbound_per_host", minute.getTime());
  await writeTenantMetrics(db.sql, metrics.drain());
  const [row] = (await readTenantMetrics(db.sql, minute, new Date(minute.getTime() + 60_000))).filter((r) => r.tenantId === "m-merge");
  expect(row).toEqual({
    tenantId: "m-merge", minute, claimed: 2, completed: 0, failed: 0, deferred: { breaker: 2, cap: 1 },
    lagBuckets: [1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0], backlogSamples: [3, 1], stepsPeak: 4, stepsWaited: 2,
    resourceWaits: { db_connections: 2, outbound_per_host: 1 },
  });
});

it("samples the backlog: due, unclaimed instances per tenant, only of the tenants asked for", async () => {
  const seq = await insertSequence(db, "m-backlog", [{ type: "step", id: "x", handler: "noop" }]);
  await dueAgo("m-backlog", seq, 3, 1_000);
  await insertInstancesOf(db, "m-other", seq, 2);
  const backlog = await dueBacklog(db.sql, new Date(Date.now() + 1_000), ["m-backlog"]);
  expect([...backlog]).toEqual([["m-backlog", 3]]);
});

it("prunes minutes older than the retention, and only those", async () => {
  const metrics = new TenantMetrics();
  const old = Date.UTC(2025, 0, 1);
  const recent = Date.now();
  metrics.claimed("m-prune", 5, old);
  metrics.claimed("m-prune", 5, recent);
  await writeTenantMetrics(db.sql, metrics.drain());
  expect(await pruneTenantMetrics(db.sql, new Date(recent - 14 * 86_400_000))).toBeGreaterThanOrEqual(1);
  const left = (await readTenantMetrics(db.sql, new Date(0), new Date(recent + 60_000))).filter((r) => r.tenantId === "m-prune");
  expect(left.map((r) => r.minute.getTime())).toEqual([recent - (recent % 60_000)]);
});
