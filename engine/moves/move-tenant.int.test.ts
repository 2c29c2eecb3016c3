// Tenant moves with the real engine running on two backends: 1,000 instances in flight (running,
// waiting on signals, waiting on workers) all complete exactly once on the new backend, nothing
// of the tenant stays on the old one, another tenant keeps running throughout, and a mover that
// dies in any phase is resumed by running the move again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant } from "../../test/factories.ts";
import { createBuiltInHandlers } from "../handlers/registry.ts";
import { createLogger } from "../logger.ts";
import { TenantView } from "../scheduler/tenant-view.ts";
import { Scheduler, type SchedulerConfig } from "../scheduler/scheduler.ts";
import { asTenantId, Storage, StorageBackends } from "../storage/index.ts";
import { activeMove, MOVE_PHASES, type MovePhase } from "../storage/moves.ts";
import { readPlacement } from "../storage/placements.ts";
import { setTenantLimits } from "../storage/tenant-limits.ts";
import { enqueueSignalIfActive } from "../storage/signals.ts";
import { CONTROL_PLANE_TABLES, TENANT_TABLES } from "../storage/tenant-rows.ts";
import { completeWorkerTask, pollWorkerTasks } from "../storage/worker-tasks.ts";
import { MoveRunner } from "./move-runner.ts";
import { moveTenant, runMove, startMove, type MoveOptions } from "./move-tenant.ts";

const config: SchedulerConfig = {
  BULKHEAD_TICK_MS: 20, BULKHEAD_IDLE_CLAIM_MS: 1_000, BULKHEAD_CLAIM_BATCH: 64, BULKHEAD_MAX_INSTANCES_PER_TENANT: 16, BULKHEAD_MAX_INSTANCES_IN_FLIGHT: 64,
  BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: 32, BULKHEAD_MAX_CONCURRENT_STEPS: 64, BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT: 32,
  BULKHEAD_LEASE_MS: 5_000, BULKHEAD_REAPER_MS: 500, BULKHEAD_SHUTDOWN_GRACE_MS: 500,
  BULKHEAD_BREAKER_THRESHOLD: 5, BULKHEAD_BREAKER_COOLDOWN_SECS: 60,
};
const log = createLogger("test", process.env.TEST_LOG ?? "silent");

let second: TestDatabase;
let db: TestDatabase;
let storage: Storage;
let tenantView: TenantView;
let schedulers: Scheduler[];
beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  // The engine's own wiring (engine/main.ts): one placement view, one scheduler per backend.
  storage = new Storage(new StorageBackends(db.config.backends, { poolSize: 24 }));
  tenantView = new TenantView(storage, log, 100);
  await tenantView.start();
  const handlers = createBuiltInHandlers({ httpAllow: [] });
  schedulers = storage.backends.ids().map(
    (id) => new Scheduler({
      backend: storage.backends.get(id), backends: storage.backends, handlers, config, tenants: tenantView, log, ownerId: `move-test-${id}`,
    }),
  );
  for (const scheduler of schedulers) await scheduler.start();
});
afterAll(async () => {
  await Promise.all(schedulers.map((s) => s.stop()));
  tenantView.stop();
  await storage.close();
  await db.drop();
  await second.drop();
});

const pool = (backendId: string) => storage.backends.get(backendId).pool;
const options = (extra: Partial<MoveOptions> = {}): MoveOptions => ({ requestedBy: "test", graceMs: 300, drainTimeoutMs: 30_000, ...extra });
const step = (id: string, handler: string, extra: object = {}) => ({ type: "step", id, handler, ...extra });

/** Rows of `tenantId` in every tenant table on one backend, by table (tables without any left out). */
async function rowsOn(backendId: string, tenantId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { name } of TENANT_TABLES) {
    const { rows } = await pool(backendId).query(`SELECT count(*)::int AS n FROM ${name} WHERE tenant_id = $1`, [tenantId]);
    if (rows[0].n > 0) counts[name] = rows[0].n;
  }
  return counts;
}

/** A tenant's three kinds of work: quick two-step runs, runs waiting on a signal, runs waiting on a worker. */
async function workload(tenantId: string, counts: { quick: number; gated: number; worker: number }) {
  const quick = await insertSequence(db, tenantId, [step("a", "sleep", { params: { duration_ms: 20 } }), step("last", "noop")], "quick");
  const gated = await insertSequence(db, tenantId, [step("gate", "noop", { wait_for_input: { prompt: "ok?" } }), step("last", "noop")], "gated");
  const worker = await insertSequence(db, tenantId, [step("ext", "ext_worker"), step("last", "noop")], "worker");
  await insertInstancesOf(db, tenantId, quick, counts.quick);
  await insertInstancesOf(db, tenantId, gated, counts.gated);
  await insertInstancesOf(db, tenantId, worker, counts.worker);
  return counts.quick + counts.gated + counts.worker;
}

