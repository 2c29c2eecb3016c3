// Batch actions (wire-format K) against a real PostgreSQL: the selection (filter, oldest update
// first, the limit), what each action applies or skips, the dry run, and selections larger than
// one batch.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { BATCH_ACTION_LIMIT, clampBatchLimit, runBatchAction, type BatchAction } from "./batch-actions.ts";
import { BATCH_SIZE } from "./batches.ts";
import { asTenantId, type TenantId } from "./ids.ts";
import type { InstanceState } from "./instances.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

let tenants = 0;
const newTenant = () => asTenantId(`batch-${++tenants}-${randomUUID().slice(0, 6)}`);
const run = (tenantId: TenantId, action: Partial<BatchAction> & Pick<BatchAction, "action">) =>
  runBatchAction(db.storage.backends.primary.forTenant(tenantId), tenantId, { filter: {}, dryRun: false, limit: 1000, ...action });

/** An instance in `state`, last updated `ageMs` ago. */
async function make(tenantId: string, state: InstanceState, options: { ageMs?: number; namespace?: string; nextFireAt?: Date } = {}): Promise<string> {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, updated_at)
     VALUES (gen_random_uuid(), $1, $2, gen_random_uuid(), $3::text,
             CASE WHEN $3 = 'scheduled' THEN COALESCE($5::timestamptz, now() + interval '1 hour') END, now() - $4 * interval '1 millisecond')
     RETURNING id`,
    [tenantId, options.namespace ?? "default", state, options.ageMs ?? 0, options.nextFireAt ?? null],
  );
  return rows[0]!.id;
}

const stateOf = async (id: string) => (await db.sql.query("SELECT state, next_fire_at FROM task_instances WHERE id = $1", [id])).rows[0];
const signalsOf = async (id: string) =>
  (await db.sql.query("SELECT signal_type, payload, delivered FROM signals WHERE instance_id = $1 ORDER BY created_at", [id])).rows;

describe("clampBatchLimit", () => {
  it("clamps to 1..10000, 1000 when absent", () => {
    expect([clampBatchLimit(undefined), clampBatchLimit(0), clampBatchLimit(-5), clampBatchLimit(7), clampBatchLimit(10_001), clampBatchLimit(1e9)]).toEqual([
      1000, 1, 1, 7, BATCH_ACTION_LIMIT.max, BATCH_ACTION_LIMIT.max,
    ]);
  });
});

describe("runBatchAction", () => {
  it("retry: re-runs the failed instances and skips the rest", async () => {
    const tenantId = newTenant();
    const failed = [await make(tenantId, "failed"), await make(tenantId, "failed")];
    const others = await Promise.all((["scheduled", "running", "completed", "cancelled"] as const).map((state) => make(tenantId, state)));
    expect(await run(tenantId, { action: "retry" })).toEqual({ matched: 6, applied: 2, skipped: 4, failed: 0, dryRun: false });
    for (const id of failed) expect((await stateOf(id)).state).toBe("scheduled");
    expect((await Promise.all(others.map(stateOf))).map((s) => s.state)).toEqual(["scheduled", "running", "completed", "cancelled"]);
  });

  it("pause, resume, cancel: queue the signal for live instances (waking them as a single signal does), skip terminal ones", async () => {
    const tenantId = newTenant();
    const scheduled = await make(tenantId, "scheduled", { nextFireAt: new Date(Date.now() + 3_600_000) });
    const waiting = await make(tenantId, "waiting");
    const paused = await make(tenantId, "paused");
    const done = await make(tenantId, "completed");
    expect(await run(tenantId, { action: "cancel" })).toEqual({ matched: 4, applied: 3, skipped: 1, failed: 0, dryRun: false });
    for (const id of [scheduled, waiting, paused]) expect(await signalsOf(id)).toEqual([{ signal_type: "cancel", payload: null, delivered: false }]);
    expect(await signalsOf(done)).toEqual([]);
    // Due now, so the engine sees the cancel soon.
    expect((await stateOf(scheduled)).next_fire_at.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    expect((await stateOf(paused)).state).toBe("scheduled");

    const other = newTenant();
    const waitingToo = await make(other, "waiting");
    const pausedToo = await make(other, "paused");
    expect(await run(other, { action: "pause" })).toMatchObject({ applied: 2 });
    // A pause to a waiting instance is dropped (Appendix 12); a paused one is not woken by another pause.
    expect(await signalsOf(waitingToo)).toEqual([{ signal_type: "pause", payload: null, delivered: true }]);
    expect((await stateOf(waitingToo)).state).toBe("waiting");
    expect((await stateOf(pausedToo)).state).toBe("paused");
    expect(await run(other, { action: "resume" })).toMatchObject({ applied: 2 });
    expect((await stateOf(pausedToo)).state).toBe("scheduled");
  });

  it("signal: queues {custom: name} with the payload", async () => {
    const tenantId = newTenant();
    const id = await make(tenantId, "running");
    expect(await run(tenantId, { action: "signal", signalName: "approve", payload: { by: "ops" } })).toMatchObject({ applied: 1 });
    expect(await signalsOf(id)).toEqual([{ signal_type: "custom:approve", payload: { by: "ops" }, delivered: false }]);
  });

  it("selects at most `limit` matching instances, oldest update first, and a dry run only counts them", async () => {
    const tenantId = newTenant();
    const oldest = await make(tenantId, "failed", { ageMs: 30_000 });
    const older = await make(tenantId, "failed", { ageMs: 20_000 });
    const newest = await make(tenantId, "failed", { ageMs: 10_000 });
    await make(tenantId, "failed", { ageMs: 40_000, namespace: "elsewhere" });
    const filter = { namespace: "default" };
    expect(await run(tenantId, { action: "retry", filter, limit: 2, dryRun: true })).toEqual({ matched: 2, applied: 0, skipped: 0, failed: 0, dryRun: true });
    expect((await stateOf(oldest)).state).toBe("failed");
    expect(await run(tenantId, { action: "retry", filter, limit: 2 })).toEqual({ matched: 2, applied: 2, skipped: 0, failed: 0, dryRun: false });
    expect([(await stateOf(oldest)).state, (await stateOf(older)).state, (await stateOf(newest)).state]).toEqual(["scheduled", "scheduled", "failed"]);
  });

  it("counts a batch the database refuses as failed, changing nothing of it", async () => {
    const tenantId = newTenant();
    const ids = [await make(tenantId, "running"), await make(tenantId, "running")];
    // A refusal inside the batch's transaction, as a statement timeout would be.
    await db.sql.query(`CREATE FUNCTION refuse_signal() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                          IF NEW.tenant_id = '${tenantId}' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`);
    await db.sql.query("CREATE TRIGGER refuse_signal BEFORE INSERT ON signals FOR EACH ROW EXECUTE FUNCTION refuse_signal()");
    try {
      expect(await run(tenantId, { action: "cancel" })).toEqual({ matched: 2, applied: 0, skipped: 0, failed: 2, dryRun: false });
    } finally {
      await db.sql.query("DROP TRIGGER refuse_signal ON signals");
      await db.sql.query("DROP FUNCTION refuse_signal()");
    }
    for (const id of ids) expect(await signalsOf(id)).toEqual([]);
  });

  it("matches nothing for a tenant without instances", async () => {
    expect(await run(newTenant(), { action: "cancel" })).toEqual({ matched: 0, applied: 0, skipped: 0, failed: 0, dryRun: false });
  });

  it(`applies selections larger than one batch (${BATCH_SIZE})`, async () => {
    const tenantId = newTenant();
    await db.sql.query(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at)
       SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), 'scheduled', now() + interval '1 hour' FROM generate_series(1, $2)`,
      [tenantId, BATCH_SIZE + 300],
    );
    expect(await run(tenantId, { action: "pause", limit: 5000 })).toEqual({ matched: BATCH_SIZE + 300, applied: BATCH_SIZE + 300, skipped: 0, failed: 0, dryRun: false });
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE tenant_id = $1 AND signal_type = 'pause'", [tenantId]);
    expect(rows[0].n).toBe(BATCH_SIZE + 300);
  });
});
