// The retention pruner on real PostgreSQL, with a tenant placed on a second backend (eu-1):
// exactly the instances past their tenant's retention go, with every row that belongs to them;
// a tenant with 100,000 old rows gets one batch per pass like everyone else; and pruning never
// holds a lock a claim waits for.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { seedInstancesWithRows as seed } from "../../test/factories.ts";
import { createTenant } from "../../server/control/tenants.ts";
import { createLogger } from "../logger.ts";
import { TenantView } from "../scheduler/tenant-view.ts";
import { asTenantId, BackendStore, Storage, StorageBackends } from "../storage/index.ts";
import { claimDueInstances } from "../storage/claim.ts";
import { INSTANCE_ROWS, pruneExpired } from "../storage/retention.ts";
import { setTenantLimits } from "../storage/tenant-limits.ts";
import { summarizeTenantRows, TENANT_TABLES } from "../storage/tenant-rows.ts";
import { RETENTION_DEFAULTS, RetentionPruner, type RetentionOptions } from "./pruner.ts";

const log = createLogger("test", process.env.TEST_LOG ?? "silent");
const DEFAULT_DAYS = 30;

let second: TestDatabase;
let db: TestDatabase;
let storage: Storage;
let tenants: TenantView;
beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  storage = new Storage(new StorageBackends(db.config.backends, { poolSize: 6 }));
  tenants = new TenantView(storage, log, 60_000);
});
afterAll(async () => {
  tenants.stop();
  await storage.close();
  await db.drop();
  await second.drop();
});

const eu = () => storage.backends.get("eu-1").pool;
const pruner = (options: Partial<RetentionOptions> = {}) => new RetentionPruner({
  store: new BackendStore(storage.backends.get("eu-1")), tenants, defaultDays: DEFAULT_DAYS, log,
  options: { ...RETENTION_DEFAULTS, batch: 500, intervalMs: 60_000, ...options },
});

async function tenantOnEu(retentionDays?: number): Promise<string> {
  const tenant = await createTenant(db.prisma, { slug: `r-${Math.random().toString(36).slice(2, 10)}`, backendId: "eu-1" });
  if (retentionDays !== undefined) await setTenantLimits(db.sql, tenant.id, { retentionDays });
  await tenants.refresh();
  return tenant.id;
}

/** Per table, the tenant's rows that belong to one of `ids` (an instance, its task, or its dedupe scope). */
async function rowsOf(pool: pg.Pool, tenantId: string, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await pool.query<Record<string, number>>(
    `SELECT (SELECT count(*) FROM task_instances WHERE tenant_id = $1 AND id = ANY($2::uuid[]))::int AS task_instances,
            (SELECT count(*) FROM block_outputs WHERE tenant_id = $1 AND instance_id = ANY($2::uuid[]))::int AS block_outputs,
            (SELECT count(*) FROM signals WHERE tenant_id = $1 AND instance_id = ANY($2::uuid[]))::int AS signals,
            (SELECT count(*) FROM worker_tasks WHERE tenant_id = $1 AND instance_id = ANY($2::uuid[]))::int AS worker_tasks,
            (SELECT count(*) FROM worker_task_attempts a WHERE a.tenant_id = $1
                AND NOT EXISTS (SELECT 1 FROM worker_tasks w WHERE w.id = a.task_id))::int AS orphan_attempts,
            (SELECT count(*) FROM instance_checkpoints WHERE tenant_id = $1 AND instance_id = ANY($2::uuid[]))::int AS instance_checkpoints,
            (SELECT count(*) FROM instance_logs WHERE tenant_id = $1 AND instance_id = ANY($2::uuid[]))::int AS instance_logs,
            (SELECT count(*) FROM instance_audit_log WHERE tenant_id = $1 AND instance_id = ANY($2::uuid[]))::int AS instance_audit_log,
            (SELECT count(*) FROM event_dedupe WHERE tenant_id = $1
                AND (child_instance_id = ANY($2::uuid[]) OR scope = ANY(SELECT 'parent:' || i FROM unnest($2::uuid[]) i)))::int AS event_dedupe`,
    [tenantId, ids],
  );
  return rows[0]!;
}

const all = (n: number) => ({
  task_instances: n, block_outputs: n, signals: n, worker_tasks: n, orphan_attempts: 0, instance_checkpoints: n, instance_logs: n,
  instance_audit_log: n, event_dedupe: 2 * n,
});

async function untilDone(p: RetentionPruner): Promise<number> {
  let passes = 0;
  for (;;) {
    passes++;
    if (!(await p.pass()).more) return passes;
  }
}

