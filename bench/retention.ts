// Retention pruning as a noisy neighbour: a quiet tenant's claims, timed round trip as the
// scheduler waits for them, while the pruner is idle (the peer: the same claims alone) and while
// it deletes a tenant's 100,000 expired instances (each with an output, a signal and an audit
// entry) as fast as it can, one batch after another. Also the pruner's rate.
import pg from "pg";
import { createLogger } from "../engine/logger.ts";
import { RetentionPruner } from "../engine/retention/pruner.ts";
import { claimDueInstances } from "../engine/storage/claim.ts";
import { asTenantId } from "../engine/storage/ids.ts";
import { clearRetentionPending, countExpired, pruneExpired, recordRetention, tenantsWithExpired } from "../engine/storage/retention.ts";
import { benchCluster, freshBenchDatabase, median, percentile } from "./cluster.ts";
import { postgresVersion, writeResults } from "./results.ts";

const OLD_ROWS = Number(process.env.BENCH_RETENTION_ROWS ?? 100_000);
const RUNS = Number(process.env.BENCH_RETENTION_RUNS ?? 300);
const BATCH = 500;

const SEED = `
  WITH made AS (
    INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, completed_at, created_at)
    SELECT gen_random_uuid(), 'noisy', 'default', gen_random_uuid(), 'completed', now() - interval '40 days', now() - interval '41 days'
      FROM generate_series(1, $1::int) RETURNING id
  ), outputs AS (
    INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output) SELECT gen_random_uuid(), 'noisy', id, 'b', '{"v": 1}' FROM made
  ), signals AS (
    INSERT INTO signals (id, tenant_id, instance_id, signal_type) SELECT gen_random_uuid(), 'noisy', id, 'pause' FROM made
  )
  INSERT INTO instance_audit_log (tenant_id, instance_id, event_type) SELECT 'noisy', id, 'state_change' FROM made`;

interface Timing { median: number; p95: number; p99: number }
const timing = (ms: number[]): Timing => ({ median: median(ms), p95: percentile(ms, 95), p99: percentile(ms, 99) });

export async function main(): Promise<void> {
  const startedAt = performance.now();
  console.log(`retention: a quiet tenant's claims alone and while ${OLD_ROWS.toLocaleString("en-US")} expired instances of another are pruned; ${RUNS} claims each`);
  const cluster = await benchCluster();
  let postgres: string | undefined;
  let alone: Timing; let pruning: Timing; let rate: number; let prunedDuring: number;
  try {
    const url = await freshBenchDatabase(cluster, "bench_retention", true);
    postgres = await postgresVersion(url);
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    const claimer = new pg.Client({ connectionString: url });
    await claimer.connect();
    try {
      await pool.query(SEED, [OLD_ROWS]);
      await pool.query(`INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at)
                        SELECT gen_random_uuid(), 'quiet', 'default', gen_random_uuid(), 'scheduled', now() - interval '1 second' FROM generate_series(1, 50)`);
      await pool.query("VACUUM ANALYZE");

      // One claim of the quiet tenant's due work, rolled back so each sees the same rows.
      const claim = async () => {
        await claimer.query("BEGIN");
        try {
          const at = performance.now();
          const claimed = await claimDueInstances(claimer, { now: new Date(), limit: 8, maxPerTenant: 0, leaseOwner: "bench", leaseMs: 30_000, onlyTenants: ["quiet"] });
          if (claimed.length !== 8) throw new Error(`claimed ${claimed.length}, expected 8`);
          return performance.now() - at;
        } finally {
          await claimer.query("ROLLBACK");
        }
      };
      for (let i = 0; i < 20; i++) await claim();
      const idle: number[] = [];
      for (let i = 0; i < RUNS; i++) idle.push(await claim());
      alone = timing(idle);

      const pruner = new RetentionPruner({
        store: {
          id: "primary",
          tenantsWithExpired: (r) => tenantsWithExpired(pool, r),
          pruneExpired: (t, d, l) => pruneExpired(pool, asTenantId(t), d, l),
          countExpired: (t, d, c) => countExpired(pool, asTenantId(t), d, c),
          recordRetention: (t, c) => recordRetention(pool, asTenantId(t), c),
          clearRetentionPending: (e) => clearRetentionPending(pool, e),
        },
        tenants: { claimable: () => ["noisy", "quiet"], limitsOf: () => undefined },
        defaultDays: 30, log: createLogger("bench", "silent"),
        options: { batch: BATCH, intervalMs: 60_000, busyPauseMs: 0, countCap: 100_000 },
      });
      const pruneStart = performance.now();
      pruner.start();
      const busy: number[] = [];
      for (let i = 0; i < RUNS; i++) busy.push(await claim());
      pruning = timing(busy);
      const { rows: [left] } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = 'noisy'");
      prunedDuring = OLD_ROWS - left!.n;
      await pruner.stop();
      rate = prunedDuring / ((performance.now() - pruneStart) / 1000);
    } finally {
      await claimer.end();
      await pool.end();
    }
  } finally {
    await cluster.stop();
  }
  const f = (n: number) => n.toFixed(2);
  const ratio = pruning.p99 / alone.p99;
  console.log(`  alone:   median ${f(alone.median)} ms, p95 ${f(alone.p95)} ms, p99 ${f(alone.p99)} ms`);
  console.log(`  pruning: median ${f(pruning.median)} ms, p95 ${f(pruning.p95)} ms, p99 ${f(pruning.p99)} ms (${prunedDuring.toLocaleString("en-US")} instances pruned meanwhile, ${Math.round(rate).toLocaleString("en-US")}/s)`);
  console.log(`claim p99 ratio (pruning / alone): ${ratio.toFixed(2)}`);
  writeResults({
    bench: "retention",
    summary: `A quiet tenant's claim (8 due instances) alone and while the retention pruner deletes another tenant's ${OLD_ROWS.toLocaleString("en-US")} expired instances (with an output, a signal and an audit entry each) without pausing; ${RUNS} claims each, rolled back.`,
    tables: [{
      columns: ["quiet tenant's claim", "median (ms)", "p95 (ms)", "p99 (ms)"],
      rows: [["alone", f(alone.median), f(alone.p95), f(alone.p99)], ["while pruning", f(pruning.median), f(pruning.p95), f(pruning.p99)], ["ratio", "", "", ratio.toFixed(2)]],
    }],
    notes: [`The pruner deleted ${prunedDuring.toLocaleString("en-US")} instances with their rows meanwhile (${Math.round(rate).toLocaleString("en-US")}/s) in batches of ${BATCH}, with no pause between passes (the engine pauses 200 ms).`],
    postgres,
    startedAt,
  });
}
