// Lock order of the statements that update many task_instances rows: group commits and lease
// renewals over overlapping sets of instances, in any order and from many connections at once,
// never deadlock (40P01), and a batch with one commit the database refuses still writes the rest.
import { randomInt } from "node:crypto";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { insertDueInstances } from "../../test/factories.ts";
import { ProgressWriter } from "../exec/progress-writer.ts";
import { BackendStore } from "./backend-store.ts";
import { backendOn } from "./backends.ts";
import { asTenantId } from "./ids.ts";
import { claimDueInstances, type ClaimedInstance } from "./claim.ts";
import { commitProgressBatch, type Progress } from "./execution.ts";
import { renewLeases } from "./leases.ts";

let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await freshDatabase();
  pool = testPool(db.url, 10);
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

/** `count` instances of two tenants, running under a long lease with epoch 1. */
async function runningInstances(count: number): Promise<ClaimedInstance[]> {
  await db.sql.query("TRUNCATE task_instances, block_outputs");
  await insertDueInstances(db, "a", count / 2);
  await insertDueInstances(db, "b", count / 2);
  const claimed = await claimDueInstances(db.sql, { now: new Date(), limit: count, maxPerTenant: 0, leaseOwner: "t", leaseMs: 600_000 });
  expect(claimed).toHaveLength(count);
  return claimed;
}

/** A random subset of `from` of `size`, in random order, or sorted one way or the other. */
function pick<T extends { id: string }>(from: T[], size: number): T[] {
  const shuffled = [...from];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  const subset = shuffled.slice(0, size);
  const order = randomInt(3);
  if (order === 0) return subset;
  subset.sort((x, y) => (x.id < y.id ? -1 : 1));
  return order === 1 ? subset : subset.reverse();
}

