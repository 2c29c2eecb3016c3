// GET /instances/{id}/stream (wire-format S) against a real PostgreSQL, read as a client reads
// it, event by event: state first and on change, each output once and in order, done last and
// the stream closed; a missing or foreign instance is 404 before anything streams; a deleted one
// ends with `error`. And the stream budget: one tenant's open streams cannot take another's.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { pollMsOf } from "../live/instance-stream.ts";
import type { Services } from "../services.ts";
import { call, createInstance, createSequence, expectSameReply, openStream, operatorKey, tenantWithKey, type SseEvent } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let acmeSequence: string;
let globexSequence: string;
beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  acmeSequence = await createSequence(db, acme);
  globexSequence = await createSequence(db, globex);
});
afterAll(() => db.drop());

let written = 0;
/** An output row, each a millisecond after the one before (created_at is kept to the millisecond). */
async function addOutput(instanceId: string, tenantId: string, blockId: string, output: unknown) {
  written += 1;
  await db.sql.query(
    `INSERT INTO block_outputs (id, tenant_id, instance_id, block_id, output, output_size, attempt, created_at)
     VALUES ($1, $2, $3, $4, $5, 10, 0, $6)`,
    [randomUUID(), tenantId, instanceId, blockId, JSON.stringify(output), new Date(Date.UTC(2026, 0, 1) + written)],
  );
}

const setState = (id: string, state: string) => db.sql.query("UPDATE task_instances SET state = $2 WHERE id = $1", [id, state]);

