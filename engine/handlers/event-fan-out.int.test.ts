// The event fan-out row of the resource ledger, through emit_event as the engine runs it, on a
// real PostgreSQL: a tenant emitting ten times the others' events is held at its own minute's
// bound (its step waits for the next minute) while the others' emits all land; one instance
// emitting without end fails at its own bound; and a refused emit writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { asTenantId, RunStore, type EventLimits } from "../storage/index.ts";
import { createEmitEvent } from "./emit-event.ts";
import { makeInput } from "./test-support.ts";

const PER_MINUTE = 5;
const LIMITS: EventLimits = { perParent: 1_000, perTenantPerMinute: PER_MINUTE };

let db: TestDatabase;
const parents: Record<string, string[]> = {};
beforeAll(async () => {
  db = await freshDatabase();
  for (const tenant of ["noisy", "quiet-1", "quiet-2"]) {
    const parent = await insertSequence(db, tenant, [{ type: "step", id: "emit", handler: "emit_event" }], "parent");
    await insertSequence(db, tenant, [{ type: "step", id: "x", handler: "noop" }], "child");
    parents[tenant] = await insertInstancesOf(db, tenant, parent, 10);
  }
});
afterAll(() => db.drop());

function emitAs(tenant: string, parent: string, limits: EventLimits | undefined, params: Record<string, unknown> = {}) {
  const store = new RunStore(db.storage.backends.primary, { id: parent, tenantId: asTenantId(tenant), leaseEpoch: 1, dueAt: new Date() });
  const waits: string[] = [];
  const handler = limits ? createEmitEvent(limits, (tenantId) => waits.push(tenantId)) : createEmitEvent({ perParent: 2_000_000_000, perTenantPerMinute: 2_000_000_000 });
  return handler(makeInput({ sequence_name: "child", ...params }, { tenantId: tenant, instanceId: parent, instances: store })).then((outcome) => ({ outcome, waits }));
}

/** The bound counts per clock minute: a test that must stay inside one starts clear of its end. */
async function clearOfMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

const childrenOf = async (tenant: string) =>
  (await db.sql.query("SELECT count(*)::int AS n FROM task_instances t JOIN sequences s ON s.id = t.sequence_id AND s.tenant_id = t.tenant_id WHERE t.tenant_id = $1 AND s.name = 'child'", [tenant])).rows[0].n;

describe("event fan-out", () => {
  it("a tenant emitting 10x the others' events gets its minute's bound and waits; the others' emits all land", async () => {
    await db.sql.query("DELETE FROM event_fan_out_minutes");
    await clearOfMinuteEnd();
    // Noisy: 50 emits (10 instances x 5) at once; each quiet tenant: 5, one per instance.
    const noisy = parents.noisy!.flatMap((parent) => Array.from({ length: 5 }, () => emitAs("noisy", parent, LIMITS)));
    const quiet = ["quiet-1", "quiet-2"].flatMap((tenant) => parents[tenant]!.slice(0, 5).map((parent) => emitAs(tenant, parent, LIMITS)));
    const [noisyResults, quietResults] = await Promise.all([Promise.all(noisy), Promise.all(quiet)]);

    expect(quietResults.map((r) => r.outcome.kind)).toEqual(Array(10).fill("success"));
    const kinds = noisyResults.map((r) => r.outcome.kind);
    expect(kinds.filter((k) => k === "success")).toHaveLength(PER_MINUTE);
    expect(kinds.filter((k) => k === "snooze")).toHaveLength(50 - PER_MINUTE);
    // It waits for the next clock minute, and the wait is counted for the operators' Resources page.
    const snoozed = noisyResults.find((r) => r.outcome.kind === "snooze")!;
    const until = (snoozed.outcome as { until: Date }).until;
    expect(until.getTime() % 60_000).toBe(0);
    expect(until.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
    expect(snoozed.waits).toEqual(["noisy"]);
    expect(await childrenOf("noisy")).toBe(PER_MINUTE);
  });

  it("with the per-tenant bound off, the same flood emits every child", async () => {
    await db.sql.query("DELETE FROM event_fan_out_minutes");
    const before = await childrenOf("noisy");
    const results = await Promise.all(parents.noisy!.flatMap((parent) => Array.from({ length: 5 }, () => emitAs("noisy", parent, undefined))));
    expect(results.every((r) => r.outcome.kind === "success")).toBe(true);
    expect((await childrenOf("noisy")) - before).toBe(50);
  });

  it("one instance past its children bound fails for good; a deduplicated emit takes nothing, and a refused one keeps no dedupe key", async () => {
    await db.sql.query("DELETE FROM event_fan_out_minutes");
    await clearOfMinuteEnd();
    const parent = parents["quiet-2"]![9]!;
    const limits = { perParent: 2, perTenantPerMinute: 100 };
    expect((await emitAs("quiet-2", parent, limits, { dedupe_key: "a" })).outcome.kind).toBe("success");
    expect((await emitAs("quiet-2", parent, limits, { dedupe_key: "a" })).outcome).toMatchObject({ kind: "success", output: { deduped: true } });
    expect((await emitAs("quiet-2", parent, limits)).outcome.kind).toBe("success");
    expect((await emitAs("quiet-2", parent, limits, { dedupe_key: "b" })).outcome).toEqual({
      kind: "failure", retryable: false, message: "emit_event: this instance has emitted 2 events, the most one instance may emit",
    });
    const { rows } = await db.sql.query("SELECT dedupe_key FROM event_dedupe WHERE tenant_id = 'quiet-2' ORDER BY dedupe_key");
    expect(rows.map((r) => r.dedupe_key)).toEqual(["a"]);
    // Another instance of the tenant is not held back by this one's bound.
    expect((await emitAs("quiet-2", parents["quiet-2"]![8]!, limits)).outcome.kind).toBe("success");
  });
});
