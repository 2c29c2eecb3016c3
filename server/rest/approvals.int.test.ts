// GET /approvals (wire-format R) with a real engine parking steps on input gates: the item's
// shape and defaults, pages over instances, a namespace filter, the answer as a custom signal
// (after which the item is gone; one for a block that is not waiting is a 422), and tenancy:
// another tenant named answers 404, its waiting instances are never listed, an operator key must
// name the tenant.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import type { Scheduler } from "../../engine/scheduler/scheduler.ts";
import { call, operatorKey, sequenceJson, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let scheduler: Scheduler;
let tenant: { id: string; key: string };
let other: { id: string; key: string };
let opKey: string;

beforeAll(async () => {
  db = await freshDatabase();
  tenant = await tenantWithKey(db);
  other = await tenantWithKey(db);
  opKey = await operatorKey(db);
  scheduler = makeScheduler(db);
  await scheduler.start();
});
afterAll(async () => {
  await scheduler.stop();
  await db.drop();
});

const gated = (owner: { id: string }, name: string) => sequenceJson(owner.id, {
  name,
  blocks: [
    { type: "step", id: "approve", handler: "log", params: { message: "go" }, wait_for_input: {
      prompt: "Ship it?", choices: [{ label: "Ship", value: "ship" }, { label: "Hold", value: "hold" }], store_as: "decision",
      timeout: 3_600_000, escalation_handler: "noop",
    } },
  ],
});

async function startWaiting(owner: { id: string; key: string }, name: string, namespace = "default"): Promise<string> {
  const sequence = await call(db, "POST", "/sequences", { key: owner.key, body: gated(owner, name) });
  expect(sequence.status).toBe(201);
  const created = await call(db, "POST", "/instances", {
    key: owner.key, body: { sequence_id: (sequence.json() as { id: string }).id, tenant_id: owner.id, namespace, metadata: { order: name } },
  });
  const id = (created.json() as { id: string }).id;
  await expect.poll(async () => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state, { timeout: 10_000 }).toBe("waiting");
  return id;
}

const inbox = async (query = "", key = tenant.key, headers?: Record<string, string>) => call(db, "GET", `/approvals${query}`, { key, headers });
type Items = { items: { instance_id: string; block_id: string; namespace: string }[]; total: number };

describe("GET /approvals", () => {
  it("is empty with nothing waiting", async () => {
    const reply = await inbox();
    expect({ status: reply.status, body: reply.json() }).toEqual({ status: 200, body: { items: [], total: 0 } });
  });

  it("lists a parked gate with R's fields; the answer, a custom signal, takes it away", async () => {
    const id = await startWaiting(tenant, "ship-order");
    const reply = await inbox();
    const body = reply.json() as Items & { items: Record<string, unknown>[] };
    expect(body.total).toBe(1);
    const item = body.items[0]!;
    expect(item).toEqual({
      instance_id: id, tenant_id: tenant.id, namespace: "default", sequence_id: expect.any(String), sequence_name: "ship-order",
      block_id: "approve", prompt: "Ship it?", choices: [{ label: "Ship", value: "ship" }, { label: "Hold", value: "hold" }],
      store_as: "decision", timeout_seconds: 3600, escalation_handler: "noop", waiting_since: expect.any(String),
      deadline: new Date(Date.parse(item.waiting_since as string) + 3_600_000).toISOString(), metadata: { order: "ship-order" }, allow_comment: false,
    });
    const answered = await call(db, "POST", `/instances/${id}/signals`, {
      key: tenant.key, body: { signal_type: { custom: "human_input:approve" }, payload: { value: "ship" } },
    });
    expect(answered.status).toBe(201);
    await expect.poll(async () => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state, { timeout: 10_000 }).toBe("completed");
    expect((await inbox()).json()).toEqual({ items: [], total: 0 });
  });

  it("a mistyped block id in the answer is a 422 naming it, and the gate still waits for the right one", async () => {
    const id = await startWaiting(tenant, "typo-gate");
    const typo = await call(db, "POST", `/instances/${id}/signals`, {
      key: tenant.key, body: { signal_type: { custom: "human_input:aprove" }, payload: { value: "ship" } },
    });
    expect({ status: typo.status, body: typo.json() }).toEqual({
      status: 422, body: { error: `unprocessable entity: block "aprove" of instance ${id} is not waiting for input` },
    });
    expect((await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1", [id])).rows[0].n).toBe(0);
    expect(((await inbox()).json() as Items).items.map((i) => [i.instance_id, i.block_id])).toContainEqual([id, "approve"]);
    const answered = await call(db, "POST", `/instances/${id}/signals`, {
      key: tenant.key, body: { signal_type: { custom: "human_input:approve" }, payload: { value: "ship" } },
    });
    expect(answered.status).toBe(201);
    await expect.poll(async () => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state, { timeout: 10_000 }).toBe("completed");
  });

  it("a gate that names no choices offers Yes/No, with null store_as, timeout and deadline", async () => {
    const body = sequenceJson(tenant.id, { name: "plain-gate", blocks: [{ type: "step", id: "ok", handler: "noop", wait_for_input: { prompt: "OK?" } }] });
    const sequence = (await call(db, "POST", "/sequences", { key: tenant.key, body })).json() as { id: string };
    const id = ((await call(db, "POST", "/instances", { key: tenant.key, body: { sequence_id: sequence.id, tenant_id: tenant.id, namespace: "plain" } })).json() as { id: string }).id;
    await expect.poll(async () => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state, { timeout: 10_000 }).toBe("waiting");
    const [item] = ((await inbox("?namespace=plain")).json() as { items: Record<string, unknown>[] }).items;
    expect(item).toMatchObject({
      instance_id: id, choices: [{ label: "Yes", value: "yes" }, { label: "No", value: "no" }], store_as: null, timeout_seconds: null,
      escalation_handler: null, deadline: null, metadata: null,
    });
    await call(db, "POST", `/instances/${id}/signals`, { key: tenant.key, body: { signal_type: { custom: "human_input:ok" }, payload: { value: "yes" } } });
    await expect.poll(async () => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state, { timeout: 10_000 }).toBe("completed");
  });

  it("pages over instances, most recently updated first, and filters by namespace", async () => {
    const first = await startWaiting(tenant, "page-a");
    const second = await startWaiting(tenant, "page-b", "billing");
    const all = (await inbox()).json() as Items;
    expect(all.items.map((i) => i.instance_id)).toEqual([second, first]);
    expect(((await inbox("?limit=1")).json() as Items).items.map((i) => i.instance_id)).toEqual([second]);
    expect(((await inbox("?limit=1&offset=1")).json() as Items).items.map((i) => i.instance_id)).toEqual([first]);
    expect(((await inbox("?namespace=billing")).json() as Items).items.map((i) => i.instance_id)).toEqual([second]);
  });

  it("another tenant's waiting instances are never listed, and naming that tenant is a 404", async () => {
    const theirs = await startWaiting(other, "their-gate");
    const mine = (await inbox()).json() as Items;
    expect(mine.items.map((i) => i.instance_id)).not.toContain(theirs);
    const named = await inbox(`?tenant_id=${other.id}`);
    const nobody = await inbox("?tenant_id=no-such-tenant");
    expect({ status: named.status, text: named.text }).toEqual({ status: nobody.status, text: nobody.text });
    expect(named.status).toBe(404);
    expect(((await inbox("", other.key)).json() as Items).items.map((i) => i.instance_id)).toEqual([theirs]);
  });

  it("an operator key must name the tenant, and then sees that tenant's inbox", async () => {
    const without = await inbox("", opKey);
    expect({ status: without.status, text: without.text }).toEqual({ status: 400, text: '{"error":"invalid argument: X-Tenant-Id header is required"}' });
    expect(((await inbox("", opKey, { "x-tenant-id": other.id })).json() as Items).total).toBe(1);
  });
});
