// The Approvals page's procedures against a real PostgreSQL and a running engine: approvals.list
// shows every gate waiting on the tenant's instances (the instance page's gates), filters by
// sequence and pages with an opaque keyset cursor, past waiting instances that have no gate; an
// answer through instances.answer (the instance page's path) with a comment completes the gate
// and takes it off the list; another tenant's gates are never listed, and its instance answers
// exactly like a missing one.
import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Scheduler } from "../../engine/scheduler/scheduler.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { APPROVAL_SCAN_MAX } from "../approvals.ts";
import { addMember } from "../control/users.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let scheduler: Scheduler;
let tenantA: string;
let tenantB: string;
let member: { id: string; email: string };

const GATE = {
  type: "step", id: "approve", handler: "log", params: { message: "shipping" },
  wait_for_input: { prompt: "Ship it?", choices: [{ label: "Ship", value: "ship" }, { label: "Hold", value: "hold" }], allow_comment: true, store_as: "decision", timeout: 3_600_000 },
};

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  scheduler = makeScheduler(db);
  await scheduler.start();
});
afterAll(async () => {
  await scheduler.stop();
  await db.drop();
});

const caller = () => createCaller(createContext(db, member.id));
const stateOf = async (id: string) => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state as string;

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

/** An instance of the gated sequence run by the engine until it waits at the gate. */
async function parkedAtGate(tenantId: string, sequenceId: string): Promise<string> {
  const [id] = (await insertInstancesOf(db, tenantId, sequenceId)) as [string];
  await expect.poll(() => stateOf(id), { timeout: 10_000 }).toBe("waiting");
  return id;
}

/**
 * `count` waiting instances written directly (no engine): at the gate, or (`gate: false`) parked
 * on a worker step, which the inbox must skip; updated `fromSecsAgo`, then 1 s older each.
 */
