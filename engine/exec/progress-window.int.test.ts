// How soon a settled step is written while its siblings still run, through the scheduler on a
// real PostgreSQL: a fast branch's output is stored within PROGRESS_EVERY_MS (plus one commit)
// though the slow branch beside it runs on for seconds, so a crash then would not run it again;
// and results that settle together are written together, not one commit per branch.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { HandlerRegistry } from "../handlers/registry.ts";
import type { Handler } from "../handlers/types.ts";
import { PROGRESS_EVERY_MS } from "./step-runner.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const waitFor = (ms: number): Handler => async (input) => {
  await sleep(ms, undefined, { signal: input.signal }).catch(() => {});
  return { kind: "success", output: { after: ms } };
};

it("writes a fast branch's result within the progress window while a slow sibling runs, and settled siblings in one write", async () => {
  const scheduler = makeScheduler(db, { handlers: new HandlerRegistry([["fast", waitFor(20)], ["slow", waitFor(3_000)]]) });
  const fast = Array.from({ length: 10 }, (_, i) => [{ type: "step", id: `fast-${i}`, handler: "fast" }]);
  const sequence = await insertSequence(db, "acme", [{ type: "parallel", id: "fan", branches: [...fast, [{ type: "step", id: "slow", handler: "slow" }]] }]);
  const [id] = await insertInstancesOf(db, "acme", sequence);
  await scheduler.start();
  try {
    const started = performance.now();
    const written = async () => (await db.sql.query("SELECT count(*)::int AS n FROM block_outputs WHERE instance_id = $1 AND block_id LIKE 'fast-%'", [id])).rows[0].n;
    await expect.poll(written, { timeout: 2_000, interval: 10 }).toBe(10);
    // Written long before the slow branch ends (3 s): at most the window after they settled, plus a commit and a claim.
    expect(performance.now() - started).toBeLessThan(PROGRESS_EVERY_MS + 1_000);
    const { rows } = await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id]);
    expect(rows[0].state).toBe("running");
    // The ten fast results settled within one window: they went out in one or two commits, not ten.
    const { rows: commits } = await db.sql.query("SELECT count(DISTINCT created_at)::int AS n FROM block_outputs WHERE instance_id = $1 AND block_id LIKE 'fast-%'", [id]);
    expect(commits[0].n).toBeLessThanOrEqual(2);
    const state = async () => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state;
    await expect.poll(state, { timeout: 10_000, interval: 50 }).toBe("completed");
  } finally {
    await scheduler.stop();
  }
}, 30_000);
