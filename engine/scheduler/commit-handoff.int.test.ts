// A run whose last commit is queued gives its in-flight slot back at once, on a real PostgreSQL:
// the scheduler claims on while that commit waits (a slow WAL flush, here a commit statement held
// back on its way to the pool), keeps renewing its lease, holds each tenant to twice its
// in-flight limit of runs, pending commits included, and writes other tenants' commits meanwhile.
import type pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import type { Scheduler, SchedulerConfig } from "./scheduler.ts";

let db: TestDatabase;
let scheduler: Scheduler | null = null;
/** Commit statements of the tenants in `holding` wait here until `releaseAll`. */
let holding = new Set<string>();
const held: { values: string; go: () => void }[] = [];

beforeAll(async () => {
  db = await freshDatabase();
  const pool = db.storage.backends.primary.pool;
  const gate = async (statement: unknown) => {
    const { name, values } = (statement ?? {}) as pg.QueryConfig;
    if (!name?.startsWith("commit_progress")) return;
    const text = JSON.stringify(values);
    if (![...holding].some((tenant) => text.includes(`"tenant_id\\":\\"${tenant}\\"`))) return;
    await new Promise<void>((go) => held.push({ values: text, go }));
  };
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as { query: unknown }).query = async (...args: unknown[]) => {
    await gate(args[0]);
    return query(...args);
  };
  // pool.query itself connects with a callback: that call is passed through.
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient>;
  (pool as { connect: unknown }).connect = async (...args: unknown[]) => {
    if (args.length > 0) return connect(...args);
    const client = await connect();
    const clientQuery = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as { query: unknown }).query = async (...args: unknown[]) => {
      await gate(args[0]);
      return clientQuery(...args);
    };
    return client;
  };
});
afterEach(async () => {
  releaseAll();
  await scheduler?.stop();
  scheduler = null;
});
afterAll(() => db.drop());

function releaseAll(): void {
  holding = new Set();
  for (const h of held.splice(0)) h.go();
}

async function startScheduler(config: Partial<SchedulerConfig>) {
  scheduler = makeScheduler(db, { config });
  await scheduler.start();
  return scheduler;
}

async function states(ids: string[]): Promise<string[]> {
  const { rows } = await db.sql.query<{ state: string }>("SELECT state FROM task_instances WHERE id = ANY($1) ORDER BY state", [ids]);
  return rows.map((r) => r.state);
}

/** How many outputs each instance has: 1 when its step ran once. */
async function outputsOf(ids: string[]): Promise<number[]> {
  const { rows } = await db.sql.query<{ n: number }>(
    "SELECT (SELECT count(*)::int FROM block_outputs o WHERE o.instance_id = t.id) AS n FROM task_instances t WHERE t.id = ANY($1)", [ids]);
  return rows.map((r) => r.n);
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const heldIds = (ids: string[]) => ids.filter((id) => held.some((h) => h.values.includes(id)));
const oneStep = [{ type: "step", id: "s", handler: "noop" }];

it("claims the tenant's next instance while its last one's final commit waits", async () => {
  const seq = await insertSequence(db, "slowdisk", oneStep);
  const ids = await insertInstancesOf(db, "slowdisk", seq, 3);
  holding = new Set(["slowdisk"]);
  const running = await startScheduler({ BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 1 });
  await until(() => heldIds(ids).length >= 1);
  // One instance in flight at a time: the second was claimed and ran its step while the first
  // one's commit waited, and its own commit waits too. Two held, the limit's twice: the third
  // waits for them.
  await until(async () => (await states(ids)).join() === "running,running,scheduled" && running.inFlightOf("slowdisk") === 0);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(await states(ids)).toEqual(["running", "running", "scheduled"]);
  releaseAll();
  await until(async () => (await states(ids)).every((s) => s === "completed"));
  expect(await outputsOf(ids)).toEqual([1, 1, 1]);
});

it("keeps renewing the lease of a run whose final commit waits longer than the lease", async () => {
  const seq = await insertSequence(db, "longflush", oneStep);
  const ids = await insertInstancesOf(db, "longflush", seq, 1);
  holding = new Set(["longflush"]);
  await startScheduler({ BULKHEAD_LEASE_MS: 600, BULKHEAD_REAPER_MS: 100 });
  await until(() => heldIds(ids).length === 1);
  await new Promise((resolve) => setTimeout(resolve, 2_000)); // over three leases: the reaper would have taken it back
  const { rows } = await db.sql.query("SELECT state, lease_expires_at > now() AS leased FROM task_instances WHERE id = $1", [ids[0]]);
  expect(rows).toEqual([{ state: "running", leased: true }]);
  releaseAll();
  await until(async () => (await states(ids))[0] === "completed");
  // Claimed once (epoch 1), its step run once.
  const { rows: [after] } = await db.sql.query("SELECT lease_epoch::int AS epoch FROM task_instances WHERE id = $1", [ids[0]]);
  expect(after).toEqual({ epoch: 1 });
  expect(await outputsOf(ids)).toEqual([1]);
});

it("leaves the run slots to other tenants while one tenant's final commits wait", async () => {
  const seq = await insertSequence(db, "stuck", oneStep);
  const other = await insertSequence(db, "bystander", oneStep);
  const ids = await insertInstancesOf(db, "stuck", seq, 3);
  holding = new Set(["stuck"]);
  // One run slot in the process, one per tenant: so at most two runs held per tenant, four in all.
  const running = await startScheduler({ BULKHEAD_MAX_INSTANCES_IN_FLIGHT: 1, BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 1 });
  await until(async () => (await states(ids)).join() === "running,running,scheduled" && running.inFlight === 0);
  // The bystander gets the run slot the waiting commits gave back, and its commits are written
  // beside theirs: two of the writer's three concurrent batches wait, the third is free.
  const theirs = await insertInstancesOf(db, "bystander", other, 5);
  await until(async () => (await states(theirs)).every((s) => s === "completed"));
  expect(await states(ids)).toEqual(["running", "running", "scheduled"]);
  expect(held).toHaveLength(2);
  releaseAll();
  await until(async () => (await states([...ids, ...theirs])).every((s) => s === "completed"));
  expect(await outputsOf([...ids, ...theirs])).toEqual(Array(8).fill(1));
});