async function waitingRows(tenantId: string, sequenceId: string, count: number, fromSecsAgo: number, gate = true): Promise<string[]> {
  const cursor = gate
    ? { v: 2, nodes: { approve: { status: "active", attempt: 0, reachedAt: new Date().toISOString() } } }
    : { v: 2, nodes: { ext: { status: "active", attempt: 0 } } };
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, cursor, updated_at)
     SELECT gen_random_uuid(), $1, 'default', $2, 'waiting', '{"data": {}, "config": null}', $3, now() - ($4 + i) * interval '1 second'
       FROM generate_series(0, $5 - 1) AS i ORDER BY i RETURNING id`,
    [tenantId, sequenceId, JSON.stringify(cursor), fromSecsAgo, count],
  );
  return rows.map((row) => row.id);
}

/** Every page of the list, following `next`. */
async function allPages(tenantId: string, input: { sequenceId?: string; limit?: number } = {}) {
  const pages: { instanceId: string; blockId: string }[][] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<ReturnType<typeof caller>["approvals"]["list"]>> = await caller().approvals.list({ tenantId, ...input, cursor });
    pages.push(page.items);
    cursor = page.next;
  } while (cursor && pages.length < 50);
  return pages;
}

describe("approvals.list and answering from it", () => {
  let sequence: string;
  beforeAll(async () => {
    sequence = await insertSequence(db, tenantA, [GATE, { type: "step", id: "after", handler: "noop" }], "ship-order");
  });

  it("lists the gate the instance page shows, and an answer with a comment completes it and takes it off the list", async () => {
    const id = await parkedAtGate(tenantA, sequence);
    const { items } = await caller().approvals.list({ tenantId: tenantA, sequenceId: sequence });
    const detail = await caller().instances.get({ tenantId: tenantA, instanceId: id });
    expect(items).toEqual([{
      instanceId: id, namespace: "default", sequenceId: sequence, sequenceName: "ship-order", blockId: "approve", handler: "log",
      prompt: "Ship it?", choices: [{ label: "Ship", value: "ship" }, { label: "Hold", value: "hold" }], storeAs: "decision",
      timeoutMs: 3_600_000, escalationHandler: null, waitingSince: expect.any(String),
      deadline: new Date(Date.parse(items[0]!.waitingSince) + 3_600_000).toISOString(), metadata: null, allowComment: true,
    }]);
    // The same gate as the instance page's.
    expect(detail.pendingInputs.map((gate) => [gate.blockId, gate.prompt, gate.choices])).toEqual([[items[0]!.blockId, items[0]!.prompt, items[0]!.choices]]);

    await caller().instances.answer({ tenantId: tenantA, instanceId: id, blockId: "approve", value: "ship", comment: "carrier confirmed" });
    // Off the list at once: the answer wakes the instance, so it no longer waits.
    expect((await caller().approvals.list({ tenantId: tenantA, sequenceId: sequence })).items).toEqual([]);
    await expect.poll(() => stateOf(id), { timeout: 10_000 }).toBe("completed");
    const { rows } = await db.sql.query("SELECT signal_type, payload FROM signals WHERE instance_id = $1", [id]);
    expect(rows).toEqual([{ signal_type: "custom:human_input:approve", payload: { value: "ship", comment: "carrier confirmed" } }]);
    const context = (await db.sql.query("SELECT context FROM task_instances WHERE id = $1", [id])).rows[0].context;
    expect(context.data.decision).toBe("ship");
  });

  it("refuses an answer the gate does not take, with the instance page's checks, and the gate stays listed", async () => {
    const id = await parkedAtGate(tenantA, sequence);
    for (const input of [{ blockId: "approve", value: "yes" }, { blockId: "after", value: "ship" }]) {
      expect((await trpcError(caller().instances.answer({ tenantId: tenantA, instanceId: id, ...input }))).code).toBe("BAD_REQUEST");
    }
    expect((await caller().approvals.list({ tenantId: tenantA, sequenceId: sequence })).items.map((item) => item.instanceId)).toEqual([id]);
    await caller().instances.answer({ tenantId: tenantA, instanceId: id, blockId: "approve", value: "hold" });
    await expect.poll(() => stateOf(id), { timeout: 10_000 }).toBe("completed");
  });

  it("filters by sequence", async () => {
    const other = await insertSequence(db, tenantA, [GATE], "other-order");
    const [mine, theirs] = [await parkedAtGate(tenantA, sequence), await parkedAtGate(tenantA, other)];
    expect((await caller().approvals.list({ tenantId: tenantA, sequenceId: sequence })).items.map((item) => item.instanceId)).toEqual([mine]);
    expect((await caller().approvals.list({ tenantId: tenantA, sequenceId: other })).items.map((item) => item.instanceId)).toEqual([theirs]);
    expect((await caller().approvals.list({ tenantId: tenantA, sequenceId: randomUUID() })).items).toEqual([]);
    const all = (await caller().approvals.list({ tenantId: tenantA })).items.map((item) => item.instanceId);
    expect(all).toEqual(expect.arrayContaining([mine, theirs]));
    // Most recently updated first.
    expect(all.indexOf(theirs)).toBeLessThan(all.indexOf(mine));
    for (const id of [mine, theirs]) await caller().instances.answer({ tenantId: tenantA, instanceId: id, blockId: "approve", value: "ship" });
  });

  it("never lists another tenant's gates, and answers its instance exactly like a missing one", async () => {
    const theirSequence = await insertSequence(db, tenantB, [GATE], "their-order");
    const theirs = await parkedAtGate(tenantB, theirSequence);
    expect((await caller().approvals.list({ tenantId: tenantA })).items.map((item) => item.instanceId)).not.toContain(theirs);
    // Their sequence id as a filter finds nothing, as a random one does.
    expect((await caller().approvals.list({ tenantId: tenantA, sequenceId: theirSequence })).items).toEqual([]);
    expect((await trpcError(caller().approvals.list({ tenantId: tenantB }))).code).toBe("NOT_FOUND");

    const answer = (instanceId: string) => trpcError(caller().instances.answer({ tenantId: tenantA, instanceId, blockId: "approve", value: "ship" }));
    const [foreign, missing] = [await answer(theirs), await answer(randomUUID())];
    expect({ code: foreign.code, message: foreign.message }).toEqual({ code: "NOT_FOUND", message: "instance not found" });
    expect({ code: foreign.code, message: foreign.message }).toEqual({ code: missing.code, message: missing.message });
    expect((await db.sql.query("SELECT count(*)::int AS n FROM signals WHERE instance_id = $1", [theirs])).rows[0].n).toBe(0);
    expect(await stateOf(theirs)).toBe("waiting");
  });

  it("refuses a cursor it did not issue and a malformed sequence id as BAD_REQUEST", async () => {
    for (const cursor of ["not a cursor", Buffer.from("12.not-a-uuid").toString("base64url")]) {
      expect((await trpcError(caller().approvals.list({ tenantId: tenantA, cursor }))).code).toBe("BAD_REQUEST");
    }
    expect((await trpcError(caller().approvals.list({ tenantId: tenantA, sequenceId: "seq-1" }))).code).toBe("BAD_REQUEST");
    expect((await trpcError(caller().approvals.list({ tenantId: tenantA, limit: 101 }))).code).toBe("BAD_REQUEST");
  });
});

describe("approvals.list pages", () => {
  let tenant: string;
  let gated: string;
  let worker: string;
  beforeAll(async () => {
    tenant = (await makeTenant(db)).id;
    await addMember(db.prisma, { tenantId: tenant, email: member.email, role: "member" });
    gated = await insertSequence(db, tenant, [GATE]);
    worker = await insertSequence(db, tenant, [{ type: "step", id: "ext", handler: "ext_worker" }]);
  });

  it("pages through every gate once, newest first, skipping instances that wait on something else", async () => {
    // 23 gates, with 40 instances waiting on a worker among them.
    const newer = await waitingRows(tenant, gated, 8, 0);
    await waitingRows(tenant, worker, 40, 8, false);
    const older = await waitingRows(tenant, gated, 15, 48);
    const pages = await allPages(tenant, { limit: 10 });
    expect(pages.flat().map((item) => item.instanceId)).toEqual([...newer, ...older]);
    // Full pages of gates, though most of the instances in between have none.
    expect(pages.map((page) => page.length)).toEqual([10, 10, 3]);
  });

  it("reads a bounded number of instances per page: past that, a page may come back short, with where to go on", async () => {
    const quiet = (await makeTenant(db)).id;
    await addMember(db.prisma, { tenantId: quiet, email: member.email, role: "member" });
    const workerSeq = await insertSequence(db, quiet, [{ type: "step", id: "ext", handler: "ext_worker" }]);
    const gatedSeq = await insertSequence(db, quiet, [GATE]);
    await waitingRows(quiet, workerSeq, APPROVAL_SCAN_MAX + 20, 0, false);
    const [oldest] = await waitingRows(quiet, gatedSeq, 1, APPROVAL_SCAN_MAX + 100);
    const first = await caller().approvals.list({ tenantId: quiet, limit: 10 });
    expect(first.items).toEqual([]);
    expect(first.next).not.toBeNull();
    const second = await caller().approvals.list({ tenantId: quiet, limit: 10, cursor: first.next });
    expect({ ids: second.items.map((item) => item.instanceId), next: second.next }).toEqual({ ids: [oldest], next: null });
  });
});
