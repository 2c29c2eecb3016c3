// Fleet: what a noisy tenant's backlog of worker tasks does to the quiet tenants' wait for a fleet
// worker (wire-format T: an operator's workers polling one handler across every tenant).
//
// 3 quiet tenants each get BENCH_QUIET_PER_TENANT (40) worker tasks of one handler, arriving one
// after another across BENCH_WINDOW_MS (4 s), the tenants staggered; a noisy tenant has 10x, then
// 100x, their total of the same handler, all pending at the start. A simulated fleet of
// BENCH_FLEET_WORKERS (8) workers, each in a loop: poll up to BENCH_FLEET_BATCH (10) tasks;
// "process" the whole batch at once (one BENCH_WORK_MS, 20 ms, wait for the batch, its tasks
// concurrently); complete its tasks one after another (TenantStore.completeWorkerTask, the
// fenced report the REST complete runs); poll again at once, or after BENCH_FLEET_IDLE_MS (50 ms)
// when the poll found nothing. So a worker has at most one statement in flight, and the fleet at
// most workers x batch (80) tasks claimed.
//
// Two polls, each in a database of its own, with the same arrivals and the same worker loop:
//   fair: Storage.pollWorkerTasksOfEveryTenant, the operator's fleet poll as the REST handler
//         calls it (round robin across tenants, 64 claimed per tenant and handler at most);
//   fifo: the oldest pending tasks of the handler across every tenant, the way Orch8 and most
//         queues take them: one statement, FOR UPDATE SKIP LOCKED, claiming exactly as the real
//         poll does (state, worker_id, claimed_at, heartbeat_at, claim_epoch + 1, one `claimed`
//         attempt event each, the same columns answered), without the per-tenant cap, the
//         advisory lock the cap needs, or the placement read. Its database gets the index its
//         order needs, (handler_name, created_at, id) WHERE state = 'pending', the analogue of
//         worker_tasks_pending_idx for the fair order, so it too reads only ~batch index entries.
//
// Wait, per quiet task: when the poll that claimed it answered the worker (Date.now() as the
// poll's promise resolved) minus the task's created_at (the insert's now(); the same clock).
// A run ends once every quiet task is claimed; what is left of the backlog is dropped.
import os from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import type pg from "pg";
import { loadConfig } from "../engine/config.ts";
import { FLEET_CLAIMED_PER_TENANT, Storage, StorageBackends, type TenantStore } from "../engine/storage/index.ts";
import { FLEET_SQL } from "../engine/storage/worker-tasks.ts";
import { createTenant } from "../server/control/tenants.ts";
import { createPrisma } from "../server/db/prisma.ts";
import type { Cluster } from "../scripts/database.ts";
import { benchCluster, benchPool, freshBenchDatabase, median, percentile } from "./cluster.ts";
import { postgresVersion, writeResults } from "./results.ts";
import { explainAnalyze, rowsRead, scansOf } from "../test/explain.ts";

const QUIET_TENANTS = 3;
const QUIET_PER_TENANT = Number(process.env.BENCH_QUIET_PER_TENANT ?? 40);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 4_000);
const WORKERS = Number(process.env.BENCH_FLEET_WORKERS ?? 8);
const BATCH = Number(process.env.BENCH_FLEET_BATCH ?? 10);
const WORK_MS = Number(process.env.BENCH_WORK_MS ?? 20);
const IDLE_MS = Number(process.env.BENCH_FLEET_IDLE_MS ?? 50);
const FACTORS = (process.env.BENCH_NOISY_FACTORS ?? "10,100").split(",").map(Number);
/** Quiet arrivals start this long after the workers are started. */
const LEAD_MS = 300;
/** A run that has not claimed every quiet task by then is a broken run, not a figure. */
const RUN_TIMEOUT_MS = 120_000;
const HANDLER = "pdf";
const DATABASE = "bench_fleet";
const NOISY = "fleet-noisy";
const QUIET = Array.from({ length: QUIET_TENANTS }, (_, q) => `fleet-quiet-${q}`);
const QUIET_TOTAL = QUIET_TENANTS * QUIET_PER_TENANT;