/**
 * Plays the outside world on the tenant's backend until every instance has completed: answers
 * the gates of instances waiting on them, and completes the worker tasks.
 */
async function finishAll(backendId: string, tenantId: string, total: number, timeoutMs = 60_000) {
  const db = pool(backendId);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows: gates } = await db.query(
      `SELECT i.id FROM task_instances i JOIN sequences s ON s.id = i.sequence_id AND s.tenant_id = i.tenant_id
        WHERE i.tenant_id = $1 AND i.state = 'waiting' AND s.name = 'gated'
          AND NOT EXISTS (SELECT 1 FROM signals g WHERE g.instance_id = i.id)`,
      [tenantId],
    );
    for (const { id } of gates) {
      await enqueueSignalIfActive(db, asTenantId(tenantId), id, { type: { custom: "human_input:gate" }, payload: { value: "yes" } });
    }
    for (const task of await pollWorkerTasks(db, asTenantId(tenantId), { handlerName: "ext_worker", queueName: null, workerId: "w", limit: 200 })) {
      await completeWorkerTask(db, asTenantId(tenantId), task.id, { workerId: "w", claimEpoch: task.claimEpoch }, { done: true });
    }
    const { rows } = await db.query("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1 AND state = 'completed'", [tenantId]);
    if (rows[0].n === total) return;
    if (Date.now() > deadline) {
      const { rows: stuck } = await db.query(
        `SELECT i.id, i.state, s.name, i.next_fire_at, i.current_step,
                (SELECT json_agg(json_build_object('type', g.signal_type, 'delivered', g.delivered_at)) FROM signals g WHERE g.instance_id = i.id) AS signals,
                (SELECT json_agg(json_build_object('state', w.state, 'block', w.block_id)) FROM worker_tasks w WHERE w.instance_id = i.id) AS tasks
           FROM task_instances i JOIN sequences s ON s.id = i.sequence_id
          WHERE i.tenant_id = $1 AND i.state <> 'completed' LIMIT 5`,
        [tenantId],
      );
      throw new Error(`${rows[0].n} of ${total} instances completed on ${backendId}; not completed: ${JSON.stringify(stuck)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every instance's last step wrote exactly one output: each instance ran to its end once. */
async function expectEachCompletedOnce(backendId: string, tenantId: string, total: number) {
  const { rows } = await pool(backendId).query(
    `SELECT count(*)::int AS instances, count(*) FILTER (WHERE o.n = 1)::int AS once
       FROM task_instances i
       LEFT JOIN LATERAL (SELECT count(*) AS n FROM block_outputs b WHERE b.instance_id = i.id AND b.block_id = 'last') o ON true
      WHERE i.tenant_id = $1 AND i.state = 'completed'`,
    [tenantId],
  );
  expect(rows[0]).toEqual({ instances: total, once: total });
}

describe("the list of tenant tables", () => {
  it("names every table with a tenant_id column but the control plane's", async () => {
    const { rows } = await db.sql.query(
      "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'tenant_id' ORDER BY 1",
    );
    const controlPlane: readonly string[] = CONTROL_PLANE_TABLES;
    const dataTables = rows.map((r) => r.table_name as string).filter((name) => !controlPlane.includes(name));
    expect(dataTables).toEqual(TENANT_TABLES.map((t) => t.name).sort());
  });
});

describe("moving a tenant with 1,000 instances in flight", () => {
  it("completes every instance exactly once on the new backend, leaves none behind, and never pauses another tenant", async () => {
    const moving = (await makeTenant(db)).id;
    const neighbour = (await makeTenant(db)).id;
    const total = await workload(moving, { quick: 600, gated: 200, worker: 200 });
    // Let the engine get going: some running, some waiting on gates and workers.
    await expect.poll(async () => (await rowsOn("primary", moving)).worker_tasks ?? 0, { timeout: 20_000 }).toBeGreaterThan(50);

    const phases: MovePhase[] = [];
    let neighbourRanWhileQuiesced = false;
    const result = await moveTenant(storage, moving, "eu-1", options({
      beforePhase: async (_move, phase) => {
        phases.push(phase);
        if (phase === "copy") {
          // The moving tenant is quiesced now; the neighbour's new work still runs to the end.
          const seq = await insertSequence(db, neighbour, [step("n", "noop")]);
          await insertInstancesOf(db, neighbour, seq, 50);
          await expect.poll(async () => (await db.sql.query(
            "SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1 AND state = 'completed'", [neighbour],
          )).rows[0].n, { timeout: 15_000 }).toBe(50);
          neighbourRanWhileQuiesced = (await readPlacement(db.sql, moving))?.quiescedAt !== null;
        }
      },
    }));

    expect(result.kind).toBe("moved");
    expect(phases).toEqual(MOVE_PHASES.filter((p) => p !== "done"));
    expect(neighbourRanWhileQuiesced).toBe(true);
    expect(await readPlacement(db.sql, moving)).toMatchObject({ backendId: "eu-1", epoch: 2, quiescedAt: null });
    expect(await readPlacement(db.sql, neighbour)).toMatchObject({ backendId: "primary", epoch: 1, quiescedAt: null });
    expect(await rowsOn("primary", moving)).toEqual({});

    await finishAll("eu-1", moving, total);
    await expectEachCompletedOnce("eu-1", moving, total);
    // The metrics followed the tenant: every completion counted once, on the new backend only
    // (counts made on the old backend during the drain were held until the tenant resumed).
    await Promise.all(schedulers.map((s) => s.flushMetrics()));
    const { rows: metrics } = await pool("eu-1").query("SELECT coalesce(sum(completed), 0)::int AS completed FROM tenant_metrics WHERE tenant_id = $1", [moving]);
    expect(metrics[0].completed).toBe(total);
    expect(await rowsOn("primary", moving)).toEqual({});
  }, 120_000);
});

describe("a mover that dies", () => {
  const phases = MOVE_PHASES.filter((p) => p !== "done");

  it.each(phases)("in the %s phase is resumed by running the move again, and nothing is lost", async (deathPhase) => {
    const tenant = (await makeTenant(db)).id;
    const total = await workload(tenant, { quick: 30, gated: 10, worker: 10 });
    await new Promise((resolve) => setTimeout(resolve, 200));

    const dying = moveTenant(storage, tenant, "eu-1", options({
      beforePhase: (_move, phase) => {
        if (phase === deathPhase) throw new Error(`mover died before ${phase}`);
      },
    }));
    await expect(dying).rejects.toThrow(`mover died before ${deathPhase}`);
    const stopped = await activeMove(db.sql, tenant);
    expect(stopped).toMatchObject({ phase: deathPhase, error: `mover died before ${deathPhase}` });
    // Until the cutover the tenant is on its old backend; from then on, on the new one.
    const cutOver = phases.indexOf(deathPhase) > phases.indexOf("cutover");
    expect((await readPlacement(db.sql, tenant))?.backendId).toBe(cutOver ? "eu-1" : "primary");
    // Another move elsewhere must wait for this one.
    await expect(moveTenant(storage, tenant, "primary", options())).rejects.toMatchObject({ code: "conflict" });

    const resumed = await moveTenant(storage, tenant, "eu-1", options());
    expect(resumed).toMatchObject({ kind: "moved", move: { id: stopped!.id, phase: "done", error: null } });
    expect(await readPlacement(db.sql, tenant)).toMatchObject({ backendId: "eu-1", epoch: 2, quiescedAt: null });
    expect(await rowsOn("primary", tenant)).toEqual({});
    await finishAll("eu-1", tenant, total);
    await expectEachCompletedOnce("eu-1", tenant, total);
    // Running it once more changes nothing.
    expect(await moveTenant(storage, tenant, "eu-1", options())).toEqual({ kind: "already_placed", backendId: "eu-1", epoch: 2 });
  }, 60_000);
});

describe("a move started from the console", () => {
  it("is only recorded there, then run to the end by an engine's move runner", async () => {
    const tenant = (await makeTenant(db)).id;
    const total = await workload(tenant, { quick: 20, gated: 5, worker: 5 });
    const started = await startMove(storage, tenant, "eu-1", "ops@example.test");
    expect(started).toMatchObject({ kind: "started", move: { phase: "quiesce", requestedBy: "ops@example.test" } });
    expect(await startMove(storage, tenant, "eu-1", "someone else")).toMatchObject({ kind: "resumable", move: { id: started.kind === "already_placed" ? "" : started.move.id } });

    const runner = new MoveRunner(storage, log, { intervalMs: 50, graceMs: 300 });
    runner.start();
    try {
      await expect.poll(async () => (await activeMove(db.sql, tenant)) === null, { timeout: 20_000 }).toBe(true);
    } finally {
      await runner.stop();
    }
    expect(await readPlacement(db.sql, tenant)).toMatchObject({ backendId: "eu-1", epoch: 2, quiescedAt: null });
    await finishAll("eu-1", tenant, total);
    await expectEachCompletedOnce("eu-1", tenant, total);
  }, 60_000);
});

describe("an engine shutting down mid-move", () => {
  it("stops at the next phase boundary without marking the move failed, and the move resumes", async () => {
    const tenant = (await makeTenant(db)).id;
    await startMove(storage, tenant, "eu-1", "test");
    const runner = new MoveRunner(storage, log, { intervalMs: 20, graceMs: 800 });
    runner.start();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the runner is in the quiesce grace now
    await runner.stop();
    expect(await activeMove(db.sql, tenant)).toMatchObject({ phase: "drain", error: null });
    expect(await moveTenant(storage, tenant, "eu-1", options())).toMatchObject({ kind: "moved", move: { phase: "done" } });
  });
});

describe("two runners of one move", () => {
  it("never run at once: the second is turned away while the first holds the move", async () => {
    const tenant = (await makeTenant(db)).id;
    const started = await startMove(storage, tenant, "eu-1", "test");
    if (started.kind === "already_placed") throw new Error("expected a new move");
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached = () => {};
    const atDrain = new Promise<void>((resolve) => (reached = resolve));
    const first = runMove(storage, started.move, options({
      beforePhase: async (_move, phase) => {
        if (phase === "drain") {
          reached();
          await held;
        }
      },
    }));
    await atDrain;
    await expect(runMove(storage, started.move, options())).rejects.toThrow("another process is running this move");
    release();
    expect(await first).toMatchObject({ phase: "done" });
  });
});

describe("refusals", () => {
  it("fails closed: no placement is NotFound, an unregistered backend is refused, and nothing is written", async () => {
    await expect(moveTenant(storage, "no-such-tenant", "eu-1", options())).rejects.toMatchObject({ code: "not_found" });
    const tenant = (await makeTenant(db)).id;
    await expect(moveTenant(storage, tenant, "ap-9", options())).rejects.toMatchObject({ code: "invalid_argument" });
    expect(await activeMove(db.sql, tenant)).toBeNull();
    expect(await readPlacement(db.sql, tenant)).toMatchObject({ backendId: "primary", epoch: 1, quiescedAt: null });
  });
});

describe("schedulers and placements", () => {
  it("run a tenant's instances only on the backend it is placed on, and none of a quiesced or unplaced tenant", async () => {
    const elsewhere = (await makeTenant(db)).id;
    const quiesced = (await makeTenant(db)).id;
    // Rows on eu-1 of tenants placed on primary (a stale or premature copy), and of no tenant at all.
    for (const tenantId of [elsewhere, "unplaced-tenant"]) {
      const seq = await insertSequence(second, tenantId, [step("x", "noop")]);
      await insertInstancesOf(second, tenantId, seq, 5);
    }
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [quiesced]);
    await tenantView.refresh(); // engines see a placement change within the refresh interval (a move waits it out)
    const seq = await insertSequence(db, quiesced, [step("x", "noop")]);
    await insertInstancesOf(db, quiesced, seq, 5);

    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const states = async (on: TestDatabase, tenantId: string) =>
      (await on.sql.query("SELECT DISTINCT state FROM task_instances WHERE tenant_id = $1", [tenantId])).rows.map((r) => r.state);
    expect(await states(second, elsewhere)).toEqual(["scheduled"]);
    expect(await states(second, "unplaced-tenant")).toEqual(["scheduled"]);
    expect(await states(db, quiesced)).toEqual(["scheduled"]);

    // Lifting the quiesce lets it run.
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = NULL WHERE tenant_id = $1", [quiesced]);
    await expect.poll(() => states(db, quiesced), { timeout: 10_000 }).toEqual(["completed"]);
  });
});

describe("schedulers and tenant limits", () => {
  it("hold a tenant to its own in-flight limit and claim cap", async () => {
    const limited = (await makeTenant(db)).id;
    await setTenantLimits(db.sql, limited, { claimCap: 1, maxConcurrency: 2, maxSteps: null });
    await tenantView.refresh();
    const seq = await insertSequence(db, limited, [step("nap", "sleep", { params: { duration_ms: 300 } })]);
    await insertInstancesOf(db, limited, seq, 8);
    let most = 0;
    let mostHeld = 0;
    const running = async () => (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1 AND state = 'running'", [limited])).rows[0].n as number;
    const done = async () => (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1 AND state = 'completed'", [limited])).rows[0].n as number;
    const sampler = setInterval(() => (most = Math.max(most, ...schedulers.map((s) => s.inFlightOf(limited)))), 2);
    try {
      while ((await done()) < 8) {
        mostHeld = Math.max(mostHeld, await running());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      clearInterval(sampler);
    }
    // One engine process per backend here, so its limit is the tenant's whole limit: two in
    // flight, and as many again whose last commit is still being written (their rows still read
    // running).
    expect(most).toBe(2);
    expect(mostHeld).toBeGreaterThan(0);
    expect(mostHeld).toBeLessThanOrEqual(4);
  }, 30_000);
});
