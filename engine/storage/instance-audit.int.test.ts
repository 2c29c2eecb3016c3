// The audit log (wire-format P) and the change feed over it (S) on a real PostgreSQL: which
// changes write entries, the feed's order, cursor and paging rules, tenant scoping, and that a
// page never steps past an entry still to commit.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { runBatchAction } from "./batch-actions.ts";
import { bulkSetState } from "./bulk.ts";
import { claimDueInstances } from "./claim.ts";
import { commitProgress } from "./execution.ts";
import { asTenantId, type TenantId } from "./ids.ts";
import { decodeChangeCursor, encodeChangeCursor, listInstanceAudit, readChanges, type AuditEntry } from "./instance-audit.ts";
import { patchInstanceState } from "./instance-state.ts";

let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await freshDatabase();
  pool = testPool(db.url, 6);
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

let tenants = 0;
const newTenant = () => asTenantId(`audit-${++tenants}`);

async function instances(tenantId: TenantId, count: number): Promise<string[]> {
  const sequenceId = await insertSequence(db, tenantId, [{ type: "step", id: "a", handler: "noop" }]);
  return insertInstancesOf(db, tenantId, sequenceId, count);
}

/** Claims the tenant's due instances as an engine does; their lease epochs by id. */
async function claim(tenantId: TenantId): Promise<Map<string, number>> {
  const claimed = await claimDueInstances(pool, { now: new Date(Date.now() + 1000), limit: 100, maxPerTenant: 0, leaseOwner: "e", leaseMs: 30_000, onlyTenants: [tenantId] });
  return new Map(claimed.map((c) => [c.id, c.leaseEpoch]));
}

const commit = (tenantId: TenantId, id: string, leaseEpoch: number, state: "completed" | "waiting" | "failed") =>
  commitProgress(pool, { instanceId: id, tenantId, leaseEpoch, state, cursor: null });

const transitions = (entries: AuditEntry[]) => entries.map((e) => `${e.event_type}:${e.from_state ?? ""}>${e.to_state ?? ""}`);