type Policy = "fair" | "fifo";
const POLICIES: Policy[] = ["fair", "fifo"];

/** What a worker needs of a claimed task, whichever poll claimed it. */
interface Claimed {
  id: string;
  tenantId: string;
  claimEpoch: number;
  createdAt: Date;
}

// The FIFO peer: the real tenant poll's statement (worker-tasks.ts, pollSql) across every tenant.
// picked:  the handler's oldest pending tasks, whoever's, locked; SKIP LOCKED lets concurrent
//          pollers take disjoint tasks, each scan going on past the rows another poller holds.
// claimed: those tasks under a new lease, exactly as the fleet poll claims them.
// events:  one `claimed` event each.
const FIFO_INDEX = `CREATE INDEX bench_fleet_fifo_idx ON worker_tasks (handler_name, created_at, id) WHERE state = 'pending'`;
const FIFO_POLL = `
WITH picked AS (
  SELECT id FROM worker_tasks
   WHERE state = 'pending' AND handler_name = $1
   ORDER BY created_at, id
   LIMIT $2
   FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE worker_tasks t
     SET state = 'claimed', worker_id = $3, claimed_at = now(), heartbeat_at = now(), claim_epoch = t.claim_epoch + 1
    FROM picked
   WHERE t.id = picked.id
  RETURNING t.*
), events AS (
  INSERT INTO worker_task_attempts (tenant_id, task_id, event, worker_id, claim_epoch)
  SELECT tenant_id, id, 'claimed', worker_id, claim_epoch FROM claimed
)
SELECT tenant_id, id, instance_id, block_id, handler_name, queue_name, params, context, attempt, timeout_ms, state,
  worker_id, claimed_at, heartbeat_at, claim_epoch, resume_checkpoint, checkpoint_seq, completed_at, output,
  error_message, error_retryable, created_at
  FROM claimed ORDER BY created_at, id`;

interface RunOutcome {
  /** Every quiet task's wait, ms. */
  waits: number[];
  /** Noisy tasks claimed per second while the quiet ones were being claimed. */
  noisyPerSecond: number;
  /** The most noisy tasks claimed and not yet completed at once (as the workers saw it). */
  noisyInFlightMax: number;
  /** Every poll's round trip as the worker waited for it, ms. */
  pollMs: number[];
}

interface PolicyDatabase {
  url: string;
  storage: Storage;
  stores: Map<string, TenantStore>;
  /** For the arrivals (the engine's side, not the fleet's), and the bench's own statements. */
  side: pg.Pool;
}

async function openPolicyDatabase(cluster: Cluster, policy: Policy): Promise<PolicyDatabase> {
  const url = await freshBenchDatabase(cluster, DATABASE, true);
  const prisma = createPrisma(url);
  try {
    for (const slug of [NOISY, ...QUIET]) await createTenant(prisma, { slug, backendId: "primary" });
  } finally {
    await prisma.$disconnect();
  }
  const side = benchPool(url, 4);
  if (policy === "fifo") await side.query(FIFO_INDEX);
  // The engine's pool, as configured by default (BULKHEAD_POOL_SIZE): every worker has at most
  // one statement in flight, so the pool never makes a worker wait with the default 8 workers.
  const config = loadConfig({ DATABASE_URL: url });
  const storage = new Storage(new StorageBackends(config.backends, { poolSize: config.BULKHEAD_POOL_SIZE }));
  const stores = new Map<string, TenantStore>();
  for (const tenant of [NOISY, ...QUIET]) stores.set(tenant, await storage.tenant(tenant));
  return { url, storage, stores, side };
}

