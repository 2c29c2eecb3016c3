// The Failed view's groups at scale: equal to grouping the failed rows themselves, counted from
// the failure index alone (it can be an index-only scan), reading a few rows per group for its sample.
import { afterAll, beforeAll, expect, it } from "vitest";
import { explainAnalyze, scansOf, type Explained, type PlanNode } from "../../test/explain.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import { LIST_FAILURE_GROUPS, listFailureGroups } from "./failure-groups.ts";
import { asTenantId } from "./ids.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

it("counts 6,000 scattered failures from the index, a few rows read per group, as grouping the rows gives", async () => {
  const tenant = (await makeTenant(db)).id;
  const other = (await makeTenant(db)).id;
  // Three fingerprints and failures without one, scattered among many more rows of another
  // tenant (every 11th row is the tenant's), as a busy table holds them.
  await db.sql.query(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, completed_at, updated_at, error_fingerprint, error_message, failed_block)
     SELECT gen_random_uuid(), CASE WHEN mine THEN $1 ELSE $2 END, 'default', gen_random_uuid(),
            CASE WHEN mine OR i % 10 = 0 THEN 'failed' ELSE 'completed' END, now(), now() - i * interval '1 second',
            CASE WHEN NOT mine THEN 'fp-0' WHEN i % 4 = 3 THEN NULL ELSE 'fp-' || (i % 4) END, 'boom ' || i, 'step-' || (i % 4)
       FROM generate_series(1, 66000) i, LATERAL (SELECT i % 11 = 0 AS mine) m`,
    [tenant, other],
  );
  await db.sql.query("VACUUM ANALYZE task_instances");

  const groups = await listFailureGroups(db.sql, asTenantId(tenant), 50);
  const { rows: raw } = await db.sql.query(
    `SELECT error_fingerprint, count(*)::int AS count,
            (array_agg(id ORDER BY updated_at DESC, id DESC))[1] AS sample_id, (array_agg(error_message ORDER BY updated_at DESC, id DESC))[1] AS sample_message
       FROM task_instances WHERE tenant_id = $1 AND state = 'failed' GROUP BY error_fingerprint ORDER BY count(*) DESC, max(updated_at) DESC`,
    [tenant],
  );
  expect(groups.map((g) => ({ error_fingerprint: g.fingerprint, count: g.count, sample_id: g.sampleInstanceId, sample_message: g.sampleMessage }))).toEqual(raw);
  expect(groups.map((g) => g.fingerprint).sort()).toEqual(["fp-0", "fp-1", "fp-2", null].sort());

  // Counting needs only what the failure index holds (fingerprint, time), so the table's rows are
  // not read for it: with bitmap and sequential scans off, the planner counts them index-only.
  const client = await db.sql.connect();
  let plan: Explained;
  try {
    await client.query("BEGIN");
    await client.query("SET LOCAL enable_bitmapscan = off");
    await client.query("SET LOCAL enable_seqscan = off");
    const { rows } = await client.query<{ "QUERY PLAN": { Plan: PlanNode; "Execution Time": number }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${LIST_FAILURE_GROUPS}`, [tenant, 50]);
    const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)];
    plan = { nodes: flatten(rows[0]!["QUERY PLAN"][0]!.Plan), executionMs: rows[0]!["QUERY PLAN"][0]!["Execution Time"] };
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
  const scans = scansOf(plan, "task_instances");
  const counted = scans.filter((s) => s["Node Type"] === "Index Only Scan");
  expect(counted).toHaveLength(1);
  expect(counted[0]!["Actual Rows"]).toBeGreaterThan(5000);
  // As planned by default, the samples read a few rows per fingerprint, not the groups' rows
  // (the group without one, failures from before causes were recorded, is sorted whole).
  const samples = scansOf(await explainAnalyze(db.sql, LIST_FAILURE_GROUPS, [tenant, 50]), "task_instances").filter((s) => s["Node Type"] === "Index Scan");
  const unfingerprinted = groups.find((g) => g.fingerprint === null)!.count;
  expect(samples.reduce((sum, s) => sum + (s["Actual Rows"] ?? 0) * (s["Actual Loops"] ?? 1), 0)).toBeLessThanOrEqual(5 * groups.length + unfingerprinted);
});
