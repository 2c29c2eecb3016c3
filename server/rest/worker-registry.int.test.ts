// GET /workers and GET /handlers (wire-format T): every poll registers its worker and handler;
// the list groups them per worker, most recently seen first, with its in-flight claims; stale
// workers drop out unless asked for; another tenant's workers and handlers never show.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { parkOnWorkerTask } from "../../test/factories.ts";
import { HANDLER_DESCRIPTORS } from "../../engine/handlers/descriptors.ts";
import { call, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let tenant: { id: string; key: string };
let other: { id: string; key: string };
beforeAll(async () => {
  db = await freshDatabase();
  tenant = await tenantWithKey(db);
  other = await tenantWithKey(db);
});
afterAll(() => db.drop());

const get = async (path: string, key = tenant.key) => (await call(db, "GET", path, { key })).json() as Record<string, unknown>[];

describe("worker registrations", () => {
  it("a poll registers its worker; GET /workers groups handlers and queues, keeps the latest version and counts its claims", async () => {
    await parkOnWorkerTask(db, tenant.id, "charge");
    await call(db, "POST", "/workers/tasks/poll", { key: tenant.key, body: { handler_name: "charge", worker_id: "w1", version: "1.2.0" } });
    await call(db, "POST", "/workers/tasks/poll/queue", { key: tenant.key, body: { handler_name: "refund", worker_id: "w1", queue_name: "eu" } });
    await call(db, "POST", "/workers/tasks/poll", { key: tenant.key, body: { handler_name: "charge", worker_id: "w2" } });
    const workers = await get("/workers");
    expect(workers.map((w) => w.worker_id)).toEqual(["w2", "w1"]);
    expect(workers[1]).toEqual({
      worker_id: "w1", handlers: ["charge", "refund"], queues: ["eu"], version: "1.2.0", last_seen_at: expect.any(String), alive: true, in_flight: 1,
    });
    expect(workers[0]).toMatchObject({ worker_id: "w2", handlers: ["charge"], queues: [], version: null, in_flight: 0 });
  });

  it("stale workers drop out unless include_stale=true, which shows them as not alive", async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await get("/workers?alive_within_secs=0")).toEqual([]);
    const stale = await get("/workers?alive_within_secs=0&include_stale=true");
    expect(stale.map((w) => [w.worker_id, w.alive])).toEqual([["w2", false], ["w1", false]]);
  });

  it("GET /handlers lists the built-in handlers and those the tenant's workers poll for", async () => {
    const handlers = (await call(db, "GET", "/handlers", { key: tenant.key })).json();
    expect(handlers).toEqual({ builtin: HANDLER_DESCRIPTORS.map((h) => h.name).sort(), external: ["charge", "refund"] });
  });

  it("another tenant sees none of these workers or handlers", async () => {
    expect(await get("/workers", other.key)).toEqual([]);
    expect((await call(db, "GET", "/handlers", { key: other.key })).json()).toMatchObject({ external: [] });
    await call(db, "POST", "/workers/tasks/poll", { key: other.key, body: { handler_name: "theirs", worker_id: "w1" } });
    expect((await get("/workers", other.key)).map((w) => [w.worker_id, w.handlers, w.in_flight])).toEqual([["w1", ["theirs"], 0]]);
    expect((await get("/workers")).find((w) => w.worker_id === "w1")!.handlers).toEqual(["charge", "refund"]);
  });
});