function pollerFor(db: PolicyDatabase, policy: Policy): (workerId: string) => Promise<Claimed[]> {
  if (policy === "fair") {
    return async (workerId) => {
      const { tasks, failed } = await db.storage.pollWorkerTasksOfEveryTenant({ handlerName: HANDLER, queueName: null, workerId, limit: BATCH });
      if (failed.length > 0) throw failed[0]!.error;
      return tasks;
    };
  }
  const pool = db.storage.backends.primary.pool;
  return async (workerId) => {
    const { rows } = await pool.query<{ tenant_id: string; id: string; claim_epoch: number; created_at: Date }>({
      name: "bench_fifo_poll", text: FIFO_POLL, values: [HANDLER, BATCH, workerId],
    });
    return rows.map((row) => ({ id: row.id, tenantId: row.tenant_id, claimEpoch: Number(row.claim_epoch), createdAt: row.created_at }));
  };
}

/** `count` bare pending tasks of the handler for one tenant, created now (the fleet test's rows). */
async function insertBacklog(side: pg.Pool, tenantId: string, count: number): Promise<void> {
  await side.query(
    `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name)
     SELECT gen_random_uuid(), $1, gen_random_uuid(), 'b' || i, $2 FROM generate_series(1, $3) AS i`,
    [tenantId, HANDLER, count],
  );
}

interface RunOptions {
  perTenant: number;
  windowMs: number;
  /** Called with the backlog pending and analyzed, before the workers start. */
  beforeStart?: () => Promise<void>;
}

async function runOnce(db: PolicyDatabase, policy: Policy, noisy: number, load: RunOptions = { perTenant: QUIET_PER_TENANT, windowMs: WINDOW_MS }): Promise<RunOutcome> {
  await db.side.query("TRUNCATE worker_tasks, worker_task_attempts");
  if (noisy > 0) await insertBacklog(db.side, NOISY, noisy);
  await db.side.query("ANALYZE worker_tasks, worker_task_attempts");
  await load.beforeStart?.();

  const poll = pollerFor(db, policy);
  const quietTotal = QUIET_TENANTS * load.perTenant;
  const waits: number[] = [];
  const pollMs: number[] = [];
  let noisyClaimed = 0;
  let noisyInFlight = 0;
  let noisyInFlightMax = 0;
  let stopped = false;
  let failure: unknown = null;

  const worker = async (index: number) => {
    const workerId = `fleet-w${index}`;
    await delay((index * IDLE_MS) / WORKERS); // staggered, so idle workers do not poll in step
    while (!stopped) {
      const started = performance.now();
      const tasks = await poll(workerId);
      const answeredAt = Date.now();
      pollMs.push(performance.now() - started);
      for (const task of tasks) {
        if (task.tenantId === NOISY) {
          noisyClaimed++;
          noisyInFlightMax = Math.max(noisyInFlightMax, ++noisyInFlight);
        } else {
          waits.push(answeredAt - task.createdAt.getTime());
        }
      }
      if (tasks.length === 0) {
        await delay(IDLE_MS);
        continue;
      }
      await delay(WORK_MS);
      for (const task of tasks) {
        const outcome = await db.stores.get(task.tenantId)!.completeWorkerTask(task.id, { workerId, claimEpoch: task.claimEpoch }, { ok: true });
        if (outcome !== "ok") throw new Error(`complete of task ${task.id} answered ${outcome}`);
        if (task.tenantId === NOISY) noisyInFlight--;
      }
    }
  };

  const startedAt = Date.now();
  const workers = Array.from({ length: WORKERS }, (_, index) => worker(index).catch((error: unknown) => {
    failure ??= error;
    stopped = true;
  }));
  // The arrivals: each quiet task inserted at its moment (its created_at is the insert's now()).
  const arrivals = QUIET.flatMap((tenant, q) => Array.from({ length: load.perTenant }, (_, i) => ({
    tenant, at: startedAt + LEAD_MS + Math.round(((i + q / QUIET_TENANTS) * load.windowMs) / load.perTenant),
  }))).sort((a, b) => a.at - b.at);
  const inserts: Promise<unknown>[] = [];
  const feeder = (async () => {
    for (const { tenant, at } of arrivals) {
      if (stopped) return;
      const wait = at - Date.now();
      if (wait > 0) await delay(wait);
      inserts.push(db.side.query({
        name: "bench_fleet_arrival",
        text: `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name) VALUES (gen_random_uuid(), $1, gen_random_uuid(), 'b', $2)`,
        values: [tenant, HANDLER],
      }).catch((error: unknown) => {
        failure ??= error;
        stopped = true;
      }));
    }
  })();

  const deadline = Date.now() + RUN_TIMEOUT_MS;
  while (waits.length < quietTotal && !stopped) {
    if (Date.now() > deadline) {
      failure ??= new Error(`fleet ${policy}, noisy ${noisy}: ${waits.length} of ${quietTotal} quiet tasks claimed after ${RUN_TIMEOUT_MS} ms`);
      break;
    }
    await delay(20);
  }
  const seconds = (Date.now() - startedAt) / 1000;
  stopped = true;
  await Promise.all([...workers, feeder]);
  await Promise.all(inserts);
  if (failure) throw failure;
  return { waits, noisyPerSecond: noisyClaimed / seconds, noisyInFlightMax, pollMs };
}

