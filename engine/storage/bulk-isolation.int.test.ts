// The blast radius of a bulk action (DESIGN: isolation): a bulk state change over 100,000 of one
// tenant's instances goes a batch at a time through that tenant's connection share, so another
// tenant's instances that become due while it runs are claimed and finished by a real scheduler
// before it ends, not after. Only that ordering is asserted, never a duration.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";

const BULK = 100_000;
const NEIGHBOUR = 20;

let db: TestDatabase;
let scheduler: Scheduler | null = null;
beforeAll(async () => {
  db = await freshDatabase();
});
afterEach(async () => {
  await scheduler?.stop();
  scheduler = null;
});
afterAll(() => db.drop());

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("a bulk action of one tenant", () => {
  it(`over ${BULK.toLocaleString("en")} instances does not hold up another tenant's claims`, { timeout: 180_000 }, async () => {
    const a = (await makeTenant(db)).id;
    const b = (await makeTenant(db)).id;
    // A's instances are due tomorrow: the scheduler has nothing of A's to claim, the bulk has them all.
    await db.sql.query(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at)
       SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), 'scheduled', now() + interval '1 day' + i * interval '1 millisecond'
         FROM generate_series(1, $2) AS i`,
      [a, BULK],
    );
    await db.sql.query("ANALYZE task_instances");
    const neighbourSequence = await insertSequence(db, b, [{ type: "step", id: "one", handler: "noop" }]);
    scheduler = makeScheduler(db);
    await scheduler.start();

    const store = await db.storage.tenant(a);
    const startedAt = performance.now();
    let bulkEndedAt: number | null = null;
    const bulk = store.bulkSetState({}, "paused").finally(() => {
      bulkEndedAt = performance.now();
    });
    // B's instances become due once A's bulk has written its first batch.
    const begun = await until(
      async () => (await db.sql.query("SELECT EXISTS (SELECT 1 FROM task_instances WHERE tenant_id = $1 AND state = 'paused') AS e", [a])).rows[0].e,
      60_000,
    );
    expect(begun, "A's bulk wrote a first batch").toBe(true);
    const insertedAt = performance.now();
    const ids = await insertInstancesOf(db, b, neighbourSequence, NEIGHBOUR);
    const finished = await until(
      async () =>
        (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE id = ANY($1::uuid[]) AND state = 'completed'", [ids])).rows[0].n === NEIGHBOUR,
      120_000,
    );
    const neighbourDoneAt = performance.now();
    const stillRunning = bulkEndedAt === null;
    const count = await bulk;

    expect(finished, "B's instances completed").toBe(true);
    expect(count).toBe(BULK);
    expect(stillRunning, "B's instances completed while A's bulk was still running").toBe(true);
    const ms = (t: number) => Math.round(t);
    console.info(
      `bulk of ${BULK}: ${ms(bulkEndedAt! - startedAt)} ms; B's ${NEIGHBOUR} instances, due ${ms(insertedAt - startedAt)} ms into it, ` +
        `completed ${ms(neighbourDoneAt - insertedAt)} ms later`,
    );
  });
});
