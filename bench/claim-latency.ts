// Claim latency: the claim statement (engine/storage/claim.ts, plain and capped, through
// `claimDueInstances` as the scheduler calls it) with 10,000, 100,000 and 1,000,000 due rows
// spread over BENCH_CLAIM_TENANTS (50) tenants, to show how its cost grows with the backlog.
//
// Rows are added with generate_series (the sizes build on each other), then VACUUM ANALYZE. Each
// timed claim runs in a transaction that is rolled back, so every run sees the same table; the
// claims are timed round trip from this process (as the scheduler waits for them), plain and
// capped interleaved. The rolled-back row versions are vacuumed away every VACUUM_EVERY runs,
// outside the timings, so they do not pile up on the rows every claim takes.
import pg from "pg";
import { claimDueInstances } from "../engine/storage/claim.ts";
import { benchCluster, freshBenchDatabase, median, percentile } from "./cluster.ts";
import { postgresVersion, writeResults } from "./results.ts";

const MAX_ROWS = Number(process.env.BENCH_CLAIM_MAX_ROWS ?? 1_000_000);
const SIZES = [10_000, 100_000, 1_000_000].filter((n) => n <= MAX_ROWS);
const TENANTS = Number(process.env.BENCH_CLAIM_TENANTS ?? 50);
const RUNS = Number(process.env.BENCH_CLAIM_RUNS ?? 100);
/** The scheduler's default batch (BULKHEAD_CLAIM_BATCH). */
const LIMIT = Number(process.env.BENCH_CLAIM_LIMIT ?? 256);
const CAP = Number(process.env.BENCH_CLAIM_CAP ?? 8);
const VACUUM_EVERY = 25;
const WARMUP = 10;
const INSERT_CHUNK = 100_000;

/**
 * Rows (from, to] of the backlog: tenant i % TENANTS, priority Normal, each due a millisecond
 * before the previous one (all in the past), so claim order is well defined.
 */
const INSERT = `
  INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, priority, context, next_fire_at, created_at, updated_at)
  SELECT gen_random_uuid(), 'claim-' || lpad((i % $3::int)::text, 3, '0'), 'default', $4::uuid, 'scheduled', 1,
         '{"data": null, "config": null}', now() - interval '1 minute' - i * interval '1 millisecond', now(), now()
    FROM generate_series($1::int + 1, $2::int) AS i`;

interface Timing {
  median: number;
  p95: number;
}

