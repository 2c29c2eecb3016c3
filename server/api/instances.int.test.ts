// The instances procedures against a real PostgreSQL: the list with filters and an opaque cursor,
// the detail (tree, pending human input, outputs, signals, worker tasks), signals and answers
// from a plain member, and a foreign instance answered exactly like a missing one.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { appRouter, createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenantA: string;
let tenantB: string;
let member: { id: string; email: string };
let sequenceA: string;

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  sequenceA = await insertSequence(db, tenantA, [
    { type: "step", id: "prepare", handler: "noop" },
    { type: "step", id: "approve", handler: "log", wait_for_input: {
      prompt: "Ship it?", choices: [{ label: "Ship", value: "ship" }, { label: "Hold", value: "hold" }], allow_comment: true,
    } },
    { type: "parallel", id: "fan", branches: [[{ type: "step", id: "left", handler: "noop" }], [{ type: "step", id: "review", handler: "human_review" }]] },
  ], "release");
});
afterAll(() => db.drop());

const caller = () => createCaller(createContext(db, member.id));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

/** The raw HTTP answer of the tRPC endpoint for one query. */
async function httpQuery(path: string, input: unknown) {
  const url = `http://localhost/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`;
  const response = await fetchRequestHandler({
    endpoint: "/api/trpc", req: new Request(url), router: appRouter, createContext: () => createContext(db, member.id),
  });
  return { status: response.status, headers: [...response.headers.entries()], body: await response.text() };
}

