// The coordination handlers reach other instances only through the caller's tenant-bound store
// (RunStore): against a real PostgreSQL holding two tenants, a foreign instance, sequence or
// trigger reads exactly as a missing one, and nothing is written to the other tenant.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { asTenantId, RunStore } from "../storage/index.ts";
import { createEmitEvent } from "./emit-event.ts";
import { queryInstance } from "./query-instance.ts";
import { sendSignal } from "./send-signal.ts";
import { makeInput } from "./test-support.ts";

const emitEvent = createEmitEvent();

let db: TestDatabase;
let acmeCaller: string;
let acmeTarget: string;
let globexTarget: string;
beforeAll(async () => {
  db = await freshDatabase();
  const acme = await insertSequence(db, "acme", [{ type: "step", id: "x", handler: "noop" }], "shared-name");
  const globex = await insertSequence(db, "globex", [{ type: "step", id: "x", handler: "noop" }], "globex-only");
  await insertSequence(db, "globex", [{ type: "step", id: "x", handler: "noop" }], "shared-name", 2);
  [acmeCaller, acmeTarget] = (await insertInstancesOf(db, "acme", acme, 2)) as [string, string];
  [globexTarget] = (await insertInstancesOf(db, "globex", globex)) as [string];
  await db.sql.query("INSERT INTO triggers (tenant_id, slug, sequence_name) VALUES ('globex', 'globex-hook', 'globex-only')");
});
afterAll(() => db.drop());

/** A handler as the engine runs it for `acmeCaller`: its store is bound to acme. */
function asAcme(handler: typeof sendSignal, params: unknown) {
  const store = new RunStore(db.storage.backends.primary, { id: acmeCaller, tenantId: asTenantId("acme"), leaseEpoch: 1, dueAt: new Date() });
  return handler(makeInput(params, { tenantId: "acme", instanceId: acmeCaller, instances: store }));
}

const signalsOf = async (id: string) => (await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1", [id])).rows[0].n;

describe("through the caller's tenant-bound store", () => {
  it("query_instance finds its own tenant's instance, and a foreign one exactly as a missing one", async () => {
    expect(await asAcme(queryInstance, { instance_id: acmeTarget })).toMatchObject({ kind: "success", output: { found: true, state: "scheduled" } });
    const foreign = await asAcme(queryInstance, { instance_id: globexTarget });
    const missing = await asAcme(queryInstance, { instance_id: randomUUID() });
    expect(foreign).toEqual({ kind: "success", output: { found: false } });
    expect(foreign).toEqual(missing);
  });

  it("query_instance fails for good on an id that is not a UUID, and names an in-flight target's current step", async () => {
    for (const params of [{ instance_id: "not-a-uuid" }, {}, { instance_id: 7 }]) {
      expect(await asAcme(queryInstance, params)).toEqual({ kind: "failure", retryable: false, message: "query_instance needs instance_id, a UUID" });
    }
    await db.sql.query(`UPDATE task_instances SET state = 'running', context = jsonb_set(context, '{runtime}', '{"current_step": "x"}') WHERE id = $1`, [acmeTarget]);
    expect(await asAcme(queryInstance, { instance_id: acmeTarget })).toMatchObject({ output: { found: true, state: "running", current_node: "x" } });
    await db.sql.query("UPDATE task_instances SET state = 'completed' WHERE id = $1", [acmeTarget]);
    expect(await asAcme(queryInstance, { instance_id: acmeTarget })).toMatchObject({ output: { found: true, state: "completed", current_node: null } });
    await db.sql.query("UPDATE task_instances SET state = 'scheduled' WHERE id = $1", [acmeTarget]);
  });

  it("send_signal reaches its own tenant's instance; a foreign one gets the missing answer and no signal", async () => {
    expect(await asAcme(sendSignal, { instance_id: acmeTarget, signal_type: { custom: "ping" } })).toMatchObject({ kind: "success" });
    expect(await signalsOf(acmeTarget)).toBe(1);
    const foreign = await asAcme(sendSignal, { instance_id: globexTarget, signal_type: "cancel" });
    const missing = await asAcme(sendSignal, { instance_id: randomUUID(), signal_type: "cancel" });
    expect(foreign).toEqual({ kind: "failure", retryable: false, message: "target instance not found" });
    expect(foreign).toEqual(missing);
    expect(await signalsOf(globexTarget)).toBe(0);
  });

  it("emit_event sees only its own tenant's sequences and triggers", async () => {
    const children = async (tenant: string) =>
      (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1 AND metadata -> '_trigger_event' ->> 'parent_instance_id' = $2", [tenant, acmeCaller])).rows[0].n;
    expect(await asAcme(emitEvent, { sequence_name: "globex-only" })).toEqual({ kind: "failure", retryable: false, message: "sequence not found: globex-only" });
    expect(await asAcme(emitEvent, { trigger_slug: "globex-hook" })).toEqual({
      kind: "failure", retryable: false, message: "trigger not found: globex-hook (or its sequence is not in this namespace)",
    });
    // The same name in both tenants: the caller's own (version 1), never globex's newer version 2.
    const emitted = await asAcme(emitEvent, { sequence_name: "shared-name" });
    expect(emitted).toMatchObject({ kind: "success", output: { sequence_name: "shared-name", deduped: false } });
    expect(await children("acme")).toBe(1);
    expect(await children("globex")).toBe(0);
  });
});
