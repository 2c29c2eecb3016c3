// GET /instances/{id}/logs (wire-format V): the lines of an instance's `log` steps (their level,
// any message as text) and of its workers' complete and fail `logs`, oldest first, at most
// LOG_LIMITS.linesPerInstance of them; another tenant's instance answers like a missing one.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOG_LIMITS } from "../../engine/storage/index.ts";
import type { Scheduler } from "../../engine/scheduler/scheduler.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { call, createInstance, createSequenceOf, expectSameReply, instanceState, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let scheduler: Scheduler;
let acme: { id: string; key: string };
let globex: { id: string; key: string };

const stateOf = (id: string) => instanceState(db, id);
const sequenceOf = (tenant: { id: string; key: string }, blocks: unknown[]) => createSequenceOf(db, tenant, blocks);
const logsOf = async (tenant: { key: string }, id: string) => (await call(db, "GET", `/instances/${id}/logs`, { key: tenant.key })).json() as Record<string, unknown>[];

beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  scheduler = makeScheduler(db);
  await scheduler.start();
});
afterAll(async () => {
  await scheduler.stop();
  await db.drop();
});

describe("GET /instances/{id}/logs", () => {
  it("lists log steps' lines and a worker's, oldest first", async () => {
    const sequence = await sequenceOf(acme, [
      { type: "step", id: "hello", handler: "log", params: { message: "hello {{context.data.name}}" } },
      { type: "step", id: "warned", handler: "log", params: { message: { n: 1 }, level: "warn" } },
      { type: "step", id: "ext", handler: "ext_logger" },
    ]);
    const id = await createInstance(db, acme, sequence, { context: { data: { name: "ada" } } });
    await expect.poll(async () => ((await call(db, "POST", "/workers/tasks/poll", { key: acme.key, body: { handler_name: "ext_logger", worker_id: "w1" } })).json() as unknown[]).length, { timeout: 10_000 }).toBe(1);
    const [task] = (await call(db, "GET", "/workers/tasks?state=claimed&handler_name=ext_logger", { key: acme.key })).json() as { id: string; claim_epoch: number }[];
    const done = await call(db, "POST", `/workers/tasks/${task!.id}/complete`, {
      key: acme.key, body: { worker_id: "w1", claim_epoch: task!.claim_epoch, output: {}, logs: ["fetched 3 rows", { level: "error", message: "one was bad" }, { message: { row: 2 } }] },
    });
    expect(done.status).toBe(200);
    await expect.poll(() => stateOf(id), { timeout: 10_000 }).toBe("completed");
    const lines = await logsOf(acme, id);
    expect(lines.map(({ ts, ...line }) => { expect(ts).toMatch(/Z$/); return line; })).toEqual([
      { block_id: "hello", level: "info", message: "hello ada" },
      { block_id: "warned", level: "warn", message: '{"n":1}' },
      { block_id: "ext", level: "info", message: "fetched 3 rows" },
      { block_id: "ext", level: "error", message: "one was bad" },
      { block_id: "ext", level: "info", message: '{"row":2}' },
    ]);
  });

  it("keeps at most LOG_LIMITS.linesPerInstance lines, each cut to LOG_LIMITS.messageChars", async () => {
    const sequence = await sequenceOf(acme, [{ type: "step", id: "ext", handler: "ext_chatty" }]);
    const id = await createInstance(db, acme, sequence);
    await expect.poll(async () => ((await call(db, "POST", "/workers/tasks/poll", { key: acme.key, body: { handler_name: "ext_chatty", worker_id: "w2" } })).json() as unknown[]).length, { timeout: 10_000 }).toBe(1);
    const [task] = (await call(db, "GET", "/workers/tasks?state=claimed&handler_name=ext_chatty", { key: acme.key })).json() as { id: string; claim_epoch: number }[];
    const logs = ["x".repeat(LOG_LIMITS.messageChars + 10), ...Array.from({ length: LOG_LIMITS.linesPerInstance }, (_, i) => `line ${i}`)];
    const failed = await call(db, "POST", `/workers/tasks/${task!.id}/fail`, { key: acme.key, body: { worker_id: "w2", claim_epoch: task!.claim_epoch, message: "no", logs: logs.slice(0, LOG_LIMITS.linesPerInstance) } });
    expect(failed.status).toBe(200);
    const lines = await logsOf(acme, id);
    expect(lines).toHaveLength(LOG_LIMITS.linesPerInstance);
    expect((lines[0]!.message as string).length).toBe(LOG_LIMITS.messageChars);
    const tooMany = await call(db, "POST", `/workers/tasks/${task!.id}/fail`, { key: acme.key, body: { worker_id: "w2", claim_epoch: task!.claim_epoch, message: "no", logs: [...logs, "one more"] } });
    expect(tooMany.status).toBe(422);
  });

  it("answers another tenant's instance exactly as a missing one", async () => {
    const theirs = await createInstance(db, globex, await sequenceOf(globex, [{ type: "step", id: "a", handler: "log", params: { message: "secret" } }]));
    await expect.poll(() => stateOf(theirs), { timeout: 10_000 }).toBe("completed");
    const missing = await call(db, "GET", `/instances/${randomUUID()}/logs`, { key: acme.key });
    expect(missing.json()).toEqual({ error: "not found: instance not found" });
    expectSameReply(await call(db, "GET", `/instances/${theirs}/logs`, { key: acme.key }), missing);
  });
});