describe("the audit log", () => {
  it("records the engine's transitions but not the claim, newest first", async () => {
    const tenantId = newTenant();
    const [id] = (await instances(tenantId, 1)) as [string];
    const epoch = (await claim(tenantId)).get(id)!;
    expect(await listInstanceAudit(pool, tenantId, id)).toEqual([]);
    expect(await commit(tenantId, id, epoch, "completed")).toBe(true);
    const entries = await listInstanceAudit(pool, tenantId, id);
    expect(transitions(entries)).toEqual(["state_transition:running>completed"]);
    expect(entries[0]).toMatchObject({ instance_id: id, tenant_id: tenantId, details: null });
    expect(entries[0]).not.toHaveProperty("block_id");
    expect(entries[0]!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it("writes nothing for PATCH state and bulk state, one batch_action entry per instance a batch action applied to", async () => {
    const tenantId = newTenant();
    const [a, b, c] = (await instances(tenantId, 3)) as [string, string, string];
    await patchInstanceState(pool, tenantId, a, "paused");
    expect(await bulkSetState(db.storage.backends.primary.forTenant(tenantId), tenantId, { states: ["scheduled"] }, "cancelled")).toBe(2);
    for (const id of [a, b, c]) expect(await listInstanceAudit(pool, tenantId, id)).toEqual([]);

    const result = await runBatchAction(db.storage.backends.primary.forTenant(tenantId), tenantId, {
      filter: { states: ["paused"] }, action: "resume", dryRun: false, limit: 10,
    });
    expect(result).toMatchObject({ applied: 1 });
    const entries = await listInstanceAudit(pool, tenantId, a);
    // The resume signal wakes the paused instance (a transition), and the action is recorded.
    expect(transitions(entries).sort()).toEqual(["batch_action:>", "state_transition:paused>scheduled"]);
    expect(entries.find((e) => e.event_type === "batch_action")!.details).toEqual({ action: "resume" });
  });
});

describe("the change feed", () => {
  it("pages the tenant's entries oldest first, with an exclusive cursor, has_more and next_cursor", async () => {
    const tenantId = newTenant();
    const other = newTenant();
    const ids = await instances(tenantId, 5);
    await instances(other, 2);
    const epochs = await claim(tenantId);
    for (const id of ids) await commit(tenantId, id, epochs.get(id)!, "completed");
    for (const [id, epoch] of await claim(other)) await commit(other, id, epoch, "failed");

    const first = await readChanges(pool, tenantId, null, 2);
    expect(first.changes.map((e) => e.instance_id)).toEqual(ids.slice(0, 2));
    expect(first.hasMore).toBe(true);
    const second = await readChanges(pool, tenantId, first.nextCursor, 2);
    expect(second.changes.map((e) => e.instance_id)).toEqual(ids.slice(2, 4));
    const last = await readChanges(pool, tenantId, second.nextCursor, 2);
    expect(last.changes.map((e) => e.instance_id)).toEqual(ids.slice(4));
    expect(last).toMatchObject({ hasMore: false });
    expect(last.nextCursor).not.toBeNull(); // present on the last page too
    const after = await readChanges(pool, tenantId, last.nextCursor, 2);
    expect(after).toEqual({ changes: [], nextCursor: null, hasMore: false });
    // Never another tenant's entries, and its cursor only positions within this tenant's feed.
    const whole = await readChanges(pool, tenantId, null, 500);
    expect(whole.changes.every((e) => e.tenant_id === tenantId)).toBe(true);
    const theirs = await readChanges(pool, other, null, 500);
    expect((await readChanges(pool, tenantId, theirs.nextCursor, 500)).changes.every((e) => e.tenant_id === tenantId)).toBe(true);
  });

  it("honours crafted cursors and refuses what does not decode", async () => {
    const tenantId = newTenant();
    const [id] = (await instances(tenantId, 1)) as [string];
    await commit(tenantId, id, (await claim(tenantId)).get(id)!, "completed");
    const crafted = (createdAt: string, cursorId = "00000000-0000-0000-0000-000000000000") => decodeChangeCursor(encodeChangeCursor({ createdAt, id: cursorId }));
    expect((await readChanges(pool, tenantId, crafted("2999-01-01T00:00:00Z"), 10)).changes).toEqual([]);
    expect((await readChanges(pool, tenantId, crafted("1970-01-01T00:00:00Z"), 10)).changes).toHaveLength(1);
    expect(decodeChangeCursor(encodeChangeCursor({ createdAt: "2026-01-01T00:00:00.123456Z", id }))).toEqual({ createdAt: "2026-01-01T00:00:00.123456Z", id });
    for (const bad of ["%%%", "bm90IGpzb24", Buffer.from('{"created_at":"yesterday","id":"x"}').toString("base64url"), Buffer.from("[]").toString("base64url")]) {
      expect(() => decodeChangeCursor(bad), bad).toThrow(expect.objectContaining({ code: "invalid_argument", message: "malformed change cursor" }));
    }
  });

  it("does not step past an entry whose transaction has not committed yet", async () => {
    const tenantId = newTenant();
    const [early, late] = (await instances(tenantId, 2)) as [string, string];
    const epochs = await claim(tenantId);
    const writer = await pool.connect();
    try {
      // The early entry is written first and commits last.
      await writer.query("BEGIN");
      await writer.query("UPDATE task_instances SET state = 'scheduled' WHERE id = $1", [early]);
      await commit(tenantId, late, epochs.get(late)!, "completed");
      const held = await readChanges(pool, tenantId, null, 10);
      expect(held.changes).toEqual([]);
      await writer.query("COMMIT");
    } finally {
      writer.release();
    }
    const page = await readChanges(pool, tenantId, null, 10);
    expect(page.changes.map((e) => [e.instance_id, e.to_state])).toEqual([[early, "scheduled"], [late, "completed"]]);
  });
});
