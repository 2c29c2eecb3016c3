// Work dated in the future starts when it falls due, not at the scheduler's next tick: with a
// tick of ten minutes, only the scheduler's own look at the next due time can start these runs
// within the test. Each starts no earlier than its due time.
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { nextDueAfter } from "../storage/claim.ts";
import type { Scheduler } from "./scheduler.ts";

const TEN_MINUTES = 600_000;
let db: TestDatabase;
let scheduler: Scheduler | undefined;
let sequence: string;
beforeAll(async () => {
  db = await freshDatabase();
  sequence = await insertSequence(db, "acme", [{ type: "step", id: "n", handler: "noop" }]);
});
afterAll(async () => {
  await scheduler?.stop();
  await db.drop();
});

const insertDueIn = async (ms: number, priority = 1) =>
  (await db.sql.query<{ id: string; next_fire_at: Date }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, priority, next_fire_at)
     VALUES (gen_random_uuid(), 'acme', 'default', $1, 'scheduled', $2, now() + make_interval(secs => $3 / 1000.0)) RETURNING id, next_fire_at`,
    [sequence, priority, ms],
  )).rows[0]!;

it("the next due time is the earliest future one of any priority, and ignores work already due", async () => {
  const now = new Date();
  await insertDueIn(-60_000); // a due backlog
  const low = await insertDueIn(40_000, 0);
  await insertDueIn(50_000, 3);
  expect(await nextDueAfter(db.sql, now)).toEqual(low.next_fire_at);
  await db.sql.query("DELETE FROM task_instances");
  expect(await nextDueAfter(db.sql, now)).toBeNull();
});

it("instances due in 1, 2 and 3 seconds each start when due, with a ten-minute tick", async () => {
  const due = [await insertDueIn(1_000), await insertDueIn(2_000, 0), await insertDueIn(3_000, 2)];
  scheduler = makeScheduler(db, { config: { BULKHEAD_TICK_MS: TEN_MINUTES } });
  await scheduler.start();
  const ends = async () =>
    (await db.sql.query<{ id: string; state: string; completed_at: Date | null }>("SELECT id, state, completed_at FROM task_instances WHERE id = ANY($1)", [due.map((d) => d.id)])).rows;
  await expect.poll(async () => (await ends()).filter((row) => row.state === "completed").length, { timeout: 8_000 }).toBe(3);
  for (const row of await ends()) {
    expect(row.completed_at!.getTime()).toBeGreaterThanOrEqual(due.find((d) => d.id === row.id)!.next_fire_at.getTime());
  }
});
