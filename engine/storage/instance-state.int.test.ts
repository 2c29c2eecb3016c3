// API state changes (wire-format F.2, E.10, E.11, E.14): every row of the transition table,
// due times, the lease fencing of a running instance, context replacement and retry.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { AppError } from "../errors.ts";
import { claimDueInstances } from "./claim.ts";
import { commitProgress } from "./execution.ts";
import { canTransition, patchInstanceState, replaceInstanceContext, TRANSITIONS } from "./instance-state.ts";
import { retryInstance } from "./rerun.ts";
import { INSTANCE_STATES, type InstanceState } from "./instances.ts";
import { reapExpiredLeases, renewLease } from "./leases.ts";
import { enqueueSignalIfActive } from "./signals.ts";
import { asTenantId } from "./index.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const TENANT = "acme";
const TERMINAL = ["completed", "failed", "cancelled"];
const HOUR = 3_600_000;

interface Row {
  state: InstanceState;
  next_fire_at: Date | null;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  lease_epoch: number;
  completed_at: Date | null;
  defer_reason: string | null;
  context: unknown;
}

/** An instance in `state`, as the engine would have left it (a running one holds a live lease at epoch 3). */
async function instanceIn(state: InstanceState, tenantId = TENANT, parentId: string | null = null): Promise<string> {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at, defer_reason,
                                 lease_owner, lease_expires_at, lease_epoch, completed_at, parent_instance_id, context)
     VALUES (gen_random_uuid(), $1, 'default', gen_random_uuid(), $2::text,
             CASE WHEN $2 = 'scheduled' THEN now() + interval '1 hour' END,
             CASE WHEN $2 = 'scheduled' THEN 'rate_limit' END,
             CASE WHEN $2 = 'running' THEN 'engine-a' END,
             CASE WHEN $2 = 'running' THEN now() + interval '30 seconds' END,
             3,
             CASE WHEN $2 IN ('completed', 'failed', 'cancelled') THEN now() - interval '1 minute' END,
             $3, '{"data": {"kept": true}}')
     RETURNING id`,
    [tenantId, state, parentId],
  );
  return rows[0]!.id;
}

async function row(id: string): Promise<Row> {
  const { rows } = await db.sql.query<Row>(
    `SELECT state, next_fire_at, lease_owner, lease_expires_at, lease_epoch, completed_at, defer_reason, context
       FROM task_instances WHERE id = $1`,
    [id],
  );
  return rows[0]!;
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AppError);
  const { code, message } = error as AppError;
  return { code, message };
}

const near = (date: Date | null, to = Date.now()) => date !== null && Math.abs(date.getTime() - to) < 5_000;

describe("the F.2 table", () => {
  // Written out again from the spec, so a typo in TRANSITIONS cannot agree with itself.
  const SPEC: Record<InstanceState, InstanceState[]> = {
    scheduled: ["running", "paused", "cancelled"],
    running: ["scheduled", "waiting", "completed", "failed", "paused", "cancelled"],
    waiting: ["running", "scheduled", "cancelled", "failed"],
    paused: ["scheduled", "cancelled"],
    failed: ["scheduled"],
    completed: ["scheduled"],
    cancelled: ["scheduled"],
  };

  it("is the spec's table, for every pair of states", () => {
    for (const from of INSTANCE_STATES) {
      expect([...TRANSITIONS[from]].sort(), from).toEqual([...SPEC[from]].sort());
      for (const to of INSTANCE_STATES) expect(canTransition(from, to), `${from} → ${to}`).toBe(SPEC[from].includes(to));
    }
  });

  const pairs = INSTANCE_STATES.flatMap((from) => INSTANCE_STATES.map((to) => [from, to, SPEC[from].includes(to)] as const));
  const allowed = pairs.filter(([, , ok]) => ok).map(([from, to]) => [from, to] as const);
  const refused = pairs.filter(([, , ok]) => !ok).map(([from, to]) => [from, to] as const);

  it.each(allowed)("PATCH %s → %s is applied", async (from, to) => {
    const id = await instanceIn(from);
    const before = await row(id);
    await patchInstanceState(db.sql, asTenantId(TENANT), id, to);
    const after = await row(id);
    expect(after.state).toBe(to);
    expect(after.defer_reason).toBeNull();
    expect(after.context).toEqual(before.context);
    // Due now when scheduled, no due time otherwise.
    if (to === "scheduled") expect(near(after.next_fire_at)).toBe(true);
    else expect(after.next_fire_at).toBeNull();
    // Finished now when terminal; a terminal instance brought back is no longer finished.
    if (TERMINAL.includes(to)) expect(near(after.completed_at)).toBe(true);
    else expect(after.completed_at).toBeNull();
    // Leaving or entering running moves the epoch on; nothing else touches it.
    const fenced = from === "running" || to === "running";
    expect(after.lease_epoch).toBe(before.lease_epoch + (fenced ? 1 : 0));
    expect(after.lease_owner).toBeNull();
    if (to === "running") expect(after.lease_expires_at!.getTime()).toBeLessThanOrEqual(Date.now());
    else expect(after.lease_expires_at).toBeNull();
  });

  it.each(refused)("PATCH %s → %s is refused with 400 and changes nothing", async (from, to) => {
    const id = await instanceIn(from);
    const before = await row(id);
    expect(await refusal(patchInstanceState(db.sql, asTenantId(TENANT), id, to))).toEqual({
      code: "invalid_argument",
      message: `cannot transition from ${from} to ${to}`,
    });
    expect(await row(id)).toEqual(before);
  });
});

describe("patchInstanceState", () => {
  it("makes a scheduled target due at the time given", async () => {
    const id = await instanceIn("paused");
    const at = new Date(Date.now() + 2 * HOUR);
    await patchInstanceState(db.sql, asTenantId(TENANT), id, "scheduled", at);
    expect((await row(id)).next_fire_at).toEqual(at);
  });

  it("fences out the engine holding a running instance: its later writes under the old epoch are refused", async () => {
    const tenantId = `t-${randomUUID()}`;
    const id = await instanceIn("scheduled", tenantId);
    await db.sql.query("UPDATE task_instances SET next_fire_at = now() - interval '1 second' WHERE id = $1", [id]);
    const claims = await claimDueInstances(db.sql, { now: new Date(), limit: 1000, maxPerTenant: 0, leaseOwner: "engine-a", leaseMs: 30_000 });
    const claim = claims.find((c) => c.id === id);
    expect(claim).toMatchObject({ id, tenantId });

    await patchInstanceState(db.sql, asTenantId(tenantId), id, "paused");
    const paused = await row(id);
    expect(paused).toMatchObject({ state: "paused", lease_owner: null, lease_expires_at: null, lease_epoch: claim!.leaseEpoch + 1 });

    const late = { instanceId: id, tenantId: asTenantId(tenantId), leaseEpoch: claim!.leaseEpoch, state: "completed" as const, cursor: { done: true } };
    expect(await commitProgress(db.sql, late)).toBe(false);
    expect(await renewLease(db.sql, id, claim!.leaseEpoch, new Date(Date.now() + 60_000))).toBe(false);
    expect(await row(id)).toEqual(paused);
  });

  it("hands an instance moved into running to the reaper, so the next claim runs it", async () => {
    const tenantId = `t-${randomUUID()}`;
    const id = await instanceIn("waiting", tenantId);
    await patchInstanceState(db.sql, asTenantId(tenantId), id, "running");
    expect(await reapExpiredLeases(db.sql, new Date(Date.now() + 1), 1000)).toBeGreaterThanOrEqual(1);
    expect((await row(id)).state).toBe("scheduled");
    const claimed = await claimDueInstances(db.sql, { now: new Date(Date.now() + 1), limit: 1000, maxPerTenant: 0, leaseOwner: "b", leaseMs: 30_000 });
    expect(claimed.map((c) => c.id)).toContain(id);
  });

  it("wakes a waiting parent when it ends a child, and only a waiting one", async () => {
    for (const [parentState, woken] of [["waiting", true], ["running", false], ["paused", false]] as const) {
      const parent = await instanceIn(parentState);
      const child = await instanceIn("running", TENANT, parent);
      await patchInstanceState(db.sql, asTenantId(TENANT), child, "cancelled");
      const after = await row(parent);
      expect(after.state, parentState).toBe(woken ? "scheduled" : parentState);
      if (woken) expect(near(after.next_fire_at)).toBe(true);
    }
    // A child brought back to scheduled is not an end.
    const parent = await instanceIn("waiting");
    await patchInstanceState(db.sql, asTenantId(TENANT), await instanceIn("waiting", TENANT, parent), "scheduled");
    expect((await row(parent)).state).toBe("waiting");
  });

  it("takes the signals still queued when it ends an instance: none is left undelivered on it", async () => {
    const id = await instanceIn("waiting");
    await enqueueSignalIfActive(db.sql, asTenantId(TENANT), id, { type: { custom: "late" }, payload: null });
    await enqueueSignalIfActive(db.sql, asTenantId(TENANT), id, { type: "update_context", payload: { data: { added: 1 } } });
    await patchInstanceState(db.sql, asTenantId(TENANT), id, "cancelled");
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1 AND NOT delivered", [id]);
    expect(rows[0].n).toBe(0);
    expect((await row(id)).context).toEqual({ data: { kept: true, added: 1 } });
  });

  it("answers a missing and a foreign instance with the same not found, and changes neither", async () => {
    const foreign = await instanceIn("running", "globex");
    const before = await row(foreign);
    const missing = await refusal(patchInstanceState(db.sql, asTenantId(TENANT), randomUUID(), "cancelled"));
    expect(missing).toEqual({ code: "not_found", message: "instance not found" });
    expect(await refusal(patchInstanceState(db.sql, asTenantId(TENANT), foreign, "cancelled"))).toEqual(missing);
    expect(await row(foreign)).toEqual(before);
  });
});

describe("replaceInstanceContext", () => {
  it("replaces the whole context, in any state", async () => {
    for (const state of INSTANCE_STATES) {
      const id = await instanceIn(state);
      const context = { data: { fresh: state }, config: null, audit: [], runtime: { attempt: 0 } };
      await replaceInstanceContext(db.sql, asTenantId(TENANT), id, context);
      expect((await row(id)).context).toEqual(context);
    }
  });

  it("answers a missing and a foreign instance with the same not found, and leaves the foreign one alone", async () => {
    const foreign = await instanceIn("scheduled", "globex");
    const missing = await refusal(replaceInstanceContext(db.sql, asTenantId(TENANT), randomUUID(), { data: 1 }));
    expect(missing).toEqual({ code: "not_found", message: "instance not found" });
    expect(await refusal(replaceInstanceContext(db.sql, asTenantId(TENANT), foreign, { data: 1 }))).toEqual(missing);
    expect((await row(foreign)).context).toEqual({ data: { kept: true } });
  });

  it("refuses text PostgreSQL cannot store with 400, not 500", async () => {
    const id = await instanceIn("scheduled");
    expect((await refusal(replaceInstanceContext(db.sql, asTenantId(TENANT), id, { data: "a\u0000b" }))).code).toBe("invalid_argument");
  });
});

describe("retryInstance", () => {
  it("brings a failed instance back as scheduled, due now, no longer finished", async () => {
    const id = await instanceIn("failed");
    expect(await retryInstance(db.sql, asTenantId(TENANT), id)).toEqual({ id, state: "scheduled" });
    const after = await row(id);
    expect(after).toMatchObject({ state: "scheduled", completed_at: null, lease_owner: null });
    expect(near(after.next_fire_at)).toBe(true);
  });

  it.each(INSTANCE_STATES.filter((state) => state !== "failed"))("refuses a %s instance with 400 and changes nothing", async (state) => {
    const id = await instanceIn(state);
    const before = await row(id);
    expect(await refusal(retryInstance(db.sql, asTenantId(TENANT), id))).toEqual({
      code: "invalid_argument",
      message: `can only retry failed instances, current state: ${state}`,
    });
    expect(await row(id)).toEqual(before);
  });

  it("answers a missing and a foreign failed instance with the same not found", async () => {
    const foreign = await instanceIn("failed", "globex");
    const missing = await refusal(retryInstance(db.sql, asTenantId(TENANT), randomUUID()));
    expect(missing).toEqual({ code: "not_found", message: "instance not found" });
    expect(await refusal(retryInstance(db.sql, asTenantId(TENANT), foreign))).toEqual(missing);
    expect((await row(foreign)).state).toBe("failed");
  });
});