export async function main(): Promise<void> {
  const startedAt = performance.now();
  console.log(`claim-latency: ${SIZES.map((n) => n.toLocaleString("en-US")).join(" / ")} due rows over ${TENANTS} tenants, batch ${LIMIT}, cap ${CAP}, ${RUNS} claims each`);
  if (SIZES.length === 0) throw new Error("BENCH_CLAIM_MAX_ROWS is below the smallest size (10,000)");
  const cluster = await benchCluster();
  const results: { rows: number; plain: Timing; capped: Timing }[] = [];
  let postgres: string | undefined;
  try {
    const url = await freshBenchDatabase(cluster, "bench_claim_latency", true);
    postgres = await postgresVersion(url);
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    try {
      const sequenceId = "00000000-0000-4000-8000-000000000001";
      let inserted = 0;
      for (const size of SIZES) {
        const started = performance.now();
        for (; inserted < size; inserted = Math.min(size, inserted + INSERT_CHUNK)) {
          await sql.query(INSERT, [inserted, Math.min(size, inserted + INSERT_CHUNK), TENANTS, sequenceId]);
        }
        await sql.query("VACUUM ANALYZE task_instances");
        console.log(`  ${size.toLocaleString("en-US")} due rows (filled and vacuumed in ${((performance.now() - started) / 1000).toFixed(1)} s)`);

        const claim = async (maxPerTenant: number) => {
          await sql.query("BEGIN");
          try {
            const at = performance.now();
            const claimed = await claimDueInstances(sql, { now: new Date(), limit: LIMIT, maxPerTenant, leaseOwner: "bench", leaseMs: 30_000 });
            const ms = performance.now() - at;
            if (claimed.length !== LIMIT) throw new Error(`claimed ${claimed.length}, expected ${LIMIT}`);
            return ms;
          } finally {
            await sql.query("ROLLBACK");
          }
        };
        for (let i = 0; i < WARMUP; i++) {
          await claim(0);
          await claim(CAP);
        }
        await sql.query("VACUUM task_instances");
        const plain: number[] = [];
        const capped: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          if (i > 0 && i % VACUUM_EVERY === 0) await sql.query("VACUUM task_instances");
          plain.push(await claim(0));
          capped.push(await claim(CAP));
        }
        if (process.env.BENCH_VERBOSE) await explain(sql, size);
        const row = { rows: size, plain: { median: median(plain), p95: percentile(plain, 95) }, capped: { median: median(capped), p95: percentile(capped, 95) } };
        results.push(row);
        console.log(
          `    plain:  median ${row.plain.median.toFixed(2)} ms, p95 ${row.plain.p95.toFixed(2)} ms\n` +
          `    capped: median ${row.capped.median.toFixed(2)} ms, p95 ${row.capped.p95.toFixed(2)} ms`,
        );
      }
    } finally {
      await sql.end();
    }
  } finally {
    await cluster.stop();
  }

  const base = results[0]!;
  console.log(`growth of the median vs ${base.rows.toLocaleString("en-US")} rows:`);
  for (const r of results) {
    console.log(`  ${r.rows.toLocaleString("en-US").padStart(9)} rows: plain ${(r.plain.median / base.plain.median).toFixed(2)}x, capped ${(r.capped.median / base.capped.median).toFixed(2)}x`);
  }
  const f = (n: number) => n.toFixed(2);
  writeResults({
    bench: "claim-latency",
    summary: `The claim statement, batch ${LIMIT}, plain (cap off) and capped (cap ${CAP} per tenant), with a backlog of due rows over ${TENANTS} tenants; ${RUNS} claims each, rolled back.`,
    tables: [{
      columns: ["due rows", "plain median (ms)", "plain p95 (ms)", "plain growth", "capped median (ms)", "capped p95 (ms)", "capped growth"],
      rows: results.map((r) => [
        r.rows.toLocaleString("en-US"), f(r.plain.median), f(r.plain.p95), `${(r.plain.median / base.plain.median).toFixed(2)}x`,
        f(r.capped.median), f(r.capped.p95), `${(r.capped.median / base.capped.median).toFixed(2)}x`,
      ]),
    }],
    notes: [
      "Round trip of `claimDueInstances` from the benchmark's process (as the scheduler waits for it), each in a transaction rolled back afterwards, so every claim sees the same backlog.",
      `Growth = the median at that size / the median at ${base.rows.toLocaleString("en-US")} rows.`,
    ],
    postgres,
    startedAt,
  });
}

/** BENCH_VERBOSE: each statement's plan and timing at this size (rolled back). */
async function explain(sql: pg.Client, size: number): Promise<void> {
  const { CLAIM_SQL } = await import("../engine/storage/claim.ts");
  for (const [name, text, values] of [
    ["plain", CLAIM_SQL.plainAll, [new Date(), LIMIT, "bench", 30_000, [], null]],
    ["capped", CLAIM_SQL.cappedAll, [new Date(), LIMIT, "bench", 30_000, [], null, CAP, [], [], [], []]],
  ] as const) {
    await sql.query("BEGIN");
    const { rows } = await sql.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${text}`, [...values]);
    await sql.query("ROLLBACK");
    console.log(`  -- ${name} at ${size.toLocaleString("en-US")} rows\n${rows.map((r) => `    ${r["QUERY PLAN"]}`).join("\n")}`);
  }
}
