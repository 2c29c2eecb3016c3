// The approvals inbox's read against a real PostgreSQL: a keyset page deep in a tenant's waiting
// instances is read off the partial waiting index from its bound, not by sorting or skipping the
// rows before it, and ties of updated_at are broken by id without a row lost or repeated.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainAnalyze, scansOf } from "../../test/explain.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { asTenantId } from "./ids.ts";
import { listWaitingTreeSources, waitingTreeSourcesStatement, type WaitingKey } from "./waiting-sources.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const insert = (tenantId: string, state: string, count: number, updatedAt: string) =>
  db.sql.query(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, updated_at)
     SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), $2, ${updatedAt} FROM generate_series(1, $3) AS i`,
    [tenantId, state, count],
  );

describe("listWaitingTreeSources", () => {
  it("pages by key through instances that share an updated_at, each once", async () => {
    const tenantId = asTenantId(`wait-${randomUUID().slice(0, 6)}`);
    await insert(tenantId, "waiting", 7, "'2026-01-01T00:00:00Z'::timestamptz");
    await insert(tenantId, "waiting", 5, "now() - i * interval '1 second'");
    await insert(tenantId, "running", 5, "now()");
    const all = await listWaitingTreeSources(db.sql, tenantId, { namespace: null, offset: 0, limit: 100 });
    expect(all).toHaveLength(12);
    const seen: string[] = [];
    let after: WaitingKey | null = null;
    for (;;) {
      const page = await listWaitingTreeSources(db.sql, tenantId, { namespace: null, after, offset: 0, limit: 5 });
      seen.push(...page.map((source) => source.instance.id));
      if (page.length < 5) break;
      const last = page.at(-1)!.instance;
      after = { updatedAt: last.updatedAt, id: last.id };
    }
    expect(seen).toEqual(all.map((source) => source.instance.id));
  });

  it("reads a deep keyset page off the waiting index, from its bound", async () => {
    const tenantId = asTenantId(`wait-${randomUUID().slice(0, 6)}`);
    await insert(tenantId, "waiting", 5_000, "now() - i * interval '1 millisecond'");
    await insert(tenantId, "completed", 5_000, "now()");
    await db.sql.query("ANALYZE task_instances");
    const [deep] = (await db.sql.query<{ updated_at: Date; id: string }>(
      "SELECT updated_at, id FROM task_instances WHERE tenant_id = $1 AND state = 'waiting' ORDER BY updated_at DESC, id DESC OFFSET 4000 LIMIT 1", [tenantId],
    )).rows;
    const { text, values } = waitingTreeSourcesStatement(tenantId, { namespace: null, after: { updatedAt: deep!.updated_at, id: deep!.id }, offset: 0, limit: 100 });
    const [scan] = scansOf(await explainAnalyze(db.sql, text, values), "task_instances");
    expect(scan?.["Index Name"]).toBe("task_instances_waiting_idx");
    expect(scan?.["Actual Rows"]).toBeLessThanOrEqual(100);
  });
});
