// The DLQ read (wire-format J) against a real PostgreSQL: the tenant's failed instances only,
// newest update first with ties by id, and a page read off the partial dead-letter index rather
// than by sorting every failure the tenant has.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainAnalyze, scansOf } from "../../test/explain.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { listDeadLetters } from "./dead-letters.ts";
import { asTenantId } from "./ids.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const insert = (tenantId: string, state: string, count: number, updatedAt = "now()") =>
  db.sql.query(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, updated_at)
     SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), $2, ${updatedAt} FROM generate_series(1, $3) AS i`,
    [tenantId, state, count],
  );

describe("listDeadLetters", () => {
  it("pages the tenant's failed instances, newest update first, ties broken by id, never overlapping", async () => {
    const tenantId = `dlq-${randomUUID().slice(0, 6)}`;
    // Ten share one updated_at: only the id orders them.
    await insert(tenantId, "failed", 10, "'2026-01-01T00:00:00Z'::timestamptz");
    await insert(tenantId, "failed", 5, "now() - i * interval '1 second'");
    await insert(tenantId, "cancelled", 5);
    await insert("dlq-neighbour", "failed", 5);
    const all = await listDeadLetters(db.sql, asTenantId(tenantId), { offset: 0, limit: 100 });
    expect(all).toHaveLength(15);
    expect(all.every((i) => i.state === "failed" && i.tenantId === tenantId)).toBe(true);
    const key = (i: (typeof all)[number]) => [i.updatedAt.getTime(), i.id] as const;
    for (let n = 1; n < all.length; n++) {
      const [a, b] = [key(all[n - 1]!), key(all[n]!)];
      expect(a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])).toBe(true);
    }
    const pages = [0, 4, 8, 12].map((offset) => listDeadLetters(db.sql, asTenantId(tenantId), { offset, limit: 4 }));
    expect((await Promise.all(pages)).flat().map((i) => i.id)).toEqual(all.map((i) => i.id));
  });

  it("reads a page off the dead-letter index, not every failure of the tenant", async () => {
    const tenantId = `dlq-${randomUUID().slice(0, 6)}`;
    await insert(tenantId, "failed", 5_000, "now() - i * interval '1 millisecond'");
    await insert(tenantId, "completed", 5_000);
    await db.sql.query("ANALYZE task_instances");
    const explained = await explainAnalyze(
      db.sql,
      `SELECT id FROM task_instances WHERE tenant_id = $1 AND state = 'failed' ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [tenantId, 100, 0],
    );
    const [scan] = scansOf(explained, "task_instances");
    expect(scan?.["Index Name"]).toBe("task_instances_dead_letters_idx");
    expect(scan?.["Actual Rows"]).toBeLessThanOrEqual(100);
  });
});
