// An idle scheduler (its last claim found nothing) does not claim every tick: with thousands of
// tenants holding only future-dated work, each empty claim visits every one of them (the console
// benchmark's engine kept PostgreSQL at 1.5 cores doing so). It claims again when woken (a due
// notice, a run's end, a placement or limit change), when the next known due time comes, or after
// BULKHEAD_IDLE_CLAIM_MS at the latest, for work that became due without a notice.
import { afterEach, beforeEach, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeTenant } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { countStatements } from "../../test/statement-counts.ts";
import { createLogger } from "../logger.ts";
import { StorageBackends } from "../storage/index.ts";
import type { Scheduler } from "./scheduler.ts";
import { TenantView } from "./tenant-view.ts";

const TEN_MINUTES = 600_000;
let db: TestDatabase;
let scheduler: Scheduler | undefined;
let backends: StorageBackends | undefined;
let tenants: TenantView | undefined;
beforeEach(async () => {
  db = await freshDatabase();
});
afterEach(async () => {
  await scheduler?.stop();
  tenants?.stop();
  await backends?.close();
  [scheduler, backends, tenants] = [undefined, undefined, undefined];
  await db.drop();
});

/** A backend of its own whose connections count the statements they run, by name. */
function countingBackend(): { backend: StorageBackends["primary"]; counts: Map<string, number> } {
  backends = new StorageBackends(db.config.backends, { poolSize: 4 });
  return { backend: backends.primary, counts: countStatements(backends.primary.pool) };
}

const claims = (counts: Map<string, number>) => [...counts].filter(([name]) => name.startsWith("claim_due")).reduce((sum, [, n]) => sum + n, 0);

async function insertInstance(tenantId: string, sequenceId: string, dueInMs: number): Promise<string> {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at)
     VALUES (gen_random_uuid(), $1, 'default', $2, 'scheduled', now() + make_interval(secs => $3 / 1000.0)) RETURNING id`,
    [tenantId, sequenceId, dueInMs],
  );
  return rows[0]!.id;
}

/** An instance of acme due now, inserted with triggers off: no due notice is sent. */
async function insertDueWithoutNotice(sequenceId: string): Promise<string> {
  const client = await db.sql.connect();
  try {
    await client.query("SET session_replication_role = replica");
    const { rows } = await client.query<{ id: string }>(
      "INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at) VALUES (gen_random_uuid(), 'acme', 'default', $1, 'scheduled', now()) RETURNING id",
      [sequenceId],
    );
    return rows[0]!.id;
  } finally {
    await client.query("SET session_replication_role = DEFAULT");
    client.release();
  }
}

const stateOf = async (id: string) => (await db.sql.query<{ state: string }>("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0]?.state;

it("with only future-dated work it claims once per idle interval, still looks up the next due time each tick, and a notice wakes it", async () => {
  const sequence = await insertSequence(db, "acme", [{ type: "step", id: "n", handler: "noop" }]);
  await insertInstance("acme", sequence, TEN_MINUTES);
  const { backend, counts } = countingBackend();
  scheduler = makeScheduler(db, { backend, config: { BULKHEAD_TICK_MS: 20, BULKHEAD_IDLE_CLAIM_MS: 400 } });
  await scheduler.start();
  await new Promise((resolve) => setTimeout(resolve, 1_300));
  // One claim at start, then one per 400 ms: a claim every 20 ms tick would be about 65.
  expect(claims(counts)).toBeGreaterThanOrEqual(2);
  expect(claims(counts)).toBeLessThanOrEqual(6);
  expect(counts.get("next_due_after") ?? 0).toBeGreaterThanOrEqual(20);

  const now = await insertInstance("acme", sequence, 0);
  await expect.poll(() => stateOf(now), { timeout: 5_000, interval: 20 }).toBe("completed");
});

it("work made due without a notice is claimed within the idle interval", async () => {
  const sequence = await insertSequence(db, "acme", [{ type: "step", id: "n", handler: "noop" }]);
  scheduler = makeScheduler(db, { config: { BULKHEAD_TICK_MS: TEN_MINUTES, BULKHEAD_IDLE_CLAIM_MS: 300 } });
  await scheduler.start();
  const id = await insertDueWithoutNotice(sequence);
  await expect.poll(() => stateOf(id), { timeout: 5_000, interval: 20 }).toBe("completed");
});

it("work that fell due since the last claim, with no notice, is claimed at the next look for the due time, not after the idle interval", async () => {
  const sequence = await insertSequence(db, "acme", [{ type: "step", id: "n", handler: "noop" }]);
  scheduler = makeScheduler(db, { config: { BULKHEAD_TICK_MS: 50, BULKHEAD_IDLE_CLAIM_MS: TEN_MINUTES } });
  await scheduler.start();
  await new Promise((resolve) => setTimeout(resolve, 200)); // its claim found nothing: it is idle
  const id = await insertDueWithoutNotice(sequence);
  await expect.poll(() => stateOf(id), { timeout: 5_000, interval: 20 }).toBe("completed");
});

it("a tenant resumed after a move's quiesce is claimed at once, without waiting out the idle interval", async () => {
  const tenant = (await makeTenant(db)).id;
  const sequence = await insertSequence(db, tenant, [{ type: "step", id: "n", handler: "noop" }]);
  await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [tenant]);
  tenants = new TenantView(db.storage, createLogger("test", "silent"), 50);
  await tenants.start();
  scheduler = makeScheduler(db, { tenants, config: { BULKHEAD_TICK_MS: TEN_MINUTES, BULKHEAD_IDLE_CLAIM_MS: TEN_MINUTES } });
  await scheduler.start();
  const id = await insertInstance(tenant, sequence, 0);
  // Its notice woke the scheduler, whose claim left the quiesced tenant out.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await stateOf(id)).toBe("scheduled");
  await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = NULL WHERE tenant_id = $1", [tenant]);
  await expect.poll(() => stateOf(id), { timeout: 5_000, interval: 20 }).toBe("completed");
});
