// The instance pages' SQL against a real PostgreSQL: keyset paging returns every row exactly once
// in order (also while new rows arrive), filters combine, every statement stays in its tenant,
// the list's plans use indexes on a table big enough for a sequential scan to be tempting, and
// the detail read (outputs, signals, worker tasks and attempts) is tenant-scoped.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence } from "../../test/factories.ts";
import {
  getInstanceDetail, instancesPageStatement, listInstancesPage, type InstanceKey, type InstancePageQuery,
} from "./instance-pages.ts";
import type { InstanceState } from "./instances.ts";
import { enqueueSignalIfActive } from "./signals.ts";
import { completeWorkerTask, pollWorkerTasks } from "./worker-tasks.ts";
import { asTenantId } from "./index.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const BASE = Date.parse("2026-06-01T00:00:00.000Z");

/**
 * `count` instances of one tenant: row i is created at BASE + floor(i / sameMs) ms, so groups of
 * `sameMs` rows share a created_at and only the id orders them. States and sequences cycle.
 */
async function insertRows(
  tenantId: string,
  count: number,
  options: { sameMs?: number; states?: readonly InstanceState[]; sequences?: readonly string[]; stepMs?: number } = {},
) {
  await db.sql.query(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'default', ($4::uuid[])[1 + i % cardinality($4::uuid[])], ($5::text[])[1 + i % cardinality($5::text[])],
            CASE WHEN ($5::text[])[1 + i % cardinality($5::text[])] = 'scheduled' THEN now() END,
            to_timestamp($2 / 1000.0) + (i / $6) * $7 * interval '1 millisecond', now()
       FROM generate_series(0, $3 - 1) AS i`,
    [tenantId, BASE, count, options.sequences ?? [randomUUID()], options.states ?? ["completed"], options.sameMs ?? 1, options.stepMs ?? 1],
  );
}

/** The tenant's ids in list order, by a plain ORDER BY: what paging must reproduce. */
async function expectedIds(tenantId: string, where = "true", values: unknown[] = []) {
  const { rows } = await db.sql.query<{ id: string }>(
    `SELECT id FROM task_instances WHERE tenant_id = $1 AND ${where} ORDER BY created_at DESC, id DESC`,
    [tenantId, ...values],
  );
  return rows.map((row) => row.id);
}

/** Every page of the query, in order. */
async function pageThrough(tenantId: string, query: Omit<InstancePageQuery, "after">, between?: () => Promise<void>) {
  const ids: string[] = [];
  let after: InstanceKey | undefined;
  for (let pages = 0; ; pages++) {
    expect(pages).toBeLessThan(10_000);
    const page = await listInstancesPage(db.sql, asTenantId(tenantId), { ...query, after });
    ids.push(...page.items.map((item) => item.id));
    if (!page.next) return ids;
    expect(page.items.length).toBe(Math.min(query.limit, 200));
    after = page.next;
    await between?.();
  }
}

describe("keyset paging", () => {
  it("returns each of 1,000 instances exactly once, newest first, ties broken by id", async () => {
    await insertRows("paging", 1_000, { sameMs: 7 });
    await insertRows("paging-neighbour", 300, { sameMs: 3 });
    const expected = await expectedIds("paging");
    expect(expected).toHaveLength(1_000);

    const ids = await pageThrough("paging", { limit: 37 });
    expect(new Set(ids).size).toBe(1_000);
    expect(ids).toEqual(expected);
  });

  it("is not shifted by instances created while paging", async () => {
    await insertRows("paging-live", 250, { sameMs: 2 });
    const expected = await expectedIds("paging-live");
    // Newer rows (created now, after every existing one) arrive between page reads.
    const ids = await pageThrough("paging-live", { limit: 40 }, () =>
      db.sql.query(
        `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, created_at)
         VALUES (gen_random_uuid(), 'paging-live', 'default', gen_random_uuid(), 'completed', now())`,
      ).then(() => {}),
    );
    expect(ids).toEqual(expected);
  });

  it("serves the largest page size and clamps beyond it", async () => {
    const first = await listInstancesPage(db.sql, asTenantId("paging"), { limit: 1_000 });
    expect(first.items).toHaveLength(200);
    expect(first.next).toEqual({ createdAt: first.items[199]!.createdAt, id: first.items[199]!.id });
    const empty = await listInstancesPage(db.sql, asTenantId("no-such-tenant"), { limit: 10 });
    expect(empty).toEqual({ items: [], next: null });
  });
});

describe("filters", () => {
  const seqA = randomUUID();
  const seqB = randomUUID();
  const states: InstanceState[] = ["completed", "failed", "running", "cancelled", "waiting", "completed", "paused"];

  beforeAll(async () => {
    // 10 minutes apart (stepMs), so time ranges cut through the list.
    await insertRows("filters", 420, { states, sequences: [seqA, seqB, seqA], stepMs: 60_000 });
    // Another tenant with the same sequence ids and states: never part of any answer.
    await insertRows("filters-other", 420, { states, sequences: [seqA, seqB], stepMs: 60_000 });
    await db.sql.query(
      `INSERT INTO sequences (id, tenant_id, namespace, name, version, definition, created_at)
       VALUES ($1, 'filters', 'default', 'billing', 3, '{}', now()), ($1, 'filters-other', 'default', 'theirs', 9, '{}', now())`,
      [seqA],
    );
  });

  const at = (minutes: number) => new Date(BASE + minutes * 60_000);

  it.each<[string, Omit<InstancePageQuery, "limit" | "after">, string, unknown[]]>([
    ["one state", { states: ["failed"] }, "state = 'failed'", []],
    ["several states", { states: ["failed", "cancelled", "paused"] }, "state IN ('failed', 'cancelled', 'paused')", []],
    ["a sequence", { sequenceId: seqB }, "sequence_id = $2", [seqB]],
    ["a time range", { createdAfter: at(100), createdBefore: at(200) }, "created_at >= $2 AND created_at < $3", [at(100), at(200)]],
    [
      "all of them",
      { states: ["completed", "running"], sequenceId: seqA, createdAfter: at(30), createdBefore: at(400) },
      "state IN ('completed', 'running') AND sequence_id = $2 AND created_at >= $3 AND created_at < $4",
      [seqA, at(30), at(400)],
    ],
    ["nothing matches", { states: ["scheduled"] }, "false", []],
  ])("%s: pages through exactly the matching rows, in order", async (_name, filter, where, values) => {
    const expected = await expectedIds("filters", where, values);
    if (where !== "false") expect(expected.length).toBeGreaterThan(5);
    expect(await pageThrough("filters", { ...filter, limit: 4 })).toEqual(expected);
    expect(await pageThrough("filters", { ...filter, limit: 200 })).toEqual(expected);
  });

  it("names the tenant's own sequence, and nothing for a sequence it does not have", async () => {
    const page = await listInstancesPage(db.sql, asTenantId("filters"), { limit: 3 });
    // Newest first: rows 419, 418, 417 use sequences [seqA, seqB, seqA][i % 3].
    expect(page.items.map((i) => [i.sequenceId, i.sequenceName, i.sequenceVersion])).toEqual([
      [seqA, "billing", 3],
      [seqB, null, null],
      [seqA, "billing", 3],
    ]);
    expect(page.items[0]).toMatchObject({ namespace: "default", state: states[419 % 7], createdAt: at(419) });
  });

  it("a duplicated state counts once", async () => {
    const ids = await pageThrough("filters", { states: ["failed", "failed"], limit: 7 });
    expect(ids).toEqual(await expectedIds("filters", "state = 'failed'"));
  });
});

describe("plans", () => {
  beforeAll(async () => {
    // ~20,000 rows over several tenants: one large, a few small, so a whole-table read is what
    // the planner would pick without the indexes.
    await insertRows("plan-big", 12_000, { states: ["completed", "completed", "completed", "failed", "running"], sequences: [randomUUID(), randomUUID(), randomUUID()] });
    for (const tenant of ["plan-1", "plan-2", "plan-3", "plan-4"]) await insertRows(tenant, 2_000, { states: ["completed", "waiting"] });
    await db.sql.query("ANALYZE task_instances");
  });

  const plan = async (query: InstancePageQuery) => {
    const { text, values } = instancesPageStatement(asTenantId("plan-big"), query);
    const { rows } = await db.sql.query<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, values);
    return rows.map((row) => row["QUERY PLAN"]).join("\n");
  };

  it("the table is large enough that an unindexed filter is a sequential scan", async () => {
    const { rows } = await db.sql.query<{ "QUERY PLAN": string }>(
      "EXPLAIN SELECT id FROM task_instances WHERE tenant_id = 'plan-big' AND timezone = 'UTC' ORDER BY updated_at LIMIT 51",
    );
    expect(rows.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(/Seq Scan on task_instances/);
  });

  it.each<[string, Omit<InstancePageQuery, "limit">]>([
    ["no filter", {}],
    ["one state", { states: ["failed"] }],
    ["several states", { states: ["failed", "running", "waiting"] }],
    ["a sequence", { sequenceId: randomUUID() }],
    ["a time range", { createdAfter: new Date(BASE + 1_000), createdBefore: new Date(BASE + 2_000) }],
    ["a later page", { after: { createdAt: new Date(BASE + 6_000), id: randomUUID() } }],
    ["states, sequence, time and a later page", {
      states: ["completed", "failed"], sequenceId: randomUUID(), createdAfter: new Date(BASE), after: { createdAt: new Date(BASE + 9_000), id: randomUUID() },
    }],
  ])("%s: index scans only", async (_name, filter) => {
    const text = await plan({ ...filter, limit: 50 });
    expect(text).not.toMatch(/Seq Scan on task_instances/);
    expect(text).toMatch(/Index (Only )?Scan (Backward )?using task_instances_\w+ on task_instances/);
    // The keyset bound is an index condition, not a filter applied to rows already read.
    if (filter.after) expect(text).toMatch(/Index Cond: .*ROW\(created_at, id\) </);
  });
});

describe("detail", () => {
  const tenant = "detail";
  let instanceId: string;
  let sequenceId: string;

  beforeAll(async () => {
    sequenceId = await insertSequence(db, tenant, [{ type: "step", id: "ext", handler: "worker-x" }], "onboarding");
    const { rows } = await db.sql.query<{ id: string }>(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, cursor)
       VALUES (gen_random_uuid(), $1, 'default', $2, 'waiting', '{"data": {"k": 1}}', '{"v": 2, "nodes": {}}') RETURNING id`,
      [tenant, sequenceId],
    );
    instanceId = rows[0]!.id;
    // Outputs: b's marker row is hidden once b has a real one; c's marker stays (no real row yet).
    await db.sql.query(
      `INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output, output_ref, attempt, created_at) VALUES
         (gen_random_uuid(), $1, $2, 'a', '{"n": 1}', NULL, 0, now() - interval '5 seconds'),
         (gen_random_uuid(), $1, $2, 'b', '{}', '__in_progress__', 0, now() - interval '4 seconds'),
         (gen_random_uuid(), $1, $2, 'b', '{"n": 2}', NULL, 1, now() - interval '3 seconds'),
         (gen_random_uuid(), $1, $2, 'c', '{}', '__in_progress__', 0, now() - interval '2 seconds')`,
      [tenant, instanceId],
    );
    await enqueueSignalIfActive(db.sql, asTenantId(tenant), instanceId, { type: "update_context", payload: { data: { k: 2 } } });
    await enqueueSignalIfActive(db.sql, asTenantId(tenant), instanceId, { type: { custom: "poke" }, payload: [1] });
    await db.sql.query(
      `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name) VALUES (gen_random_uuid(), $1, $2, 'ext', 'worker-x')`,
      [tenant, instanceId],
    );
    const [task] = await pollWorkerTasks(db.sql, asTenantId(tenant), { handlerName: "worker-x", queueName: null, workerId: "w1", limit: 1 });
    expect(await completeWorkerTask(db.sql, asTenantId(tenant), task!.id, { workerId: "w1", claimEpoch: task!.claimEpoch }, { ok: true })).toBe("ok");
  });

  it("reads the instance with its sequence, outputs oldest first, signals newest first and tasks with attempts", async () => {
    const detail = (await getInstanceDetail(db.sql, asTenantId(tenant), instanceId))!;
    expect(detail.instance).toMatchObject({
      id: instanceId, state: "scheduled", context: { data: { k: 1 } }, cursor: { v: 2, nodes: {} },
      sequence: { id: sequenceId, name: "onboarding", version: 1, namespace: "default" },
    });
    expect(detail.outputs.map((o) => [o.blockId, o.outputRef])).toEqual([["a", null], ["b", null], ["c", "__in_progress__"]]);
    expect(detail.outputsTruncated).toBe(false);
    expect(detail.signals.map((s) => [s.type, s.payload, s.delivered])).toEqual([
      [{ custom: "poke" }, [1], false],
      ["update_context", { data: { k: 2 } }, false],
    ]);
    expect(detail.workerTasks).toHaveLength(1);
    expect(detail.workerTasks[0]).toMatchObject({ blockId: "ext", handlerName: "worker-x", state: "completed", workerId: "w1" });
    expect(detail.workerTasks[0]!.attempts.map((a) => [a.event, a.workerId, a.claimEpoch])).toEqual([["claimed", "w1", 1], ["completed", "w1", 1]]);
  });

  it("keeps the newest outputs when there are more than the limit", async () => {
    const detail = (await getInstanceDetail(db.sql, asTenantId(tenant), instanceId, { outputs: 2, signals: 1, workerTasks: 0 }))!;
    expect(detail.outputs.map((o) => o.blockId)).toEqual(["b", "c"]);
    expect(detail.outputsTruncated).toBe(true);
    expect(detail.signals).toHaveLength(1);
  });

  it("is null for a missing instance and for another tenant's", async () => {
    expect(await getInstanceDetail(db.sql, asTenantId(tenant), randomUUID())).toBeNull();
    expect(await getInstanceDetail(db.sql, asTenantId("someone-else"), instanceId)).toBeNull();
  });
});
