// Bulk operations over REST (wire-format K): PATCH /instances/bulk/state, PATCH
// /instances/bulk/reschedule, POST /instances/batch-action: counts, the filter (unknown keys
// refused), the F.2 skips, reschedule's reach, the batch action's limit, dry run and counts,
// audit lines, and the tenant rules (another tenant's filter → 404, operator keys name the tenant).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, expectSameReply, operatorKey, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let globex: { id: string; key: string };
beforeAll(async () => {
  db = await freshDatabase();
  globex = await tenantWithKey(db);
});
afterAll(() => db.drop());

const PLAIN = "text/plain; charset=utf-8";

/** An instance of the tenant in `state`, last updated `ageMs` ago. */
async function instanceIn(tenantId: string, state: string, options: { namespace?: string; metadata?: unknown; ageMs?: number; nextFireAt?: Date } = {}) {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, metadata, updated_at)
     VALUES (gen_random_uuid(), $1, $2, gen_random_uuid(), $3::text,
             CASE WHEN $3 = 'scheduled' THEN COALESCE($6::timestamptz, now() + interval '1 hour') END, $4, now() - $5 * interval '1 millisecond')
     RETURNING id`,
    [tenantId, options.namespace ?? "default", state, options.metadata === undefined ? null : JSON.stringify(options.metadata), options.ageMs ?? 0, options.nextFireAt ?? null],
  );
  return rows[0]!.id;
}

const stateOf = async (id: string) => (await db.sql.query("SELECT state, next_fire_at FROM task_instances WHERE id = $1", [id])).rows[0];
const audit = async (tenantId: string, action: string) =>
  (await db.sql.query("SELECT actor, details FROM audit_log WHERE tenant_id = $1 AND action = $2 ORDER BY id", [tenantId, action])).rows;
const bulkState = (tenant: { key: string }, body: unknown, headers: Record<string, string> = {}) =>
  call(db, "PATCH", "/instances/bulk/state", { key: tenant.key, body, headers });
const reschedule = (tenant: { key: string }, body: unknown) => call(db, "PATCH", "/instances/bulk/reschedule", { key: tenant.key, body });
const batch = (tenant: { key: string }, body: unknown) => call(db, "POST", "/instances/batch-action", { key: tenant.key, body });

describe("PATCH /instances/bulk/state", () => {
  it("changes the instances F.2 allows, skipping and not counting the others, and records the filter and the count", async () => {
    const tenant = await tenantWithKey(db);
    const scheduled = await instanceIn(tenant.id, "scheduled", { metadata: { batch: "7" } });
    const running = await instanceIn(tenant.id, "running", { metadata: { batch: "7" } });
    const completed = await instanceIn(tenant.id, "completed", { metadata: { batch: "7" } });
    const otherBatch = await instanceIn(tenant.id, "scheduled", { metadata: { batch: "8" } });
    const reply = await bulkState(tenant, { filter: { tenant_id: tenant.id, metadata: { batch: "7" } }, state: "paused" });
    expect({ status: reply.status, text: reply.text }).toEqual({ status: 200, text: '{"count":2}' });
    expect([(await stateOf(scheduled)).state, (await stateOf(running)).state, (await stateOf(completed)).state, (await stateOf(otherBatch)).state]).toEqual([
      "paused", "paused", "completed", "scheduled",
    ]);
    expect(await audit(tenant.id, "instances.bulk_state")).toEqual([
      { actor: expect.stringMatching(/^bh_/), details: { filter: { metadata: { batch: "7" } }, state: "paused", count: 2 } },
    ]);
  });

  it("is 200 {\"count\":0} when nothing matches, and for a tenant with no instances", async () => {
    const tenant = await tenantWithKey(db);
    expect((await bulkState(tenant, { filter: {}, state: "cancelled" })).text).toBe('{"count":0}');
    await instanceIn(tenant.id, "completed");
    expect((await bulkState(tenant, { filter: { states: ["completed"] }, state: "paused" })).text).toBe('{"count":0}');
    expect((await bulkState(tenant, { filter: { namespace: "nowhere", tenant_id: " " }, state: "cancelled" })).text).toBe('{"count":0}');
  });

  it("refuses an unknown filter key with 400 naming it, an unknown state with a plain-text 422", async () => {
    const tenant = await tenantWithKey(db);
    const id = await instanceIn(tenant.id, "scheduled");
    const unknown = await bulkState(tenant, { filter: { namespace: "default", priority: "High" }, state: "paused" });
    expect({ status: unknown.status, body: unknown.json() }).toEqual({ status: 400, body: { error: "invalid argument: unsupported filter field: priority" } });
    const badState = await bulkState(tenant, { filter: {}, state: "asleep" });
    expect({ status: badState.status, type: badState.contentType }).toEqual({ status: 422, type: PLAIN });
    const badSequence = await bulkState(tenant, { filter: { sequence_id: "nope" }, state: "paused" });
    expect(badSequence.status).toBe(422);
    expect((await stateOf(id)).state).toBe("scheduled");
  });

  it("is routed before PATCH /instances/{id}/state", async () => {
    const tenant = await tenantWithKey(db);
    expect((await bulkState(tenant, { filter: {}, state: "paused" })).status).toBe(200);
  });

  it("answers a filter naming another tenant like a tenant that does not exist, changing nothing there", async () => {
    const tenant = await tenantWithKey(db);
    const theirs = await instanceIn(globex.id, "scheduled");
    const foreign = await bulkState(tenant, { filter: { tenant_id: globex.id }, state: "cancelled" });
    expect({ status: foreign.status, body: foreign.json() }).toEqual({ status: 404, body: { error: "not found: tenant not found" } });
    expectSameReply(foreign, await bulkState(tenant, { filter: { tenant_id: "no-such-tenant" }, state: "cancelled" }));
    expect((await stateOf(theirs)).state).toBe("scheduled");
  });

  it("wants X-Tenant-Id from an operator key, and then acts for that tenant only", async () => {
    const key = await operatorKey(db);
    const tenant = await tenantWithKey(db);
    const mine = await instanceIn(tenant.id, "scheduled");
    const theirs = await instanceIn(globex.id, "scheduled", { namespace: "op-test" });
    const refused = await call(db, "PATCH", "/instances/bulk/state", { key, body: { filter: { tenant_id: tenant.id }, state: "paused" } });
    expect({ status: refused.status, body: refused.json() }).toEqual({ status: 400, body: { error: "invalid argument: X-Tenant-Id header is required" } });
    const served = await call(db, "PATCH", "/instances/bulk/state", { key, body: { filter: {}, state: "paused" }, headers: { "x-tenant-id": tenant.id } });
    expect(served.text).toBe('{"count":1}');
    expect([(await stateOf(mine)).state, (await stateOf(theirs)).state]).toEqual(["paused", "scheduled"]);
  });
});

describe("PATCH /instances/bulk/reschedule", () => {
  it("shifts only scheduled instances by offset_secs and counts them", async () => {
    const tenant = await tenantWithKey(db);
    const at = new Date(Date.now() + 3_600_000);
    const scheduled = await instanceIn(tenant.id, "scheduled", { nextFireAt: at });
    const paused = await instanceIn(tenant.id, "paused");
    const reply = await reschedule(tenant, { filter: {}, offset_secs: -60 });
    expect({ status: reply.status, text: reply.text }).toEqual({ status: 200, text: '{"count":1}' });
    expect((await stateOf(scheduled)).next_fire_at).toEqual(new Date(at.getTime() - 60_000));
    expect((await stateOf(paused)).next_fire_at).toBeNull();
    expect((await reschedule(tenant, { filter: { states: ["paused"] }, offset_secs: 60 })).text).toBe('{"count":0}');
    expect(await audit(tenant.id, "instances.bulk_reschedule")).toEqual([
      { actor: expect.stringMatching(/^bh_/), details: { filter: {}, offset_secs: -60, count: 1 } },
      { actor: expect.stringMatching(/^bh_/), details: { filter: { states: ["paused"] }, offset_secs: 60, count: 0 } },
    ]);
  });

  it("refuses an offset beyond a year either way with 400; a year is fine; a fraction is a 422", async () => {
    const tenant = await tenantWithKey(db);
    for (const offset of [31_536_001, -31_536_001]) {
      const reply = await reschedule(tenant, { filter: {}, offset_secs: offset });
      expect({ status: reply.status, body: reply.json() }).toEqual({ status: 400, body: { error: "invalid argument: offset_secs must be within ±31536000" } });
    }
    expect((await reschedule(tenant, { filter: {}, offset_secs: -31_536_000 })).status).toBe(200);
    expect((await reschedule(tenant, { filter: {}, offset_secs: 1.5 })).status).toBe(422);
  });
});

describe("POST /instances/batch-action", () => {
  it("answers matched, applied, skipped, failed and dry_run, in that order", async () => {
    const tenant = await tenantWithKey(db);
    const failed = await instanceIn(tenant.id, "failed", { ageMs: 3_000 });
    await instanceIn(tenant.id, "completed", { ageMs: 2_000 });
    const reply = await batch(tenant, { filter: {}, action: "retry" });
    expect({ status: reply.status, text: reply.text }).toEqual({ status: 200, text: '{"matched":2,"applied":1,"skipped":1,"failed":0,"dry_run":false}' });
    expect((await stateOf(failed)).state).toBe("scheduled");
    expect(await audit(tenant.id, "instances.batch_action")).toEqual([
      { actor: expect.stringMatching(/^bh_/), details: { filter: {}, action: "retry", limit: 1000, count: 1, matched: 2, skipped: 1, failed: 0 } },
    ]);
  });

  it("a dry run changes nothing, counts the selection, and records nothing", async () => {
    const tenant = await tenantWithKey(db);
    const id = await instanceIn(tenant.id, "running");
    const reply = await batch(tenant, { filter: {}, action: "cancel", dry_run: true });
    expect(reply.text).toBe('{"matched":1,"applied":0,"skipped":0,"failed":0,"dry_run":true}');
    expect((await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1", [id])).rows[0].n).toBe(0);
    expect(await audit(tenant.id, "instances.batch_action")).toEqual([]);
  });

  it("clamps the limit to 1..10000, taking the oldest updated first", async () => {
    const tenant = await tenantWithKey(db);
    const oldest = await instanceIn(tenant.id, "running", { ageMs: 9_000 });
    await instanceIn(tenant.id, "running", { ageMs: 1_000 });
    expect((await batch(tenant, { filter: {}, action: "pause", limit: 0 })).json()).toMatchObject({ matched: 1, applied: 1 });
    expect((await db.sql.query("SELECT instance_id FROM signals WHERE tenant_id = $1", [tenant.id])).rows).toEqual([{ instance_id: oldest }]);
    expect((await batch(tenant, { filter: {}, action: "pause", limit: 99_999, dry_run: true })).json()).toMatchObject({ matched: 2 });
    expect((await batch(tenant, { filter: {}, action: "pause", limit: -3, dry_run: true })).json()).toMatchObject({ matched: 1 });
  });

  it("signal: queues {custom: signal_type} with the payload; without signal_type a 400", async () => {
    const tenant = await tenantWithKey(db);
    const id = await instanceIn(tenant.id, "waiting");
    await instanceIn(tenant.id, "cancelled");
    const reply = await batch(tenant, { filter: {}, action: "signal", signal_type: "nudge", payload: { n: 1 } });
    expect(reply.json()).toEqual({ matched: 2, applied: 1, skipped: 1, failed: 0, dry_run: false });
    expect((await db.sql.query("SELECT signal_type, payload FROM signals WHERE instance_id = $1", [id])).rows).toEqual([{ signal_type: "custom:nudge", payload: { n: 1 } }]);
    for (const body of [{ filter: {}, action: "signal" }, { filter: {}, action: "signal", signal_type: "" }]) {
      const refused = await batch(tenant, body);
      expect({ status: refused.status, body: refused.json() }).toEqual({ status: 400, body: { error: "invalid argument: the `signal` action requires `signal_type`" } });
    }
  });

  it("422 in plain text for an unknown action; 400 for an unknown filter key; 404 for another tenant's filter", async () => {
    const tenant = await tenantWithKey(db);
    const unknown = await batch(tenant, { filter: {}, action: "delete" });
    expect({ status: unknown.status, type: unknown.contentType }).toEqual({ status: 422, type: PLAIN });
    expect((await batch(tenant, { filter: { context: {} }, action: "retry" })).json()).toEqual({ error: "invalid argument: unsupported filter field: context" });
    const foreign = await batch(tenant, { filter: { tenant_id: globex.id }, action: "cancel" });
    expect({ status: foreign.status, body: foreign.json() }).toEqual({ status: 404, body: { error: "not found: tenant not found" } });
  });

  it("wants X-Tenant-Id from an operator key", async () => {
    const key = await operatorKey(db);
    const refused = await call(db, "POST", "/instances/batch-action", { key, body: { filter: { tenant_id: globex.id }, action: "retry", dry_run: true } });
    expect(refused.json()).toEqual({ error: "invalid argument: X-Tenant-Id header is required" });
    const served = await call(db, "POST", "/instances/batch-action", {
      key, body: { filter: { tenant_id: globex.id }, action: "retry", dry_run: true }, headers: { "x-tenant-id": globex.id },
    });
    expect(served.status).toBe(200);
  });
});

describe("no cross-tenant bulk operation", () => {
  it("a random tenant's id in the filter answers like another tenant's", async () => {
    const tenant = await tenantWithKey(db);
    const random = `t-${randomUUID().slice(0, 8)}`;
    for (const [method, path, body] of [
      ["PATCH", "/instances/bulk/state", { state: "paused" }],
      ["PATCH", "/instances/bulk/reschedule", { offset_secs: 1 }],
      ["POST", "/instances/batch-action", { action: "cancel" }],
    ] as const) {
      const foreign = await call(db, method, path, { key: tenant.key, body: { ...body, filter: { tenant_id: globex.id } } });
      expectSameReply(foreign, await call(db, method, path, { key: tenant.key, body: { ...body, filter: { tenant_id: random } } }));
    }
  });
});
