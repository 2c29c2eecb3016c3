// Instance list: the instances page's list query (`listInstancesPage`, keyset pages, through
// `storage.tenant(id)`) with 1,000,000 instances in the database, 100,000 per tenant over 10
// tenants. Timed: the first page and a deep page (the cursor after ~50,000 rows), each with and
// without a state filter. The peer, same run, same rows: the same page read with OFFSET, which
// walks and discards every row before it.
import { randomUUID } from "node:crypto";
import os from "node:os";
import pg from "pg";
import { loadConfig } from "../engine/config.ts";
import { StorageBackends, Storage, type InstanceState, type TenantStore } from "../engine/storage/index.ts";
import type { InstanceKey, InstancePageQuery } from "../engine/storage/instance-pages.ts";
import { createTenant } from "../server/control/tenants.ts";
import { createPrisma } from "../server/db/prisma.ts";
import { benchCluster, benchPool, freshBenchDatabase, median } from "./cluster.ts";
import { postgresVersion, writeResults } from "./results.ts";

const TENANTS = Number(process.env.BENCH_TENANTS ?? 10);
const PER_TENANT = Number(process.env.BENCH_PER_TENANT ?? 100_000);
const DEPTH = Number(process.env.BENCH_DEPTH ?? 50_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const PAGE = 50;
const FILTER: InstanceState = "completed";

/**
 * One statement per tenant. Of every 10 instances, 7 completed, 1 failed, 1 scheduled, 1 waiting;
 * one a second going back from now, so created_at is distinct and the order is the insert order.
 */
const INSERT = `
  INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, next_fire_at, completed_at, created_at, updated_at)
  SELECT gen_random_uuid(), $1, 'default', $2::uuid, s.state, '{"data": null, "config": null}',
         CASE WHEN s.state = 'scheduled' THEN s.at END,
         CASE WHEN s.state IN ('completed', 'failed') THEN s.at + interval '2 seconds' END,
         s.at, s.at
    FROM (SELECT CASE WHEN i % 10 < 7 THEN 'completed' WHEN i % 10 = 7 THEN 'failed' WHEN i % 10 = 8 THEN 'scheduled' ELSE 'waiting' END AS state,
                 now() - i * interval '1 second' AS at
            FROM generate_series(1, $3::int) AS i) s`;

/** The OFFSET page: the keyset statement's shape (same columns, same join after the limit), OFFSET instead of a cursor. */
const offsetPage = (filtered: boolean) => `
  SELECT p.id, p.namespace, p.sequence_id, s.name AS sequence_name, s.version AS sequence_version, p.state,
         p.priority, p.next_fire_at, p.created_at, p.updated_at
    FROM (SELECT id, tenant_id, namespace, sequence_id, state, priority, next_fire_at, created_at, updated_at
            FROM task_instances
           WHERE tenant_id = $1 ${filtered ? "AND state = $4" : ""}
           ORDER BY created_at DESC, id DESC
          OFFSET $2 LIMIT $3) p
    LEFT JOIN sequences s ON s.tenant_id = p.tenant_id AND s.id = p.sequence_id
   ORDER BY p.created_at DESC, p.id DESC`;

async function timed(runs: number, run: () => Promise<number>): Promise<number> {
  for (let i = 0; i < 3; i++) await run(); // warm: plan cache, buffers
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const rows = await run();
    ms.push(performance.now() - started);
    if (rows !== PAGE) throw new Error(`expected a page of ${PAGE}, got ${rows}`);
  }
  return median(ms);
}

/** The key of the `depth`-th row (1-based) of the list, for a deep page's cursor. */
async function keyAt(sql: pg.Pool, tenantId: string, depth: number, state?: InstanceState): Promise<InstanceKey> {
  const { rows } = await sql.query<{ id: string; created_at: Date }>(
    `SELECT id, created_at FROM task_instances WHERE tenant_id = $1 ${state ? "AND state = $3" : ""}
      ORDER BY created_at DESC, id DESC OFFSET $2 - 1 LIMIT 1`,
    state ? [tenantId, depth, state] : [tenantId, depth],
  );
  if (!rows[0]) throw new Error(`tenant ${tenantId} has fewer than ${depth} rows`);
  return { createdAt: rows[0].created_at, id: rows[0].id };
}

const fmt = (ms: number) => ms.toFixed(2);