/** An instance of `tenantId` in `state`, created `ageMs` ago, with an optional cursor. */
async function instance(tenantId: string, state: string, options: { sequenceId?: string; ageMs?: number; cursor?: unknown } = {}) {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, cursor, next_fire_at, created_at)
     VALUES (gen_random_uuid(), $1, 'default', $2, $3::text, '{"data": {"order": 7}, "config": null}', $4,
             CASE WHEN $3 = 'scheduled' THEN now() END, now() - $5 * interval '1 millisecond')
     RETURNING id`,
    [tenantId, options.sequenceId ?? randomUUID(), state, options.cursor === undefined ? null : JSON.stringify(options.cursor), options.ageMs ?? 0],
  );
  return rows[0]!.id;
}

const signalsOf = async (id: string) =>
  (await db.sql.query("SELECT signal_type, payload FROM signals WHERE instance_id = $1 ORDER BY created_at, id", [id])).rows;

describe("instances.list", () => {
  let ids: string[];
  beforeAll(async () => {
    // Oldest first: 12 of tenant A (ages 12..1 s), states alternating; B has its own.
    ids = [];
    for (let i = 12; i >= 1; i--) ids.push(await instance(tenantA, i % 2 ? "failed" : "completed", { sequenceId: i <= 4 ? sequenceA : undefined, ageMs: i * 1_000 }));
    await instance(tenantB, "failed");
  });
  const newestFirst = () => [...ids].reverse();

  it("pages through the tenant's instances with an opaque cursor, newest first", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { id: string }[]; next: string | null } = await caller().instances.list({ tenantId: tenantA, limit: 5, cursor });
      seen.push(...page.items.map((item) => item.id));
      cursor = page.next;
    } while (cursor);
    expect(seen).toEqual(newestFirst());
  });

  it("filters by state, sequence and time, and names the sequence", async () => {
    const failed = await caller().instances.list({ tenantId: tenantA, states: ["failed"] });
    expect(failed.items.every((item) => item.state === "failed")).toBe(true);
    expect(failed.items).toHaveLength(6);

    const ofSequence = await caller().instances.list({ tenantId: tenantA, sequenceId: sequenceA, states: ["failed", "completed"] });
    expect(ofSequence.items.map((item) => item.id)).toEqual(newestFirst().slice(0, 4));
    expect(ofSequence.items[0]).toMatchObject({ sequenceName: "release", sequenceVersion: 1, namespace: "default" });

    const now = Date.now();
    const window = await caller().instances.list({
      tenantId: tenantA, createdAfter: new Date(now - 6_500).toISOString(), createdBefore: new Date(now - 2_500).toISOString(),
    });
    expect(window.items.map((item) => item.id)).toEqual(newestFirst().slice(2, 6));
    expect(window.next).toBeNull();
  });

  it("refuses a cursor it did not issue, and a malformed filter, as BAD_REQUEST", async () => {
    for (const cursor of ["not a cursor", Buffer.from("12.not-a-uuid").toString("base64url"), Buffer.from(`x.${randomUUID()}`).toString("base64url")]) {
      expect((await trpcError(caller().instances.list({ tenantId: tenantA, cursor }))).code).toBe("BAD_REQUEST");
    }
    expect((await trpcError(caller().instances.list({ tenantId: tenantA, sequenceId: "seq-1" }))).code).toBe("BAD_REQUEST");
    expect((await trpcError(caller().instances.list({ tenantId: tenantA, limit: 201 }))).code).toBe("BAD_REQUEST");
  });

  it("is NOT_FOUND for a tenant the user is not a member of", async () => {
    expect((await trpcError(caller().instances.list({ tenantId: tenantB }))).code).toBe("NOT_FOUND");
  });
});

describe("instances.get", () => {
  it("shows the tree, the pending human input, outputs, signals and worker tasks", async () => {
    const reachedAt = new Date(Date.now() - 1_000).toISOString();
    const id = await instance(tenantA, "waiting", {
      sequenceId: sequenceA,
      cursor: { v: 2, nodes: {
        prepare: { status: "completed", reachedAt, startedAt: reachedAt },
        approve: { status: "active", attempt: 0, reachedAt },
        fan: { status: "active" },
        left: { status: "failed" },
        review: { status: "active", attempt: 0, reachedAt, input: { value: "yes" } },
      } },
    });
    await db.sql.query(
      "INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output) VALUES (gen_random_uuid(), $1, $2, 'prepare', '{\"ok\": true}')",
      [tenantA, id],
    );
    await db.sql.query(
      `INSERT INTO worker_tasks (id, tenant_id, instance_id, block_id, handler_name, state) VALUES (gen_random_uuid(), $1, $2, 'left', 'ext', 'failed')`,
      [tenantA, id],
    );
    const detail = await caller().instances.get({ tenantId: tenantA, instanceId: id });
    expect(detail.instance).toMatchObject({ id, state: "waiting", context: { data: { order: 7 }, config: null } });
    expect(detail.sequence).toMatchObject({ id: sequenceA, name: "release", version: 1 });
    expect(detail.hasTree).toBe(true);
    expect(detail.nodes.map((n) => [n.blockId, n.blockType, n.state, n.parentId === null])).toEqual([
      ["prepare", "step", "completed", true],
      ["approve", "step", "waiting", true],
      ["fan", "parallel", "waiting", true],
      ["left", "step", "failed", false],
      ["review", "step", "waiting", false],
    ]);
    expect(detail.nodes.find((n) => n.blockId === "left")!.parentId).toBe(detail.nodes.find((n) => n.blockId === "fan")!.id);
    // `review` already has its answer: only `approve` still waits.
    expect(detail.pendingInputs).toEqual([{
      blockId: "approve", handler: "log", prompt: "Ship it?", allowComment: true, timesOutAt: null, answerQueued: false,
      choices: [{ label: "Ship", value: "ship" }, { label: "Hold", value: "hold" }],
      waitingSince: expect.any(String), timeoutMs: null, escalationHandler: null, storeAs: null,
    }]);
    expect(detail.outputs.map((o) => [o.blockId, o.output])).toEqual([["prepare", { ok: true }]]);
    expect(detail.workerTasks.map((t) => [t.blockId, t.handlerName, t.state, t.attempts])).toEqual([["left", "ext", "failed", []]]);
    expect(detail.signals).toEqual([]);
  });

  it("offers Yes/No for a human_review step without choices", async () => {
    const id = await instance(tenantA, "waiting", {
      sequenceId: sequenceA,
      cursor: { v: 2, nodes: { prepare: { status: "completed" }, approve: { status: "completed" }, fan: { status: "active" },
        review: { status: "active", attempt: 0, reachedAt: new Date().toISOString() } } },
    });
    const detail = await caller().instances.get({ tenantId: tenantA, instanceId: id });
    expect(detail.pendingInputs.map((p) => [p.blockId, p.choices.map((c) => c.value), p.allowComment])).toEqual([["review", ["yes", "no"], false]]);
  });

  it("answers a foreign, a missing and a malformed id with the same NOT_FOUND, down to the HTTP bytes", async () => {
    const foreign = await instance(tenantB, "running");
    const answers = await Promise.all(
      [foreign, randomUUID(), "not-an-id"].map((instanceId) => trpcError(caller().instances.get({ tenantId: tenantA, instanceId }))),
    );
    for (const error of answers) expect({ code: error.code, message: error.message }).toEqual({ code: "NOT_FOUND", message: "instance not found" });

    const foreignHttp = await httpQuery("instances.get", { tenantId: tenantA, instanceId: foreign });
    const missingHttp = await httpQuery("instances.get", { tenantId: tenantA, instanceId: randomUUID() });
    expect(foreignHttp.status).toBe(404);
    expect(foreignHttp).toEqual(missingHttp);
  });

  it("shows an instance whose sequence is gone, without a tree", async () => {
    const id = await instance(tenantA, "completed");
    const detail = await caller().instances.get({ tenantId: tenantA, instanceId: id });
    expect(detail).toMatchObject({ hasTree: false, nodes: [], pendingInputs: [], sequence: { name: null, version: null } });
  });
});

describe("instances.signal", () => {
  it("lets a member pause, resume, cancel, update the context and send custom signals, and records who did", async () => {
    const id = await instance(tenantA, "running");
    const send = (signal: Parameters<ReturnType<typeof caller>["instances"]["signal"]>[0]["signal"]) =>
      caller().instances.signal({ tenantId: tenantA, instanceId: id, signal });
    const sent = await send({ type: "pause" });
    expect(sent.signalId).toMatch(/^[0-9a-f-]{36}$/);
    await send({ type: "resume" });
    await send({ type: "update_context", payload: { data: { order: 8 } } });
    await send({ type: "custom", name: "nudge", payload: { n: [1, 2] } });
    await send({ type: "cancel" });
    expect(await signalsOf(id)).toEqual([
      { signal_type: "pause", payload: null },
      { signal_type: "resume", payload: null },
      { signal_type: "update_context", payload: { data: { order: 8 } } },
      { signal_type: "custom:nudge", payload: { n: [1, 2] } },
      { signal_type: "cancel", payload: null },
    ]);
    const { rows } = await db.sql.query(
      "SELECT actor, actor_user_id, details ->> 'signal_type' AS type FROM audit_log WHERE action = 'instance.signal' AND details ->> 'instance_id' = $1 ORDER BY id",
      [id],
    );
    expect(rows.map((r) => r.type)).toEqual(["pause", "resume", "update_context", "custom:nudge", "cancel"]);
    expect(rows[0]).toMatchObject({ actor: member.email, actor_user_id: member.id });

    const detail = await caller().instances.get({ tenantId: tenantA, instanceId: id });
    expect(detail.signals.map((s) => [s.type, s.name])).toEqual([["cancel", null], ["custom", "nudge"], ["update_context", null], ["resume", null], ["pause", null]]);
  });

  it("refuses an update_context payload the engine would ignore, an oversized payload and a terminal instance", async () => {
    const id = await instance(tenantA, "running");
    for (const payload of [{ order: 8 }, { data: { a: 1 }, config: {} }, { data: [1] }]) {
      const error = await trpcError(caller().instances.signal({ tenantId: tenantA, instanceId: id, signal: { type: "update_context", payload: payload as never } }));
      expect(error.code).toBe("BAD_REQUEST");
    }
    const huge = await trpcError(caller().instances.signal({
      tenantId: tenantA, instanceId: id, signal: { type: "custom", name: "big", payload: "x".repeat(256 * 1024 + 1) },
    }));
    expect(huge.code).toBe("PAYLOAD_TOO_LARGE");
    const done = await instance(tenantA, "completed");
    const terminal = await trpcError(caller().instances.signal({ tenantId: tenantA, instanceId: done, signal: { type: "cancel" } }));
    expect(terminal.code).toBe("BAD_REQUEST");
    expect(terminal.message).toMatch(/terminal state/);
    expect(await signalsOf(id)).toEqual([]);
  });

  it("refuses a 300 KiB payload of any signal with PAYLOAD_TOO_LARGE, storing and recording nothing", async () => {
    const id = await instance(tenantA, "running");
    const blob = "x".repeat(300 * 1024);
    const signals: Parameters<ReturnType<typeof caller>["instances"]["signal"]>[0]["signal"][] = [
      { type: "custom", name: "big", payload: { blob } },
      { type: "update_context", payload: { data: { blob } } },
    ];
    for (const signal of signals) {
      const error = await trpcError(caller().instances.signal({ tenantId: tenantA, instanceId: id, signal }));
      expect(error.code).toBe("PAYLOAD_TOO_LARGE");
      expect(error.message).toMatch(/^payload is \d+ bytes, exceeding the maximum of 262144 bytes$/);
    }
    expect(await signalsOf(id)).toEqual([]);
    const audit = await db.sql.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'instance.signal' AND details->>'instance_id' = $1", [id]);
    expect(audit.rows[0].n).toBe(0);
  });

  it("sends human_input:<block> only for a gate that is waiting: UNPROCESSABLE_CONTENT naming any other block", async () => {
    const cursor = { v: 2, nodes: { prepare: { status: "completed" }, approve: { status: "active", attempt: 0, reachedAt: new Date().toISOString() } } };
    const id = await instance(tenantA, "waiting", { sequenceId: sequenceA, cursor });
    const answer = (block: string) =>
      caller().instances.signal({ tenantId: tenantA, instanceId: id, signal: { type: "custom", name: `human_input:${block}`, payload: { value: "ship" } } });
    for (const block of ["aprove", "prepare", "review"]) {
      const error = await trpcError(answer(block));
      expect({ code: error.code, message: error.message }).toEqual({
        code: "UNPROCESSABLE_CONTENT", message: `block "${block}" of instance ${id} is not waiting for input`,
      });
    }
    expect(await signalsOf(id)).toEqual([]);
    await answer("approve");
    expect(await signalsOf(id)).toEqual([{ signal_type: "custom:human_input:approve", payload: { value: "ship" } }]);
    // Another tenant's instance waiting at the same gate is as missing as a random id.
    const foreign = await instance(tenantB, "waiting", { sequenceId: sequenceA, cursor });
    for (const instanceId of [foreign, randomUUID()]) {
      const error = await trpcError(caller().instances.signal({ tenantId: tenantA, instanceId, signal: { type: "custom", name: "human_input:approve" } }));
      expect({ code: error.code, message: error.message }).toEqual({ code: "NOT_FOUND", message: "instance not found" });
    }
    expect(await signalsOf(foreign)).toEqual([]);
  });

  it("answers a foreign instance exactly like a missing one, and sends nothing", async () => {
    const foreign = await instance(tenantB, "running");
    const [a, b] = await Promise.all([foreign, randomUUID()].map((instanceId) =>
      trpcError(caller().instances.signal({ tenantId: tenantA, instanceId, signal: { type: "cancel" } }))));
    expect({ code: a!.code, message: a!.message }).toEqual({ code: "NOT_FOUND", message: "instance not found" });
    expect({ code: b!.code, message: b!.message }).toEqual({ code: a!.code, message: a!.message });
    expect(await signalsOf(foreign)).toEqual([]);
  });
});

describe("instances.answer", () => {
  const waitingAtApprove = () =>
    instance(tenantA, "waiting", {
      sequenceId: sequenceA,
      cursor: { v: 2, nodes: { prepare: { status: "completed" }, approve: { status: "active", attempt: 0, reachedAt: new Date().toISOString() } } },
    });

  it("sends human_input:<block> with the value and the comment, and wakes the instance", async () => {
    const id = await waitingAtApprove();
    await caller().instances.answer({ tenantId: tenantA, instanceId: id, blockId: "approve", value: "ship", comment: "  looks good " });
    expect(await signalsOf(id)).toEqual([{ signal_type: "custom:human_input:approve", payload: { value: "ship", comment: "looks good" } }]);
    const { rows } = await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id]);
    expect(rows[0].state).toBe("scheduled");
    // Until the engine takes the answer, the page shows it as sent rather than asking again.
    const detail = await caller().instances.get({ tenantId: tenantA, instanceId: id });
    expect(detail.pendingInputs.map((p) => [p.blockId, p.answerQueued])).toEqual([["approve", true]]);
  });

  it("refuses a value that is not a choice, a block that is not waiting and a comment the step does not take", async () => {
    const id = await waitingAtApprove();
    const cases = [
      { blockId: "approve", value: "yes" },
      { blockId: "prepare", value: "yes" },
      { blockId: "nope", value: "yes" },
    ];
    for (const input of cases) {
      expect((await trpcError(caller().instances.answer({ tenantId: tenantA, instanceId: id, ...input }))).code).toBe("BAD_REQUEST");
    }
    const review = await instance(tenantA, "waiting", {
      sequenceId: sequenceA, cursor: { v: 2, nodes: { fan: { status: "active" }, review: { status: "active", reachedAt: new Date().toISOString() } } },
    });
    const comment = await trpcError(caller().instances.answer({ tenantId: tenantA, instanceId: review, blockId: "review", value: "no", comment: "why" }));
    expect(comment.code).toBe("BAD_REQUEST");
    await caller().instances.answer({ tenantId: tenantA, instanceId: review, blockId: "review", value: "no", comment: "   " });
    expect(await signalsOf(review)).toEqual([{ signal_type: "custom:human_input:review", payload: { value: "no" } }]);
    expect(await signalsOf(id)).toEqual([]);
  });

  it("is NOT_FOUND for another tenant's instance", async () => {
    const foreign = await instance(tenantB, "waiting", {
      sequenceId: sequenceA, cursor: { v: 2, nodes: { approve: { status: "active", reachedAt: new Date().toISOString() } } },
    });
    const error = await trpcError(caller().instances.answer({ tenantId: tenantA, instanceId: foreign, blockId: "approve", value: "ship" }));
    expect({ code: error.code, message: error.message }).toEqual({ code: "NOT_FOUND", message: "instance not found" });
    expect(await signalsOf(foreign)).toEqual([]);
  });
});