describe("the retention pruner", () => {
  it("deletes exactly the terminal instances past the tenant's retention, with all their rows, on eu-1", async () => {
    const tenant = await tenantOnEu(7);
    const other = await tenantOnEu(); // the default, 30 days
    const expired = [
      ...(await seed(eu(), tenant, 3, "completed", 8)), ...(await seed(eu(), tenant, 2, "failed", 9)), ...(await seed(eu(), tenant, 2, "cancelled", 40)),
    ];
    const young = [...(await seed(eu(), tenant, 2, "completed", 6)), ...(await seed(eu(), tenant, 1, "failed", 0))];
    // Old but not finished: a waiting or paused instance is never pruned, however old.
    const unfinished = [...(await seed(eu(), tenant, 2, "waiting", 90)), ...(await seed(eu(), tenant, 1, "paused", 90)), ...(await seed(eu(), tenant, 1, "scheduled", 90))];
    const othersOld = await seed(eu(), other, 3, "completed", 8);
    const before = await summarizeTenantRows(eu(), asTenantId(other));

    const p = pruner({ batch: 4 });
    expect(await untilDone(p)).toBe(2); // 7 expired in batches of 4
    expect(await rowsOf(eu(), tenant, expired)).toEqual(all(0));
    expect(await rowsOf(eu(), tenant, [...young, ...unfinished])).toEqual(all(young.length + unfinished.length));
    // The other tenant's 8-day-old instances are inside its 30 days: not a row of it changed.
    expect(await rowsOf(eu(), other, othersOld)).toEqual(all(3));
    expect(await summarizeTenantRows(eu(), asTenantId(other))).toEqual(before);

    const { rows: [status] } = await eu().query("SELECT pending, pending_capped, pruned_total::int AS pruned FROM retention_status WHERE tenant_id = $1", [tenant]);
    expect(status).toEqual({ pending: 0, pending_capped: false, pruned: 7 });
    // A shorter retention takes the young ones too; the default, once the tenant's own is cleared, none.
    await setTenantLimits(db.sql, tenant, { retentionDays: 1 });
    await tenants.refresh();
    await untilDone(p);
    expect(await rowsOf(eu(), tenant, young)).toEqual({ ...all(1), task_instances: 1 }); // the one finished today stays
  });

  it("leaves a quiesced tenant's rows alone (a move or a deletion holds them)", async () => {
    const tenant = await tenantOnEu(1);
    const old = await seed(eu(), tenant, 2, "completed", 5);
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [tenant]);
    await tenants.refresh();
    await pruner().pass();
    expect(await rowsOf(eu(), tenant, old)).toEqual(all(2));
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = NULL WHERE tenant_id = $1", [tenant]);
    await tenants.refresh();
    await pruner().pass();
    expect(await rowsOf(eu(), tenant, old)).toEqual(all(0));
  });

  it("gives a tenant with 100,000 old rows one batch per pass, so a quiet tenant is pruned in the first pass", async () => {
    const noisy = await tenantOnEu(1);
    const quiet = await tenantOnEu(1);
    await eu().query(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, completed_at)
       SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), 'completed', now() - interval '3 days' FROM generate_series(1, 100000)`,
      [noisy],
    );
    const quietOld = await seed(eu(), quiet, 10, "completed", 3);
    // Whichever tenant the pass starts with, the first pass prunes all of the quiet one's.
    for (let round = 0; round < 2; round++) {
      const p = pruner({ batch: 500, countCap: 100_000 });
      const { pruned, more } = await p.pass();
      expect(more).toBe(true);
      expect(pruned.get(noisy)).toBe(500);
      if (round === 0) {
        expect(pruned.get(quiet)).toBe(10);
        expect(await rowsOf(eu(), quiet, quietOld)).toEqual(all(0));
      }
    }
    const { rows } = await eu().query(
      "SELECT tenant_id, pending, pending_capped, pruned_total::int AS pruned FROM retention_status WHERE tenant_id = ANY($1) ORDER BY pending DESC",
      [[noisy, quiet]],
    );
    // Counted before each pass's batch (capped at 100,000), less what the pass deleted.
    expect(rows).toEqual([
      { tenant_id: noisy, pending: 100_000 - 1_000, pending_capped: false, pruned: 1_000 },
      { tenant_id: quiet, pending: 0, pending_capped: false, pruned: 10 },
    ]);
  });

  it("never holds a lock a claim waits for: due work of the pruned tenant and of others is claimed while a batch is open", async () => {
    const noisy = await tenantOnEu(1);
    const other = await tenantOnEu(1);
    await seed(eu(), noisy, 2_000, "completed", 3);
    for (const tenantId of [noisy, other]) {
      await eu().query(
        `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at)
         SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), 'scheduled', now() - interval '1 second' FROM generate_series(1, 5)`,
        [tenantId],
      );
    }
    const holder = await eu().connect();
    const claimer = await eu().connect();
    try {
      await holder.query("BEGIN");
      expect((await pruneExpired(holder, asTenantId(noisy), 1, 2_000)).instances).toBe(2_000);
      // The batch's transaction is open, holding its row locks: a claim that had to wait for
      // one would fail on its lock timeout instead of answering.
      await claimer.query("SET lock_timeout = '2s'");
      const claimed = await claimDueInstances(claimer, {
        now: new Date(), limit: 100, maxPerTenant: 0, leaseOwner: "test", leaseMs: 30_000, onlyTenants: [noisy, other],
      });
      expect(claimed.map((c) => c.tenantId).sort()).toEqual([...Array(5).fill(noisy), ...Array(5).fill(other)].sort());
      // A second pruner skips the rows the open batch holds rather than waiting for them.
      await claimer.query("SET lock_timeout = '2s'");
      expect((await pruneExpired(claimer, asTenantId(noisy), 1, 2_000)).instances).toBe(0);
      await holder.query("COMMIT");
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      holder.release();
      claimer.release();
    }
  });

  it("covers every table that holds an instance's rows", async () => {
    // A new table keyed by instance must be pruned with it, or say here why not: trigger
    // deliveries keep the id of the instance they made (bounded at 50 per trigger).
    const { rows } = await eu().query<{ table_name: string }>(
      "SELECT DISTINCT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name IN ('instance_id', 'child_instance_id') ORDER BY 1",
    );
    const keyed = rows.map((r) => r.table_name).filter((name) => name !== "trigger_deliveries");
    expect(keyed.filter((name) => !(name in INSTANCE_ROWS))).toEqual([]);
    expect(Object.keys(INSTANCE_ROWS).every((name) => TENANT_TABLES.some((t) => t.name === name))).toBe(true);
  });
});
