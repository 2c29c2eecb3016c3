// The instance list's search against a real PostgreSQL: each kind (whole id, a short id's start,
// a context field) finds exactly the tenant's matching rows, running ones included, through the
// tenant's routed store; another tenant's rows are never found (a foreign whole id answers like a
// random one); keyset pages through the results return each match once, in order; and on 200,000
// instances of several tenants each search reads its indexes, never the whole table, and reads
// none of another tenant's entries.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainAnalyze, scansOf, type PlanNode } from "../../test/explain.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import type { InstanceSearch } from "../instance-search.ts";
import { shortId } from "../short-id.ts";
import { instancesPageStatement, listInstancesPage, type InstanceKey, type InstancePageQuery } from "./instance-pages.ts";
import { asTenantId, type TenantStore } from "./index.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const BASE = Date.parse("2026-06-01T00:00:00.000Z");

interface Row {
  id?: string;
  state?: string;
  data?: unknown;
  /** context.data as JSON text, for what JavaScript cannot write (3.0) */
  dataJson?: string;
  /** ms after BASE */
  at?: number;
}

/** Instances of `tenantId`, each with its own id, state, context.data and created_at. */
async function insert(tenantId: string, rows: Row[]): Promise<string[]> {
  const ids = rows.map((row) => row.id ?? randomUUID());
  await db.sql.query(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, next_fire_at, created_at, updated_at)
     SELECT r.id, $1, 'default', gen_random_uuid(), r.state, jsonb_build_object('data', r.data, 'config', NULL),
            CASE WHEN r.state = 'scheduled' THEN now() END, to_timestamp($2 / 1000.0) + r.at * interval '1 millisecond', now()
       FROM unnest($3::uuid[], $4::text[], $5::jsonb[], $6::int[]) AS r(id, state, data, at)`,
    [
      tenantId, BASE, ids, rows.map((r) => r.state ?? "completed"), rows.map((r) => r.dataJson ?? JSON.stringify(r.data ?? {})),
      rows.map((r, i) => r.at ?? i),
    ],
  );
  return ids;
}

/** The tenant's ids matching `where`, newest first, by a plain ORDER BY: what a search must return. */
async function expectedIds(tenantId: string, where: string, values: unknown[] = []) {
  const { rows } = await db.sql.query<{ id: string }>(
    `SELECT id FROM task_instances WHERE tenant_id = $1 AND (${where}) ORDER BY created_at DESC, id DESC`,
    [tenantId, ...values],
  );
  return rows.map((row) => row.id);
}

/** Every page of the search, in order, through the tenant's store. */
async function pageThrough(store: TenantStore, query: Omit<InstancePageQuery, "after">) {
  const ids: string[] = [];
  let after: InstanceKey | undefined;
  for (let pages = 0; ; pages++) {
    expect(pages).toBeLessThan(1_000);
    const page = await store.listInstancesPage({ ...query, after });
    ids.push(...page.items.map((item) => item.id));
    if (!page.next) return ids;
    expect(page.items).toHaveLength(query.limit);
    after = page.next;
  }
}

/** Rows the scans looked at, over all their loops: those they returned and those their filters dropped. */
const rowsExamined = (scans: PlanNode[]) =>
  scans.reduce((sum, scan) => {
    const node = scan as PlanNode & { "Rows Removed by Filter"?: number; "Rows Removed by Index Recheck"?: number };
    const rows = (node["Actual Rows"] ?? 0) + (node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0);
    return sum + rows * (node["Actual Loops"] ?? 1);
  }, 0);

const context = (path: string, value: string | number | boolean): InstanceSearch => ({ kind: "context", path, value });

describe("each kind of search, in the tenant's store", () => {
  let acme: TenantStore;
  let other: TenantStore;
  let acmeIds: string[];
  let otherIds: string[];
  /** An acme id and another tenant's id with the same short id (the last group). */
  let twin: { acme: string; other: string };

  beforeAll(async () => {
    acme = await db.storage.tenant((await makeTenant(db)).id);
    other = await db.storage.tenant((await makeTenant(db)).id);
    twin = { acme: randomUUID(), other: "" };
    twin.other = `${randomUUID().slice(0, 24)}${shortId(twin.acme)}`;
    const rows = (tag: string): Row[] => [
      { id: tag === "acme" ? twin.acme : twin.other, data: { order: "A-102", qty: 3, paid: true, customer: { id: 7, tier: "gold" } } },
      { state: "failed", dataJson: '{"order": "A-102", "qty": 3.0, "paid": false}' },
      { state: "running", data: { order: "A-102", qty: 4, paid: true, customer: { id: 7 } } },
      { state: "waiting", data: { order: "A-103", tags: ["A-102"], qty: "3" } },
      { state: "scheduled", data: { order: "a-102", customer: { id: "7" } } },
      { state: "paused", data: null },
      { state: "cancelled", data: { nested: { order: "A-102" } } },
    ];
    acmeIds = await insert(acme.tenantId, rows("acme"));
    otherIds = await insert(other.tenantId, rows("other"));
    await db.sql.query("ANALYZE task_instances");
  });

  const found = async (store: TenantStore, search: InstanceSearch, states?: InstancePageQuery["states"]) =>
    (await store.listInstancesPage({ search, states, limit: 50 })).items.map((item) => item.id);
  const newestFirst = (ids: string[], ...indexes: number[]) => indexes.sort((a, b) => b - a).map((i) => ids[i]!);

  it("a whole id finds that instance, in any state", async () => {
    expect(await found(acme, { kind: "id", id: acmeIds[0]! })).toEqual([acmeIds[0]]);
    expect(await found(acme, { kind: "id", id: acmeIds[2]! })).toEqual([acmeIds[2]]); // running
    expect(await found(acme, { kind: "id", id: acmeIds[1]! }, ["completed"])).toEqual([]); // filters still apply
  });

  it("another tenant's whole id reads exactly like a random one", async () => {
    const foreign = await acme.listInstancesPage({ search: { kind: "id", id: otherIds[1]! }, limit: 50 });
    const random = await acme.listInstancesPage({ search: { kind: "id", id: randomUUID() }, limit: 50 });
    expect(foreign).toEqual({ items: [], next: null });
    expect(random).toEqual(foreign);
    // and its owner finds it
    expect(await found(other, { kind: "id", id: otherIds[1]! })).toEqual([otherIds[1]]);
  });

  it("the start of a short id finds the tenant's instances whose short id starts so, from 4 digits to all 12", async () => {
    for (const index of [0, 2, 5]) {
      const short = shortId(acmeIds[index]!);
      for (const length of [4, 7, 12]) {
        const prefix = short.slice(0, length);
        const expected = await expectedIds(acme.tenantId, "right(id::text, 12) LIKE $2", [`${prefix}%`]);
        expect(expected).toContain(acmeIds[index]);
        expect(await found(acme, { kind: "shortId", prefix })).toEqual(expected);
        expect(await found(acme, { kind: "shortId", prefix: prefix.toUpperCase() })).toEqual(expected);
      }
    }
  });

  it("a short id another tenant's instance shares finds only the tenant's own", async () => {
    expect(shortId(twin.other)).toBe(shortId(twin.acme));
    expect(await found(acme, { kind: "shortId", prefix: shortId(twin.acme) })).toEqual([twin.acme]);
    expect(await found(other, { kind: "shortId", prefix: shortId(twin.acme) })).toEqual([twin.other]);
  });

  it.each<[string, InstanceSearch, number[]]>([
    ["a string", context("data.order", "A-102"), [0, 1, 2]],
    ["a string, case and all", context("data.order", "a-102"), [4]],
    ["a number (3 and 3.0 alike, not the string 3)", context("data.qty", 3), [0, 1]],
    ["the string, not the number", context("data.qty", "3"), [3]],
    ["a boolean", context("data.paid", true), [0, 2]],
    ["false", context("data.paid", false), [1]],
    ["a nested path", context("data.customer.id", 7), [0, 2]],
    ["a nested path, string", context("data.customer.id", "7"), [4]],
    ["a path deeper than the value", context("data.nested.order", "A-102"), [6]],
    ["nothing: not inside an array", context("data.tags", "A-102"), []],
    ["nothing: no such field", context("data.missing", "A-102"), []],
  ])("a context field, %s", async (_name, search, indexes) => {
    expect(await found(acme, search)).toEqual(newestFirst(acmeIds, ...indexes));
    // The other tenant has the same values: its own rows, never acme's.
    expect(await found(other, search)).toEqual(newestFirst(otherIds, ...indexes));
  });

  it("combines with the state filter, running rows included or not", async () => {
    const order = context("data.order", "A-102");
    expect(await found(acme, order, ["running"])).toEqual([acmeIds[2]]);
    expect(await found(acme, order, ["failed", "completed"])).toEqual(newestFirst(acmeIds, 0, 1));
    expect(await found(acme, order, ["failed", "running"])).toEqual(newestFirst(acmeIds, 1, 2));
    expect(await found(acme, { kind: "shortId", prefix: shortId(acmeIds[2]!) }, ["completed"])).toEqual([]);
  });
});

describe("keyset pages of search results", () => {
  it("returns each of 400 matches exactly once, newest first, ties broken by id, among rows that do not match", async () => {
    const store = await db.storage.tenant((await makeTenant(db)).id);
    const states = ["completed", "failed", "waiting", "completed", "running", "paused", "scheduled"];
    // Groups of 5 share a created_at; every other row matches, a few of them running.
    await insert(store.tenantId, Array.from({ length: 800 }, (_, i) => ({
      state: states[i % states.length]!, at: Math.floor(i / 5), data: { batch: i % 2 === 0 ? "b-7" : "b-8", i },
    })));
    await db.sql.query("ANALYZE task_instances");
    const expected = await expectedIds(store.tenantId, `context -> 'data' ->> 'batch' = 'b-7'`);
    expect(expected).toHaveLength(400);
    for (const limit of [7, 50, 200]) expect(await pageThrough(store, { search: context("data.batch", "b-7"), limit })).toEqual(expected);

    const prefix = shortId(expected[123]!).slice(0, 4);
    const byPrefix = await expectedIds(store.tenantId, "right(id::text, 12) LIKE $2", [`${prefix}%`]);
    expect(await pageThrough(store, { search: { kind: "shortId", prefix }, limit: 1 })).toEqual(byPrefix);
  });
});

describe("plans on 200,000 instances of several tenants", () => {
  const big = asTenantId("plan-big");
  const small = asTenantId("plan-small");
  let smallIds: string[];

  beforeAll(async () => {
    // One large tenant (120,000) and four of 20,000. Every tenant's rows hold env = "prod"; each
    // order number once per tenant; ~30 running rows per tenant, as the in-flight limits allow.
    const tenants: [string, number][] = [[big, 120_000], [small, 20_000], ["plan-2", 20_000], ["plan-3", 20_000], ["plan-4", 20_000]];
    for (const [tenant, count] of tenants) {
      await db.sql.query(
        `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, next_fire_at, created_at, updated_at)
         SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), s.state,
                jsonb_build_object('data', jsonb_build_object('order', 'A-' || i, 'env', 'prod', 'paid', i % 2 = 0, 'customer', jsonb_build_object('id', i % 1000))),
                CASE WHEN s.state = 'scheduled' THEN now() END, to_timestamp($2 / 1000.0) + i * interval '1 millisecond', now()
           FROM generate_series(1, $3::int) AS i,
                LATERAL (SELECT CASE WHEN i % 700 = 0 THEN 'running'
                                     ELSE (ARRAY['completed', 'completed', 'failed', 'waiting', 'scheduled', 'cancelled'])[1 + i % 6] END AS state) s`,
        [tenant, BASE, count],
      );
    }
    await db.sql.query("ANALYZE task_instances");
    smallIds = (await db.sql.query<{ id: string }>("SELECT id FROM task_instances WHERE tenant_id = $1 ORDER BY random() LIMIT 3", [small])).rows.map((r) => r.id);
  });

  const planOf = async (tenantId: typeof big, query: InstancePageQuery) => {
    const { text, values } = instancesPageStatement(tenantId, query);
    return explainAnalyze(db.sql, text, values);
  };
  const scanNames = (nodes: Awaited<ReturnType<typeof planOf>>["nodes"]) =>
    nodes.filter((n) => n["Relation Name"] === "task_instances" || n["Index Name"]?.startsWith("task_instances")).map((n) => `${n["Node Type"]}:${n["Index Name"] ?? ""}`);

  it("the table is large enough that an unindexed search would be a sequential scan", async () => {
    const { rows } = await db.sql.query<{ "QUERY PLAN": string }>(
      `EXPLAIN SELECT id FROM task_instances WHERE tenant_id = $1 AND context -> 'data' ->> 'order' = 'A-102' ORDER BY updated_at LIMIT 51`,
      [big],
    );
    expect(rows.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(/Seq Scan on task_instances/);
  });

  it.each<[string, () => InstanceSearch, RegExp[], number]>([
    ["a whole id", () => ({ kind: "id", id: smallIds[0]! }), [/^Index Scan:task_instances_pkey$/], 1],
    ["a short id's first 4 digits", () => ({ kind: "shortId", prefix: shortId(smallIds[1]!).slice(0, 4) }), [/^(Bitmap )?Index Scan:task_instances_search_short_id_idx$/], 60],
    ["a whole short id", () => ({ kind: "shortId", prefix: shortId(smallIds[2]!) }), [/^(Bitmap )?Index Scan:task_instances_search_short_id_idx$/], 60],
    ["a rare context value", () => context("data.order", "A-1234"), [/^Bitmap Index Scan:task_instances_search_data_idx$/], 60],
    ["a nested context value", () => context("data.customer.id", 17), [/^Bitmap Index Scan:task_instances_search_data_idx$/], 100],
  ])("%s: reads its index and the running rows only", async (_name, search, indexes, maxRows) => {
    const plan = await planOf(small, { search: search(), limit: 50 });
    const scans = scansOf(plan, "task_instances");
    const names = scanNames(plan.nodes);
    expect(names.filter((n) => n.startsWith("Seq Scan"))).toEqual([]);
    for (const index of indexes) expect(names, JSON.stringify(names)).toContainEqual(expect.stringMatching(index));
    // The running rows (a whole id aside) come from the state index: ~30 of them.
    if (search().kind !== "id") expect(names, JSON.stringify(names)).toContainEqual(expect.stringMatching(/^(Bitmap )?Index Scan:task_instances_tenant_id_state_\w+_idx$/));
    expect(rowsExamined(scans)).toBeLessThanOrEqual(maxRows);
  });

  it("a value nearly every row holds walks the tenant's newest rows and stops at the page", async () => {
    const plan = await planOf(big, { search: context("data.env", "prod"), limit: 50 });
    const names = scanNames(plan.nodes);
    expect(names.filter((n) => n.startsWith("Seq Scan"))).toEqual([]);
    expect(names).toContain("Index Scan:task_instances_tenant_id_created_at_id_idx");
    expect(rowsExamined(scansOf(plan, "task_instances"))).toBeLessThan(500);
  });

  it("a later page keeps to the index, the keyset bound applied to what it found", async () => {
    const first = await listInstancesPage(db.sql, small, { search: context("data.customer.id", 17), limit: 5 });
    expect(first.items).toHaveLength(5);
    const plan = await planOf(small, { search: context("data.customer.id", 17), limit: 5, after: first.next! });
    expect(scanNames(plan.nodes).filter((n) => n.startsWith("Seq Scan"))).toEqual([]);
    expect(rowsExamined(scansOf(plan, "task_instances"))).toBeLessThanOrEqual(100);
  });

  it("a value 100,000 of another tenant's rows hold costs this tenant none of their entries", async () => {
    // 'A-5' is one row per tenant; env = prod is every row; only the tenant's own entries are read.
    const plan = await planOf(small, { search: context("data.order", "A-5"), limit: 50 });
    const gin = plan.nodes.find((n) => n["Index Name"] === "task_instances_search_data_idx");
    expect(gin?.["Actual Rows"]).toBe(1);
    const page = await listInstancesPage(db.sql, small, { search: context("data.order", "A-5"), limit: 50 });
    expect(page.items).toHaveLength(1);
  });
});