/** One poll of `policy` under EXPLAIN ANALYZE, rolled back: the indexes it read worker_tasks through, the rows read, its time. */
async function explainPoll(db: PolicyDatabase, policy: Policy): Promise<string> {
  const [text, values] = policy === "fair"
    ? [FLEET_SQL.poll, [HANDLER, [NOISY, ...QUIET], BATCH, FLEET_CLAIMED_PER_TENANT, "explain"]]
    : [FIFO_POLL, [HANDLER, BATCH, "explain"]];
  const explained = await explainAnalyze(db.side, text, values);
  const scans = scansOf(explained, "worker_tasks");
  const how = [...new Set(scans.map((scan) => `${scan["Node Type"]}${scan["Index Name"] ? ` on ${scan["Index Name"]}` : ""}`))].join(", ");
  return `${rowsRead(scans)} rows read from worker_tasks (${how}), ${explained.executionMs.toFixed(2)} ms`;
}

const ms = (value: number) => Math.round(value);

export async function main(): Promise<void> {
  const startedAt = performance.now();
  console.log(
    `fleet: ${QUIET_TENANTS} quiet tenants × ${QUIET_PER_TENANT} tasks of "${HANDLER}" over ${WINDOW_MS} ms; a noisy tenant's backlog at ${FACTORS.join("x, ")}x; ` +
    `${WORKERS} workers × batch ${BATCH}, ${WORK_MS} ms per batch, idle poll ${IDLE_MS} ms; ${os.cpus().length} cores`,
  );
  const cluster = await benchCluster();
  try {
    let postgres = "";
    const rows: (string | number)[][] = [];
    const ratios = new Map<string, number>();
    const plans: string[] = [];
    const alone = new Map<Policy, number>();
    for (const policy of POLICIES) {
      const db = await openPolicyDatabase(cluster, policy);
      try {
        postgres ||= await postgresVersion(db.url);
        process.stdout.write(`${policy}: warming up… `);
        await runOnce(db, policy, QUIET_TOTAL, { perTenant: 10, windowMs: 1_000 });
        console.log("done");
        for (const factor of [0, ...FACTORS]) {
          const noisy = factor * QUIET_TOTAL;
          // The poll's plan with the largest backlog pending (nothing claimed yet), before its run.
          const beforeStart = factor === Math.max(...FACTORS)
            ? async () => void plans.push(`${policy} poll, ${noisy.toLocaleString("en-US")} pending: ${await explainPoll(db, policy)}`)
            : undefined;
          const outcome = await runOnce(db, policy, noisy, { perTenant: QUIET_PER_TENANT, windowMs: WINDOW_MS, beforeStart });
          const p99 = percentile(outcome.waits, 99);
          if (factor === 0) alone.set(policy, p99);
          const ratio = p99 / alone.get(policy)!;
          if (factor > 0) ratios.set(`${policy}, ${factor}x`, ratio);
          const row = [
            policy, factor === 0 ? "alone" : `${factor}x`, noisy.toLocaleString("en-US"),
            ms(percentile(outcome.waits, 50)), ms(p99), ms(Math.max(...outcome.waits)), `${ratio.toFixed(2)}×`,
            ms(outcome.noisyPerSecond), outcome.noisyInFlightMax, median(outcome.pollMs).toFixed(1), percentile(outcome.pollMs, 99).toFixed(1),
          ];
          rows.push(row);
          console.log(`${policy} ${row[1]}: quiet wait p50 ${row[3]} ms, p99 ${row[4]} ms, max ${row[5]} ms (${row[6]} alone); noisy ${row[7]}/s, at most ${row[8]} in flight; poll median ${row[9]} ms, p99 ${row[10]} ms`);
        }
      } finally {
        await Promise.all([db.storage.close(), db.side.end()]);
      }
    }
    for (const plan of plans) console.log(plan);
    for (const [key, ratio] of ratios) console.log(`fleet quiet p99 ratio (${key}): ${ratio.toFixed(2)}`);
    writeResults({
      bench: "fleet", startedAt, postgres,
      summary:
        `Quiet tenants' worker-task wait (created → claimed by a fleet worker's poll), ${QUIET_TENANTS} quiet tenants × ${QUIET_PER_TENANT} tasks of one handler ` +
        `arriving steadily over ${WINDOW_MS / 1000} s, beside a noisy tenant's backlog of the same handler at ${FACTORS.map((f) => `${f}x`).join(" and ")} their total, all pending at the start: ` +
        "Bulkhead's fair fleet poll, and a FIFO oldest-first poll (the way Orch8 and most queues take them) with the same arrivals and workers.",
      tables: [{
        columns: [
          "poll", "scenario", "noisy tasks", "quiet wait p50 (ms)", "quiet wait p99 (ms)", "quiet wait max (ms)", "p99 / alone",
          "noisy claimed/s", "noisy in flight, max", "poll median (ms)", "poll p99 (ms)",
        ],
        rows,
      }],
      notes: [
        `Fleet: ${WORKERS} workers in one process, each looping: poll up to ${BATCH}; process the batch at once (one ${WORK_MS} ms wait for all its tasks); ` +
        `complete its tasks one after another (TenantStore.completeWorkerTask); poll again at once, or after ${IDLE_MS} ms when the poll found nothing. ` +
        `At most ${WORKERS * BATCH} tasks claimed at once. Each poll in a database of its own, the engine's pool at its default size.`,
        "Wait = when the poll that claimed the task answered the worker − the task's created_at (the arrival's insert). p99 is the nearest-rank percentile over every quiet task; " +
        `"p99 / alone" divides by the same poll's p99 with no noisy tenant (fair ${ms(alone.get("fair")!)} ms, fifo ${ms(alone.get("fifo")!)} ms). Goal: ≤ 1.25× for fair.`,
        "fair: Storage.pollWorkerTasksOfEveryTenant as the REST fleet poll calls it (placements read, then BEGIN, the per-handler advisory lock, the claim, COMMIT). " +
        "fifo: one statement, the handler's oldest pending tasks of any tenant, FOR UPDATE SKIP LOCKED, claimed and evented exactly as the fleet poll does; " +
        "no cap, no advisory lock, no placement read; its database has the index its order needs, (handler_name, created_at, id) WHERE state = 'pending'.",
        ...plans.map((plan) => `Plan, ${plan}.`),
        `The per-tenant cap (FLEET_CLAIMED_PER_TENANT, ${FLEET_CLAIMED_PER_TENANT} claimed tasks per tenant and handler) bounds the noisy tenant at ${FLEET_CLAIMED_PER_TENANT} of the fleet's ` +
        `${WORKERS * BATCH} claim slots (${Math.round((100 * FLEET_CLAIMED_PER_TENANT) / (WORKERS * BATCH))}%): while it is the only tenant with work, the rest of the fleet polls and finds nothing, ` +
        "so its backlog drains at most that share of the fleet's rate (\"noisy claimed/s\", fair against fifo). With fewer slots than the cap it binds nothing and round robin alone keeps quiet tenants' wait.",
        "A run ends once every quiet task is claimed; \"noisy claimed/s\" is the backlog's rate over that time.",
      ],
    });
  } finally {
    await cluster.stop();
  }
}
