// emit_event's storage: one child per dedupe key under concurrency, and a crash between the
// dedupe row and the child leaves neither.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { emitEvent } from "./events.ts";
import { asTenantId } from "./index.ts";

let db: TestDatabase;
/** Enough connections that the 50 emits really run at once. */
let wide: pg.Pool;
let parent = "";
beforeAll(async () => {
  db = await freshDatabase();
  wide = testPool(db.url, 50);
  const seq = await insertSequence(db, "acme", [{ type: "step", id: "x", handler: "noop" }], "child-seq");
  [parent] = (await insertInstancesOf(db, "acme", seq)) as [string];
});
afterAll(async () => {
  await wide.end();
  await db.drop();
});

const event = (key: string) => ({
  tenantId: asTenantId("acme"), parentId: parent, target: { sequenceName: "child-seq" }, data: { n: 1 }, metadata: {}, dedupe: { scope: "tenant", key },
});

it("50 concurrent emits with one dedupe key create exactly one child, and all answer with it: 100 rounds", async () => {
  for (let round = 0; round < 100; round++) {
    const key = `k-${round}`;
    const results = (await Promise.all(Array.from({ length: 50 }, () => emitEvent(wide, event(key))))) as { instanceId: string; deduped: boolean }[];
    const ids = new Set(results.map((r) => r.instanceId));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => !r.deduped)).toHaveLength(1);
    // The parent and one child per round so far: no loser left a child of its own behind.
    const { rows } = await db.sql.query("SELECT count(*)::int AS n, count(*) FILTER (WHERE id = $1)::int AS answered FROM task_instances", [[...ids][0]]);
    expect({ round, ...rows[0] }).toEqual({ round, n: round + 2, answered: 1 });
  }
});

it("a crash between the dedupe row and the child leaves neither", async () => {
  for (let i = 0; i < 100; i++) {
    const key = `crash-${i}`;
    await expect(emitEvent(db.storage.backends.primary.pool, event(key), () => { throw new Error("crash"); })).rejects.toThrow("crash");
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM event_dedupe WHERE dedupe_key = $1", [key]);
    expect(rows[0].n).toBe(0);
  }
  // and the key is free for the next, real emit
  expect(await emitEvent(db.storage.backends.primary.pool, event("crash-0"))).toMatchObject({ deduped: false });
});

it("refuses a sequence of another tenant as if it did not exist", async () => {
  await insertSequence(db, "globex", [{ type: "step", id: "x", handler: "noop" }], "globex-only");
  expect(await emitEvent(db.storage.backends.primary.pool, { ...event("g"), target: { sequenceName: "globex-only" } })).toBeNull();
});
