// Which group commits wait for the disk, on a real PostgreSQL: a batch of mid-run progress only
// (every instance still `running`) is one statement with synchronous_commit off, since a PostgreSQL
// crash then only re-runs its steps; a batch that ends, defers or hands off any instance waits for
// its WAL flush as before. Statements are recorded on their way to the real pool.
import type pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { insertDueInstances } from "../../test/factories.ts";
import { claimDueInstances } from "./claim.ts";
import { commitProgressBatch, type Progress } from "./execution.ts";

let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await freshDatabase();
  pool = testPool(db.url, 4);
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

/** The pool, with every statement text sent on it (pool or checked-out client) recorded. */
function recording() {
  const sent: string[] = [];
  const text = (q: unknown) => (typeof q === "string" ? q : (q as { text: string }).text);
  const db = {
    query: ((q: unknown, ...rest: unknown[]) => {
      sent.push(text(q));
      return (pool.query as (...a: unknown[]) => unknown)(q, ...rest);
    }) as pg.Pool["query"],
    connect: (async () => {
      const client = await pool.connect();
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      client.query = ((q: unknown, ...rest: unknown[]) => {
        sent.push(text(q));
        return query(q, ...rest);
      }) as typeof client.query;
      return client;
    }) as pg.Pool["connect"],
  };
  return { db, sent };
}

it("writes mid-run progress without waiting for the disk, and an end with it", async () => {
  await insertDueInstances(db, "acme", 2);
  const [a, b] = await claimDueInstances(db.sql, { now: new Date(), limit: 2, maxPerTenant: 0, leaseOwner: "t", leaseMs: 600_000 });
  const progress = (claim: typeof a, state: Progress["state"]): Progress => ({
    instanceId: claim!.id, tenantId: claim!.tenantId, leaseEpoch: claim!.leaseEpoch, state, cursor: {},
  });

  const midRun = recording();
  expect(await commitProgressBatch(midRun.db, [progress(a, "running"), progress(b, "running")])).toEqual(new Set([a!.id, b!.id]));
  // One statement, which turns synchronous_commit off for its own transaction.
  expect(midRun.sent).toHaveLength(1);
  expect(midRun.sent[0]).toContain("set_config('synchronous_commit', 'off', true)");

  const ending = recording();
  expect(await commitProgressBatch(ending.db, [progress(a, "running"), progress(b, "completed")])).toEqual(new Set([a!.id, b!.id]));
  expect(ending.sent.some((statement) => statement.includes("synchronous_commit"))).toBe(false);
  const { rows } = await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [b!.id]);
  expect(rows[0].state).toBe("completed");
});
