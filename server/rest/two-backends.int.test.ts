// Two backends, as the placement issue asks: tenant A on `primary`, B on `eu-1`. Both use the
// REST API and the engine the same way (sequences, triggers, a webhook, instances one by one and in a batch,
// signals, worker tasks, breaker resets, emitted children), and afterwards every row of each
// sits in its own database only, checked table by table with direct SQL on both.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createBuiltInHandlers } from "../../engine/handlers/registry.ts";
import { createLogger } from "../../engine/logger.ts";
import { TenantView } from "../../engine/scheduler/tenant-view.ts";
import { Scheduler, type SchedulerConfig } from "../../engine/scheduler/scheduler.ts";
import { TENANT_TABLES } from "../../engine/storage/tenant-rows.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { webhookSignature } from "../webhooks.ts";
import { call, tenantWithKey } from "./testing.ts";

const config: SchedulerConfig = {
  BULKHEAD_TICK_MS: 20, BULKHEAD_IDLE_CLAIM_MS: 1_000, BULKHEAD_CLAIM_BATCH: 64, BULKHEAD_MAX_INSTANCES_PER_TENANT: 0, BULKHEAD_MAX_INSTANCES_IN_FLIGHT: 32,
  BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 16, BULKHEAD_MAX_CONCURRENT_STEPS: 32, BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: 16,
  BULKHEAD_LEASE_MS: 5_000, BULKHEAD_REAPER_MS: 500, BULKHEAD_SHUTDOWN_GRACE_MS: 1_000,
  BULKHEAD_BREAKER_THRESHOLD: 5, BULKHEAD_BREAKER_COOLDOWN_SECS: 60,
};

let second: TestDatabase;
let db: TestDatabase;
let tenantView: TenantView;
let schedulers: Scheduler[];
beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  const log = createLogger("test", "silent");
  tenantView = new TenantView(db.storage, log, 100);
  await tenantView.start();
  const handlers = createBuiltInHandlers({ httpAllow: [] });
  schedulers = db.storage.backends.ids().map(
    (id) => new Scheduler({ backend: db.storage.backends.get(id), handlers, config, tenants: tenantView, log, ownerId: `two-${id}` }),
  );
  for (const scheduler of schedulers) await scheduler.start();
});
afterAll(async () => {
  await Promise.all(schedulers.map((s) => s.stop()));
  tenantView.stop();
  await db.drop();
  await second.drop();
});

/** Everything a tenant does through the API and the engine; returns its instance ids. */
async function useEverything(tenant: { id: string; key: string }) {
  const key = tenant.key;
  const ok = async (method: string, path: string, body?: unknown) => {
    const reply = await call(db, method, path, { key, body });
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300);
    return (reply.text ? reply.json() : {}) as Record<string, unknown>;
  };
  const sequence = (name: string, blocks: unknown[]) => ({
    id: randomUUID(), tenant_id: tenant.id, namespace: "default", name, version: 1, created_at: new Date().toISOString(), blocks,
  });
  const child = sequence("child", [{ type: "step", id: "c", handler: "noop" }]);
  const parent = sequence("parent", [
    { type: "step", id: "gate", handler: "noop", wait_for_input: { prompt: "go?" } },
    { type: "step", id: "ext", handler: "ext_worker" },
    { type: "step", id: "emit", handler: "emit_event", params: { trigger_slug: `kick-${tenant.id}`, dedupe_key: "once" } },
  ]);
  await ok("POST", "/sequences", child);
  await ok("POST", "/sequences", parent);
  // Trigger slugs are unique across tenants: each tenant has its own.
  await ok("POST", "/triggers", { slug: `kick-${tenant.id}`, sequence_name: "child", trigger_type: "event" });
  // A signed webhook finds the tenant's backend from its slug alone (the registry on the primary).
  const hook = `hook-${tenant.id}`;
  await ok("POST", "/triggers", { slug: hook, sequence_name: "child", secret: "hook-secret" });
  const [timestamp, nonce, body] = [String(Math.floor(Date.now() / 1000)), randomUUID(), '{"from":"vendor"}'];
  const webhook = await call(db, "POST", `/webhooks/${hook}`, {
    raw: body,
    headers: { "x-trigger-timestamp": timestamp, "x-trigger-nonce": nonce, "x-orch8-signature": webhookSignature("hook-secret", timestamp, nonce, Buffer.from(body)) },
  });
  expect(webhook.status, webhook.text).toBe(202);
  const one = await ok("POST", "/instances", { sequence_id: parent.id, tenant_id: tenant.id, namespace: "default" });
  await ok("POST", "/instances/batch", { instances: [1, 2].map(() => ({ sequence_id: parent.id, tenant_id: tenant.id, namespace: "default" })) });
  await ok("POST", `/tenants/${tenant.id}/circuit-breakers/ext_worker/reset`);
  const ids = ((await ok("GET", "/instances?limit=10")).items as { id: string }[]).map((i) => i.id);
  expect(ids).toContain(one.id);

  // The outside world: answer every gate, then do every worker task, until all have finished.
  await expect.poll(async () => {
    const page = (await ok("GET", "/instances?limit=50")).items as { id: string; state: string }[];
    for (const instance of page.filter((i) => i.state === "waiting")) {
      await call(db, "POST", `/instances/${instance.id}/signals`, { key, body: { signal_type: { custom: "human_input:gate" }, payload: { value: "yes" } } });
    }
    const tasks = (await call(db, "POST", "/workers/tasks/poll", { key, body: { handler_name: "ext_worker", worker_id: "w1", limit: 10 } })).json() as { id: string; claim_epoch: number }[];
    for (const task of tasks) await ok("POST", `/workers/tasks/${task.id}/complete`, { worker_id: "w1", claim_epoch: task.claim_epoch, output: { done: true } });
    return page.filter((i) => i.state === "completed").length;
  }, { timeout: 30_000, interval: 100 }).toBe(5); // three parents, the one deduplicated child and the webhook's
  return ids;
}

async function rowsOf(on: TestDatabase, tenantId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { name } of TENANT_TABLES) {
    counts[name] = (await on.sql.query(`SELECT count(*)::int AS n FROM ${name} WHERE tenant_id = $1`, [tenantId])).rows[0].n;
  }
  return counts;
}

it("keeps every row of a tenant on the backend it is placed on, and none anywhere else", async () => {
  const a = await tenantWithKey(db);
  const b = await tenantWithKey(db);
  await db.storage.advanceTenantPlacement(b.id, "eu-1", 2); // before B has any data
  await tenantView.refresh();

  await Promise.all([useEverything(a), useEverything(b)]);

  const none = Object.fromEntries(TENANT_TABLES.map((t) => [t.name, 0]));
  expect(await rowsOf(second, a.id)).toEqual(none);
  expect(await rowsOf(db, b.id)).toEqual(none);
  const [onPrimary, onEu] = [await rowsOf(db, a.id), await rowsOf(second, b.id)];
  // The same work filled the same tables, each in its tenant's own database (counts vary with
  // timing: a gate answered twice, say).
  const filled = (counts: Record<string, number>) => Object.keys(counts).filter((table) => counts[table]! > 0);
  expect(filled(onEu)).toEqual(filled(onPrimary));
  for (const table of ["sequences", "task_instances", "block_outputs", "signals", "worker_tasks", "worker_task_attempts", "event_dedupe", "triggers", "webhook_nonces", "trigger_deliveries", "circuit_breaker_resets"]) {
    expect(onPrimary[table], table).toBeGreaterThan(0);
  }
}, 60_000);