export async function main(): Promise<void> {
  const startedAt = performance.now();
  const total = TENANTS * PER_TENANT;
  console.log(`instance-list: ${total.toLocaleString("en")} instances over ${TENANTS} tenants, pages of ${PAGE}, ${RUNS} runs each, ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? "?"}`);
  const cluster = await benchCluster();
  try {
    const url = await freshBenchDatabase(cluster, "bench_instance_list", true);
    const config = loadConfig({ DATABASE_URL: url });
    const storage = new Storage(new StorageBackends(config.backends, { poolSize: 4 }));
    const sql = benchPool(url, 2);
    const prisma = createPrisma(url);
    try {
      const started = performance.now();
      const tenants: string[] = [];
      for (let t = 0; t < TENANTS; t++) {
        const tenant = await createTenant(prisma, { slug: `list-${t}`, backendId: config.BULKHEAD_DEFAULT_BACKEND });
        const store = await storage.tenant(tenant.id);
        const sequenceId = randomUUID();
        const definition = { id: sequenceId, tenant_id: tenant.id, namespace: "default", name: "nightly", version: 1, created_at: new Date().toISOString(), blocks: [{ type: "step", id: "noop", handler: "noop" }] };
        await store.insertSequence({ id: sequenceId, namespace: "default", name: "nightly", version: 1, definition, createdAt: new Date() });
        await sql.query(INSERT, [tenant.id, sequenceId, PER_TENANT]);
        tenants.push(tenant.id);
        console.log(`  inserted ${((t + 1) * PER_TENANT).toLocaleString("en")} / ${total.toLocaleString("en")} instances (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      }
      await sql.query("ANALYZE task_instances");
      await sql.query("ANALYZE sequences");

      // The middle tenant: its rows are neither the first nor the last inserted.
      const tenantId = tenants[Math.floor(TENANTS / 2)]!;
      const store: TenantStore = await storage.tenant(tenantId);
      const page = (query: Omit<InstancePageQuery, "limit">) => async () => (await store.listInstancesPage({ ...query, limit: PAGE })).items.length;
      const offset = (filtered: boolean) => async () =>
        (await sql.query(offsetPage(filtered), filtered ? [tenantId, DEPTH, PAGE, FILTER] : [tenantId, DEPTH, PAGE])).rowCount ?? 0;

      const deepAll = await keyAt(sql, tenantId, DEPTH);
      const deepFiltered = await keyAt(sql, tenantId, DEPTH, FILTER);
      const first = await timed(RUNS, page({}));
      const firstFiltered = await timed(RUNS, page({ states: [FILTER] }));
      const deep = await timed(RUNS, page({ after: deepAll }));
      const deepFilteredMs = await timed(RUNS, page({ states: [FILTER], after: deepFiltered }));
      const peer = await timed(RUNS, offset(false));
      const peerFiltered = await timed(RUNS, offset(true));

      console.log(`keyset, no filter:        first page ${fmt(first)} ms, deep page (after ${DEPTH.toLocaleString("en")} rows) ${fmt(deep)} ms`);
      console.log(`keyset, state=${FILTER}: first page ${fmt(firstFiltered)} ms, deep page (after ${DEPTH.toLocaleString("en")} rows) ${fmt(deepFilteredMs)} ms`);
      console.log(`OFFSET ${DEPTH.toLocaleString("en")} peer:       no filter ${fmt(peer)} ms, state=${FILTER} ${fmt(peerFiltered)} ms`);
      console.log(`deep page ratio (OFFSET / keyset): no filter ${(peer / deep).toFixed(1)}x, state=${FILTER} ${(peerFiltered / deepFilteredMs).toFixed(1)}x`);
      console.log(`instance list: first page median ${fmt(first)} ms, deep page median ${fmt(deep)} ms (offset peer ${fmt(peer)} ms)`);
      const depth = DEPTH.toLocaleString("en-US");
      writeResults({
        bench: "instance-list",
        summary: `The instances page's keyset query (\`listInstancesPage\`), pages of ${PAGE}, with ${total.toLocaleString("en-US")} instances over ${TENANTS} tenants, beside the same page read with OFFSET; median of ${RUNS} runs.`,
        tables: [{
          columns: ["filter", "keyset first page (ms)", `keyset after ${depth} rows (ms)`, `OFFSET ${depth} (ms)`, "OFFSET / keyset, deep"],
          rows: [
            ["none", fmt(first), fmt(deep), fmt(peer), `${(peer / deep).toFixed(1)}x`],
            [`state=${FILTER}`, fmt(firstFiltered), fmt(deepFilteredMs), fmt(peerFiltered), `${(peerFiltered / deepFilteredMs).toFixed(1)}x`],
          ],
        }],
        postgres: await postgresVersion(url),
        startedAt,
      });
    } finally {
      await Promise.all([sql.end(), storage.close(), prisma.$disconnect()]);
    }
  } finally {
    await cluster.stop();
  }
}
