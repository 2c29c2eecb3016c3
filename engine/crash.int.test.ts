// A crashed engine loses no instance: one engine process is killed with SIGKILL in the middle of
// 1,000 instances, a fresh one finishes them all, every step's output is recorded exactly once,
// and the dead engine's lease can no longer write, and no run failed or deadlocked on the way.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant } from "../test/factories.ts";
import { commitProgress } from "./storage/execution.ts";
import { asTenantId } from "./storage/index.ts";

let db: TestDatabase;
const engines: ChildProcess[] = [];
const closed: Promise<unknown>[] = [];
/** Everything the engines wrote (their JSON logs go to stdout), also echoed to this stderr. */
let output = "";
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  for (const engine of engines) if (engine.exitCode === null) engine.kill("SIGKILL");
  await db.drop();
});

function startEngine(): ChildProcess {
  const engine = spawn(process.execPath, ["--import", "tsx", "engine/main.ts"], {
    env: {
      ...process.env, DATABASE_URL: db.url, BULKHEAD_LOG_LEVEL: "warn", BULKHEAD_TICK_MS: "20",
      BULKHEAD_LEASE_MS: "2000", BULKHEAD_REAPER_MS: "250", BULKHEAD_MAX_INSTANCES_IN_FLIGHT: "128",
      BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT: "64",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [engine.stdout!, engine.stderr!]) {
    stream.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      process.stderr.write(chunk);
    });
  }
  engines.push(engine);
  closed.push(once(engine, "close"));
  return engine;
}

async function counts(): Promise<Record<string, number>> {
  const { rows } = await db.sql.query("SELECT state, count(*)::int AS n FROM task_instances GROUP BY state");
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out; states: ${JSON.stringify(await counts())}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it("finishes every instance exactly once after an engine is killed mid-run", async () => {
  const ids: string[] = [];
  for (let t = 0; t < 5; t++) {
    await makeTenant(db, `tenant-${t}`); // placed on the primary: the engine runs placed tenants only
    const seq = await insertSequence(db, `tenant-${t}`, [
      { type: "step", id: "work", handler: "sleep", params: { duration_ms: 300 } },
      { type: "step", id: "after", handler: "log", params: { message: "done" } },
    ]);
    ids.push(...(await insertInstancesOf(db, `tenant-${t}`, seq, 200)));
  }

  const first = startEngine();
  await waitFor(async () => ((await counts()).completed ?? 0) >= 100 && ((await counts()).running ?? 0) > 0, 60_000);
  first.kill("SIGKILL");
  await new Promise((resolve) => first.once("exit", resolve));

  // What the dead engine held: running rows with its leases, now orphaned.
  const { rows: orphaned } = await db.sql.query<{ id: string; tenant_id: string; lease_epoch: number }>(
    "SELECT id, tenant_id, lease_epoch FROM task_instances WHERE state = 'running'",
  );
  expect(orphaned.length).toBeGreaterThan(0);
  expect((await counts()).completed ?? 0).toBeLessThan(1000);

  const second = startEngine();
  await waitFor(async () => ((await counts()).completed ?? 0) === 1000, 90_000);

  // Every step of every instance recorded exactly once: nothing lost, nothing doubled.
  const { rows: perInstance } = await db.sql.query(
    `SELECT i.id, count(o.id) FILTER (WHERE o.block_id = 'work')::int AS work, count(o.id) FILTER (WHERE o.block_id = 'after')::int AS after
       FROM task_instances i LEFT JOIN block_outputs o ON o.instance_id = i.id GROUP BY i.id`,
  );
  expect(perInstance).toHaveLength(1000);
  expect(perInstance.filter((r) => r.work !== 1 || r.after !== 1)).toEqual([]);
  expect(new Set(perInstance.map((r) => r.id))).toEqual(new Set(ids));

  // The dead engine's leases were superseded: a late write under one of them changes nothing.
  const ghost = orphaned[0]!;
  const written = await commitProgress(db.sql, {
    instanceId: ghost.id, tenantId: asTenantId(ghost.tenant_id), leaseEpoch: ghost.lease_epoch, state: "failed", cursor: null,
    outputs: [{ blockId: "work", output: { ghost: true }, attempt: 0 }],
  });
  expect(written).toBe(false);
  const { rows: ghostRow } = await db.sql.query("SELECT state, lease_epoch FROM task_instances WHERE id = $1", [ghost.id]);
  expect(ghostRow[0].state).toBe("completed");
  expect(ghostRow[0].lease_epoch).toBeGreaterThan(ghost.lease_epoch);

  second.kill("SIGTERM");
  expect(await new Promise((resolve) => second.once("exit", resolve))).toBe(0);

  // Neither engine had a commit deadlock, nor a run that failed.
  await Promise.all(closed);
  expect(output.split("\n").filter((line) => /deadlock detected|40P01|"run failed"/.test(line))).toEqual([]);
});