describe("GET /instances/{id}/stream", () => {
  it("streams state, each output once in order, then done, and closes", async () => {
    const id = await createInstance(db, acme, acmeSequence);
    await setState(id, "running");
    await addOutput(id, acme.id, "first", { n: 1 });
    const stream = await openStream(db, `/instances/${id}/stream?poll_ms=100`, acme.key);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(await stream.next()).toEqual({ event: "state", data: { instance_id: id, state: "running" } });
    expect(await stream.next()).toMatchObject({ event: "output", data: { instance_id: id, block_id: "first", output: { n: 1 } } });

    // Written while the stream is open: picked up by the next polls, each row once.
    await addOutput(id, acme.id, "second", { n: 2 });
    expect(await stream.next()).toMatchObject({ event: "output", data: { block_id: "second" } });
    await addOutput(id, acme.id, "third", { n: 3 });
    await setState(id, "completed");
    const rest: SseEvent[] = [];
    for (let e = await stream.next(); e; e = await stream.next()) rest.push(e);
    expect(rest.map((e) => [e.event, (e.data as { block_id?: string; state?: string }).block_id ?? (e.data as { state: string }).state])).toEqual([
      ["state", "completed"], ["output", "third"], ["done", "completed"],
    ]);
  });

  it("resumes after the last output a reconnecting client got (Last-Event-ID)", async () => {
    const id = await createInstance(db, acme, acmeSequence);
    await setState(id, "running");
    for (const block of ["one", "two", "three"]) await addOutput(id, acme.id, block, { block });
    const first = await openStream(db, `/instances/${id}/stream?poll_ms=100`, acme.key);
    expect((await first.next())?.event).toBe("state");
    const one = await first.next();
    expect(one).toMatchObject({ event: "output", data: { block_id: "one" }, id: expect.any(String) });
    first.close();
    const again = await openStream(db, `/instances/${id}/stream?poll_ms=100`, acme.key, { "last-event-id": one!.id! });
    expect((await again.next())?.event).toBe("state");
    expect((await again.next())?.data).toMatchObject({ block_id: "two" });
    expect((await again.next())?.data).toMatchObject({ block_id: "three" });
    again.close();
    // An id that is not one of ours streams from the start.
    const fresh = await openStream(db, `/instances/${id}/stream?poll_ms=100`, acme.key, { "last-event-id": "not-a-position" });
    expect((await fresh.next())?.event).toBe("state");
    expect((await fresh.next())?.data).toMatchObject({ block_id: "one" });
    fresh.close();
  });

  it("tells of a run's other progress (a step started, an attempt failed) with a progress event", async () => {
    const id = await createInstance(db, acme, acmeSequence);
    await setState(id, "running");
    const stream = await openStream(db, `/instances/${id}/stream?poll_ms=100`, acme.key);
    expect((await stream.next())?.event).toBe("state");
    await db.sql.query("UPDATE task_instances SET updated_at = now() + interval '1 second' WHERE id = $1", [id]);
    expect(await stream.next()).toEqual({ event: "progress", data: { updated_at: expect.stringMatching(/^\d{4}-/) } });
    stream.close();
  });

  it("ends with an error event when the instance is deleted while it streams", async () => {
    const id = await createInstance(db, acme, acmeSequence);
    const stream = await openStream(db, `/instances/${id}/stream?poll_ms=100`, acme.key);
    expect((await stream.next())?.event).toBe("state");
    await db.sql.query("DELETE FROM task_instances WHERE id = $1", [id]);
    expect(await stream.next()).toEqual({ event: "error", data: { error: "instance not found" } });
    expect(await stream.next()).toBeNull();
  });

  it("answers another tenant's instance exactly like a missing one, before anything streams", async () => {
    const foreign = await createInstance(db, globex, globexSequence);
    const theirs = await call(db, "GET", `/instances/${foreign}/stream`, { key: acme.key });
    const missing = await call(db, "GET", `/instances/${randomUUID()}/stream`, { key: acme.key });
    expect(theirs.status).toBe(404);
    expectSameReply(theirs, missing);
    // An operator key must name the tenant (J-V), and then sees only that tenant's instances.
    const operator = await operatorKey(db);
    expect((await call(db, "GET", `/instances/${foreign}/stream`, { key: operator })).status).toBe(400);
    expectSameReply(
      await call(db, "GET", `/instances/${foreign}/stream`, { key: operator, headers: { "x-tenant-id": acme.id } }),
      await call(db, "GET", `/instances/${randomUUID()}/stream`, { key: operator, headers: { "x-tenant-id": acme.id } }),
    );
  });

  it("clamps poll_ms to 100..5000, 500 when absent or not a number", () => {
    expect([pollMsOf(null), pollMsOf(""), pollMsOf("x"), pollMsOf("1"), pollMsOf("250"), pollMsOf("99999")]).toEqual([500, 500, 500, 100, 250, 5000]);
  });
});

describe("the stream budget (noisy neighbour)", () => {
  it("caps one tenant's open streams; another tenant still gets one, and a closed stream frees its slot", async () => {
    // Services of their own: a process whose budget is 4 streams, 2 per tenant.
    const services: Services = { ...db, config: { ...db.config, BULKHEAD_STREAMS: 4, BULKHEAD_STREAMS_PER_TENANT: 2 } };
    const mine = await createInstance(db, acme, acmeSequence);
    const theirs = await createInstance(db, globex, globexSequence);
    const held = [await openStream(services, `/instances/${mine}/stream`, acme.key), await openStream(services, `/instances/${mine}/stream`, acme.key)];
    for (const stream of held) expect(stream.response.status).toBe(200);

    const refused = await openStream(services, `/instances/${mine}/stream`, acme.key);
    expect(refused.response.status).toBe(503);
    expect(await refused.response.text()).toBe('{"error":"unavailable: too many concurrent streaming clients; retry later"}');

    const neighbour = await openStream(services, `/instances/${theirs}/stream?poll_ms=100`, globex.key);
    expect(neighbour.response.status).toBe(200);
    expect((await neighbour.next())?.event).toBe("state");

    held[0]!.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const again = await openStream(services, `/instances/${mine}/stream`, acme.key);
    expect(again.response.status).toBe(200);
    for (const stream of [held[1]!, neighbour, again]) stream.close();
  });
});
