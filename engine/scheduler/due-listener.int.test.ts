// Work due now wakes an idle scheduler by notice (LISTEN bulkhead_due), not at its next tick:
// with a tick of ten minutes, nothing but the notice can start these runs within the test.
// Created due now, resumed by a signal, or made due by PATCH state: each runs. Work due later
// sends no notice. A lost listening session is opened again, and notices work after it; work
// that became due while it was away starts when it is back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { asTenantId } from "../storage/index.ts";
import { patchInstanceState } from "../storage/instance-state.ts";
import { enqueueSignalIfActive } from "../storage/signals.ts";
import type { Scheduler } from "./scheduler.ts";
import { DUE_CHANNEL } from "./due-listener.ts";

const TEN_MINUTES = 600_000;
let db: TestDatabase;
let scheduler: Scheduler;
let sequence: string;
beforeAll(async () => {
  db = await freshDatabase();
  sequence = await insertSequence(db, "acme", [{ type: "step", id: "n", handler: "noop" }]);
  // The first tick runs at start; the next one is ten minutes away.
  scheduler = makeScheduler(db, { config: { BULKHEAD_TICK_MS: TEN_MINUTES } });
  await scheduler.start();
});
afterAll(async () => {
  await scheduler.stop();
  await db.drop();
});

async function listening(): Promise<number> {
  const { rows } = await db.sql.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'bulkhead-due-listener' AND query ILIKE $1",
    [`LISTEN ${DUE_CHANNEL}%`],
  );
  return rows[0].n;
}

async function listenerPids(): Promise<number[]> {
  const { rows } = await db.sql.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'bulkhead-due-listener'",
  );
  return rows.map((r) => r.pid);
}

const stateOf = async (id: string) => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state;

describe("due notices", () => {
  it("start an instance created due now", async () => {
    await expect.poll(listening, { timeout: 5_000 }).toBe(1);
    const [id] = (await insertInstancesOf(db, "acme", sequence)) as [string];
    await expect.poll(() => stateOf(id), { timeout: 5_000 }).toBe("completed");
  });

  it("start an instance made due by PATCH state and one resumed by a signal", async () => {
    const { rows } = await db.sql.query<{ id: string }>(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context)
       SELECT gen_random_uuid(), 'acme', 'default', $1, 'paused', '{"data": null, "config": null}' FROM generate_series(1, 2) RETURNING id`,
      [sequence],
    );
    const [patched, resumed] = rows.map((r) => r.id) as [string, string];
    await patchInstanceState(db.sql, asTenantId("acme"), patched, "scheduled");
    await enqueueSignalIfActive(db.sql, asTenantId("acme"), resumed, { type: "resume", payload: null });
    await expect.poll(() => stateOf(patched), { timeout: 5_000 }).toBe("completed");
    await expect.poll(() => stateOf(resumed), { timeout: 5_000 }).toBe("completed");
  });

  it("are not sent for work due later", async () => {
    const client = await db.sql.connect();
    try {
      const heard: string[] = [];
      client.on("notification", (n) => heard.push(n.channel));
      await client.query(`LISTEN ${DUE_CHANNEL}`);
      await db.sql.query(
        "INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at) VALUES (gen_random_uuid(), 'acme', 'default', $1, 'scheduled', now() + interval '1 hour')",
        [sequence],
      );
      await insertInstancesOf(db, "acme", sequence);
      await expect.poll(() => heard.length, { timeout: 5_000 }).toBe(1); // the due one only
      await client.query(`UNLISTEN ${DUE_CHANNEL}`);
    } finally {
      client.release();
    }
  });

  it("are sent when a scheduled instance is moved from later to now (a bulk reschedule)", async () => {
    const client = await db.sql.connect();
    try {
      const { rows } = await db.sql.query<{ id: string }>(
        "INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at) VALUES (gen_random_uuid(), 'acme', 'default', $1, 'scheduled', now() + interval '1 hour') RETURNING id",
        [sequence],
      );
      const heard: string[] = [];
      client.on("notification", (n) => heard.push(n.channel));
      await client.query(`LISTEN ${DUE_CHANNEL}`);
      await db.sql.query("UPDATE task_instances SET next_fire_at = now() WHERE id = $1", [rows[0]!.id]);
      await expect.poll(() => heard.length, { timeout: 5_000 }).toBe(1);
      await client.query(`UNLISTEN ${DUE_CHANNEL}`);
      await expect.poll(() => stateOf(rows[0]!.id), { timeout: 5_000 }).toBe("completed");
    } finally {
      client.release();
    }
  });

  it("keep working after the listening session is lost, and start what became due meanwhile", async () => {
    const before = await listenerPids();
    expect(before).toHaveLength(1);
    // Waits until the backend has exited, so no notice below can reach the old session.
    await db.sql.query("SELECT pg_terminate_backend($1, 5000)", [before[0]]);
    const [meanwhile] = (await insertInstancesOf(db, "acme", sequence)) as [string];
    await expect.poll(async () => (await listenerPids()).filter((pid) => pid !== before[0]).length, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => stateOf(meanwhile), { timeout: 5_000 }).toBe("completed");
    const [after] = (await insertInstancesOf(db, "acme", sequence)) as [string];
    await expect.poll(() => stateOf(after), { timeout: 5_000 }).toBe("completed");
  });
});