describe("lock order", () => {
  it("concurrent group commits and lease renewals over overlapping instances never deadlock", async () => {
    const instances = await runningInstances(200);
    const errors: string[] = [];
    const lost: string[] = [];
    let commits = 0;
    let renewals = 0;
    let outputs = 0;
    const deadline = Date.now() + 5_000;

    const worker = async (n: number) => {
      while (Date.now() < deadline) {
        const batch = pick(instances, 20 + randomInt(130));
        const commit = randomInt(2) === 0;
        try {
          if (commit) {
            const progress: Progress[] = batch.map((c) => ({
              instanceId: c.id, tenantId: c.tenantId, leaseEpoch: c.leaseEpoch, state: "running",
              cursor: { worker: n, at: Date.now() }, outputs: [{ blockId: "step", output: { n }, attempt: 0 }],
              dataPatch: { set: { [`w${n}`]: commits }, unset: [] },
            }));
            const written = await commitProgressBatch(pool, progress);
            lost.push(...batch.filter((c) => !written.has(c.id)).map((c) => c.id));
            commits++;
            outputs += batch.length;
          } else {
            const kept = await renewLeases(pool, batch, new Date(Date.now() + 600_000));
            lost.push(...batch.filter((c) => !kept.has(c.id)).map((c) => c.id));
            renewals++;
          }
        } catch (error) {
          errors.push(`${commit ? "commit" : "renew"}: ${(error as { code?: string }).code ?? String(error)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, n) => worker(n)));

    expect(errors).toEqual([]);
    expect(lost).toEqual([]);
    expect(commits).toBeGreaterThan(10);
    expect(renewals).toBeGreaterThan(10);
    // Every row is still running under its lease, and every output of every commit is stored.
    const { rows } = await db.sql.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE state = 'running' AND lease_epoch = 1 AND lease_owner = 't'
                                                     AND lease_expires_at > now() AND jsonb_typeof(context -> 'data') = 'object')::int AS ok
         FROM task_instances`,
    );
    expect(rows[0]).toEqual({ n: 200, ok: 200 });
    const { rows: stored } = await db.sql.query("SELECT count(*)::int AS n FROM block_outputs");
    expect(stored[0].n).toBe(outputs);
  }, 30_000);

  it("children ending in concurrent batches wake their shared parents without deadlock", async () => {
    await db.sql.query("TRUNCATE task_instances, block_outputs");
    const { rows: parents } = await db.sql.query<{ id: string }>(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state)
       SELECT gen_random_uuid(), 'a', 'default', gen_random_uuid(), 'waiting' FROM generate_series(1, 10) RETURNING id`,
    );
    const { rows: children } = await db.sql.query<{ id: string }>(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, parent_instance_id, lease_owner, lease_expires_at, lease_epoch)
       SELECT gen_random_uuid(), 'a', 'default', gen_random_uuid(), 'running', p, 't', now() + interval '10 minutes', 1
         FROM unnest($1::uuid[]) AS p, generate_series(1, 40) RETURNING id`,
      [parents.map((p) => p.id)],
    );
    const errors: string[] = [];
    let rounds = 0;
    const deadline = Date.now() + 4_000;
    while (Date.now() < deadline) {
      // Every child ends once per round, in one of 8 batches committed at the same time; each
      // batch holds children of every parent.
      const order = pick(children, children.length);
      await Promise.all(Array.from({ length: 8 }, async (_, n) => {
        const batch = order.filter((_, i) => i % 8 === n);
        try {
          const written = await commitProgressBatch(pool, batch.map((c) => ({
            instanceId: c.id, tenantId: asTenantId("a"), leaseEpoch: 1, state: "completed" as const, cursor: null,
          })));
          if (written.size !== batch.length) errors.push(`lost ${batch.length - written.size}`);
        } catch (error) {
          errors.push((error as { code?: string }).code ?? String(error));
        }
      }));
      if (errors.length > 0) break;
      const { rows } = await db.sql.query(
        "SELECT state, count(*)::int AS n FROM task_instances GROUP BY state ORDER BY state",
      );
      expect(rows).toEqual([{ state: "completed", n: 400 }, { state: "scheduled", n: 10 }]);
      await db.sql.query(`UPDATE task_instances SET state = CASE WHEN parent_instance_id IS NULL THEN 'waiting' ELSE 'running' END,
                                 next_fire_at = NULL, completed_at = NULL, lease_owner = 't', lease_expires_at = now() + interval '10 minutes'`);
      rounds++;
    }
    expect(errors).toEqual([]);
    expect(rounds).toBeGreaterThan(5);
  }, 30_000);

  it("a batch with one commit the database refuses writes the others and rejects only that one", async () => {
    const instances = await runningInstances(8);
    const written: string[] = [];
    const writer = new ProgressWriter(new BackendStore(backendOn("primary", pool)), (p) => written.push(p.instanceId));
    const bad = instances[5]!.id;
    // Issued in one turn of the event loop: one batch. A lone surrogate is valid JSON text but
    // not storable in jsonb (22P02), so the batch's statement fails as a whole.
    const results = await Promise.allSettled(instances.map((c) => writer.commit({
      instanceId: c.id, tenantId: c.tenantId, leaseEpoch: c.leaseEpoch, state: "running",
      cursor: c.id === bad ? { text: "\ud800" } : { ok: c.id },
    })));

    for (const [i, result] of results.entries()) {
      if (instances[i]!.id === bad) {
        expect(result.status).toBe("rejected");
        expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "22P02" });
      } else {
        expect(result).toEqual({ status: "fulfilled", value: true });
      }
    }
    expect(written.sort()).toEqual(instances.map((c) => c.id).filter((id) => id !== bad).sort());
    const { rows } = await db.sql.query<{ id: string; cursor: unknown }>("SELECT id, cursor FROM task_instances");
    expect(Object.fromEntries(rows.map((r) => [r.id, r.cursor]))).toEqual(
      Object.fromEntries(instances.map((c) => [c.id, c.id === bad ? null : { ok: c.id }])),
    );
  });
});
