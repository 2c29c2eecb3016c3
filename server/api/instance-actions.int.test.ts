// The DLQ and bulk actions of the web app (tRPC instances.deadLetters, retry, resumeFrom,
// bulkSetState, bulkReschedule, batchAction) against a real PostgreSQL: members read the DLQ,
// admins act, every action leaves an audit line naming its filter and count, unknown filter keys
// are refused, and a tenant being moved takes no writes.
import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenant: string;
let admin: { id: string; email: string };
let member: { id: string; email: string };
let sequenceId: string;
beforeAll(async () => {
  db = await freshDatabase();
  tenant = (await makeTenant(db)).id;
  admin = await makeUser(db, { memberOf: [[tenant, "admin"]] });
  member = await makeUser(db, { memberOf: [[tenant, "member"]] });
  sequenceId = await insertSequence(db, tenant, [{ type: "step", id: "a", handler: "noop" }, { type: "step", id: "b", handler: "noop" }]);
});
afterAll(() => db.drop());

const as = (user: { id: string }) => createCaller(createContext(db, user.id));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

async function instanceIn(state: string, options: { namespace?: string; ageMs?: number } = {}) {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, updated_at)
     VALUES (gen_random_uuid(), $1, $2, $3, $4::text, CASE WHEN $4 = 'scheduled' THEN now() + interval '1 hour' END, now() - $5 * interval '1 millisecond')
     RETURNING id`,
    [tenant, options.namespace ?? "default", sequenceId, state, options.ageMs ?? 0],
  );
  return rows[0]!.id;
}

const stateOf = async (id: string) => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state;
const lastAudit = async (action: string) =>
  (await db.sql.query("SELECT actor, actor_user_id, details FROM audit_log WHERE tenant_id = $1 AND action = $2 ORDER BY id DESC LIMIT 1", [tenant, action])).rows[0];

describe("instances.deadLetters", () => {
  it("lists the failed instances, most recently updated first, to any member, filtered by namespace and sequence", async () => {
    const older = await instanceIn("failed", { namespace: "dlq", ageMs: 5_000 });
    const newer = await instanceIn("failed", { namespace: "dlq", ageMs: 1_000 });
    await instanceIn("cancelled", { namespace: "dlq" });
    const page = await as(member).instances.deadLetters({ tenantId: tenant, namespace: "dlq", sequenceId });
    expect(page.map((row) => row.id)).toEqual([newer, older]);
    expect(await as(member).instances.deadLetters({ tenantId: tenant, namespace: "dlq", sequenceId: randomUUID() })).toEqual([]);
    expect((await trpcError(as(member).instances.deadLetters({ tenantId: tenant, limit: 1001 }))).code).toBe("BAD_REQUEST");
  });
});

describe("retry and resumeFrom", () => {
  it("re-run an instance for an admin, each with an audit line", async () => {
    const failed = await instanceIn("failed");
    expect(await as(admin).instances.retry({ tenantId: tenant, instanceId: failed.toUpperCase() })).toEqual({ id: failed, state: "scheduled" });
    expect(await lastAudit("instance.retry")).toEqual({ actor: admin.email, actor_user_id: admin.id, details: { instance_id: failed, count: 1 } });

    const completed = await instanceIn("completed");
    const resumed = await as(admin).instances.resumeFrom({ tenantId: tenant, instanceId: completed, blockId: "b", context: { k: 1 }, signals: [{ type: "pause" }] });
    expect(resumed).toEqual({ id: completed, state: "scheduled", resumedFrom: "b", outputsDeleted: 0, signalsEnqueued: 1 });
    expect((await lastAudit("instance.resume_from")).details).toEqual({ instance_id: completed, block_id: "b", count: 1, outputs_deleted: 0, signals_enqueued: 1 });
  });

  it("refuse what the REST routes refuse, as BAD_REQUEST, and a missing instance as NOT_FOUND", async () => {
    const running = await instanceIn("running");
    expect(await trpcError(as(admin).instances.retry({ tenantId: tenant, instanceId: running }))).toMatchObject({
      code: "BAD_REQUEST", message: "can only retry failed instances, current state: running",
    });
    expect((await trpcError(as(admin).instances.resumeFrom({ tenantId: tenant, instanceId: running, blockId: "a" }))).code).toBe("BAD_REQUEST");
    expect((await trpcError(as(admin).instances.retry({ tenantId: tenant, instanceId: randomUUID() }))).code).toBe("NOT_FOUND");
    expect((await trpcError(as(admin).instances.retry({ tenantId: tenant, instanceId: "not-an-id" }))).code).toBe("NOT_FOUND");
  });
});

describe("bulk actions", () => {
  it("bulkSetState and bulkReschedule answer the count and record the filter with it", async () => {
    const ns = `bulk-${randomUUID().slice(0, 6)}`;
    const scheduled = await instanceIn("scheduled", { namespace: ns });
    const done = await instanceIn("completed", { namespace: ns });
    expect(await as(admin).instances.bulkReschedule({ tenantId: tenant, filter: { namespace: ns }, offsetSecs: 30 })).toEqual({ count: 1 });
    expect((await lastAudit("instances.bulk_reschedule")).details).toEqual({ filter: { namespace: ns }, offset_secs: 30, count: 1 });
    expect(await as(admin).instances.bulkSetState({ tenantId: tenant, filter: { namespace: ns }, state: "cancelled" })).toEqual({ count: 1 });
    expect([await stateOf(scheduled), await stateOf(done)]).toEqual(["cancelled", "completed"]);
    expect(await lastAudit("instances.bulk_state")).toEqual({
      actor: admin.email, actor_user_id: admin.id, details: { filter: { namespace: ns }, state: "cancelled", count: 1 },
    });
  });

  it("batchAction applies, skips and counts; a dry run records nothing", async () => {
    const ns = `batch-${randomUUID().slice(0, 6)}`;
    const failed = await instanceIn("failed", { namespace: ns });
    await instanceIn("completed", { namespace: ns });
    const before = await lastAudit("instances.batch_action");
    expect(await as(admin).instances.batchAction({ tenantId: tenant, filter: { namespace: ns }, action: "retry", dryRun: true })).toEqual({
      matched: 2, applied: 0, skipped: 0, failed: 0, dryRun: true,
    });
    expect(await lastAudit("instances.batch_action")).toEqual(before);
    expect(await as(admin).instances.batchAction({ tenantId: tenant, filter: { namespace: ns }, action: "retry" })).toEqual({
      matched: 2, applied: 1, skipped: 1, failed: 0, dryRun: false,
    });
    expect(await stateOf(failed)).toBe("scheduled");
    expect((await lastAudit("instances.batch_action")).details).toEqual({
      filter: { namespace: ns }, action: "retry", limit: 1000, count: 1, matched: 2, skipped: 1, failed: 0,
    });
  });

  it("refuses an unknown filter key and an offset beyond a year as BAD_REQUEST", async () => {
    // Called one at a time: a refusal made before it is awaited would be an unhandled rejection.
    const refusals = [
      () => as(admin).instances.bulkSetState({ tenantId: tenant, filter: { priority: 3 } as never, state: "paused" }),
      () => as(admin).instances.bulkReschedule({ tenantId: tenant, filter: {}, offsetSecs: 31_536_001 }),
      () => as(admin).instances.batchAction({ tenantId: tenant, filter: {}, action: "signal" } as never),
    ];
    for (const refusal of refusals) expect((await trpcError(refusal())).code).toBe("BAD_REQUEST");
  });

  it("take no writes while the tenant is being moved", async () => {
    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [tenant]);
    try {
      expect((await trpcError(as(admin).instances.bulkSetState({ tenantId: tenant, filter: {}, state: "paused" }))).code).toBe("SERVICE_UNAVAILABLE");
      // Reads go on.
      expect(Array.isArray(await as(member).instances.deadLetters({ tenantId: tenant }))).toBe(true);
    } finally {
      await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = NULL WHERE tenant_id = $1", [tenant]);
    }
  });
});
