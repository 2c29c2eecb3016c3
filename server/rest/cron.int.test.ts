// Cron schedule routes (wire-format M): exact bodies and errors, the operator key's X-Tenant-Id,
// and another tenant's schedule or sequence answering exactly as a missing one.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { tenantLimitsCache } from "../tenant-limits-cache.ts";
import { call, createSequence, expectSameReply, operatorKey, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let acmeSequence: string;
let globexSequence: string;
const PLAIN = "text/plain; charset=utf-8";
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

beforeAll(async () => {
  db = await freshDatabase({ BULKHEAD_CRON_SCHEDULES_PER_TENANT: "3" });
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  acmeSequence = await createSequence(db, acme);
  globexSequence = await createSequence(db, globex);
});
afterAll(() => db.drop());

const create = (tenant: { id: string; key: string }, body: Record<string, unknown>, headers?: Record<string, string>) =>
  call(db, "POST", "/cron", { key: tenant.key, body: { tenant_id: tenant.id, namespace: "default", sequence_id: acmeSequence, cron_expr: "0 0 * * * *", ...body }, headers });

async function clear() {
  await db.sql.query("DELETE FROM cron_schedules");
}

describe("POST /cron", () => {
  it("answers 201 {id, next_fire_at} only, and stores the defaults", async () => {
    await clear();
    const before = Date.now();
    const reply = await create(acme, { cron_expr: "* * * * *" });
    expect(reply.status).toBe(201);
    const body = reply.json() as { id: string; next_fire_at: string };
    expect(Object.keys(body).sort()).toEqual(["id", "next_fire_at"]);
    const next = new Date(body.next_fire_at).getTime();
    expect(next).toBeGreaterThan(before);
    expect(next % 60_000).toBe(0);
    const read = await call(db, "GET", `/cron/${body.id}`, { key: acme.key });
    expect(read.json()).toEqual({
      id: body.id, tenant_id: acme.id, namespace: "default", sequence_id: acmeSequence, cron_expr: "* * * * *", timezone: "UTC",
      enabled: true, metadata: null, overlap_policy: "allow", skipped_fires: 0, last_skipped_at: null, last_triggered_at: null,
      next_fire_at: body.next_fire_at, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO),
    });
  });

  it.each([
    ["0 0 * * 0", "invalid argument: invalid cron expression: day of week: 0 is out of range 1-7"],
    ["not a cron", "invalid argument: invalid cron expression: expected 5, 6 or 7 fields, got 3"],
    ["", "invalid argument: invalid cron expression: expected 5, 6 or 7 fields, got 0"],
    ["0 61 * * * *", "invalid argument: invalid cron expression: minutes: 61 is out of range 0-59"],
  ])("refuses %j with 400 %j", async (cron_expr, error) => {
    const reply = await create(acme, { cron_expr });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error });
  });

  it("refuses a zone that is not IANA with 400", async () => {
    const reply = await create(acme, { timezone: "Mars/Olympus" });
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: "invalid argument: invalid timezone: 'Mars/Olympus' (expected an IANA time zone name such as UTC or America/New_York)" });
  });

  it("answers a missing sequence and another tenant's alike: 404 not found: sequence <id>", async () => {
    const missingId = randomUUID();
    const missing = await create(acme, { sequence_id: missingId });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: `not found: sequence ${missingId}` });
    const foreign = await create(acme, { sequence_id: globexSequence });
    expect(foreign.json()).toEqual({ error: `not found: sequence ${globexSequence}` });
    expect(foreign.status).toBe(404);
  });

  it("422 in plain text for a blank tenant, a missing field and an unknown policy", async () => {
    for (const body of [{ tenant_id: " " }, { cron_expr: undefined }, { overlap_policy: "sometimes" }]) {
      const reply = await create(acme, body);
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.contentType).toBe(PLAIN);
    }
  });

  it("takes a timezone, metadata, enabled and a policy", async () => {
    const reply = await create(acme, { timezone: "America/New_York", metadata: { team: "ops" }, enabled: false, overlap_policy: "skip" });
    const read = await call(db, "GET", `/cron/${(reply.json() as { id: string }).id}`, { key: acme.key });
    expect(read.json()).toMatchObject({ timezone: "America/New_York", metadata: { team: "ops" }, enabled: false, overlap_policy: "skip" });
  });

  it("refuses a schedule past the tenant's limit with 409", async () => {
    await clear();
    for (let i = 0; i < 3; i += 1) expect((await create(acme, {})).status).toBe(201);
    const over = await create(acme, {});
    expect(over.status).toBe(409);
    expect(over.json()).toEqual({ error: "conflict: the tenant has 3 cron schedules, its limit: delete one first or ask an operator to raise the limit" });
    // Another tenant is not held by acme's count.
    expect((await create(globex, { sequence_id: globexSequence })).status).toBe(201);
    await clear();
  });

  it("takes the tenant's own limit over the default when an operator set one (tiered)", async () => {
    await clear();
    await db.storage.setTenantLimits(acme.id, { cronSchedules: 4 });
    tenantLimitsCache(db).invalidate();
    for (let i = 0; i < 4; i += 1) expect((await create(acme, {})).status).toBe(201);
    const over = await create(acme, {});
    expect(over.status).toBe(409);
    expect(over.json()).toEqual({ error: "conflict: the tenant has 4 cron schedules, its limit: delete one first or ask an operator to raise the limit" });
    // The others keep the default (3 in this file).
    for (let i = 0; i < 3; i += 1) expect((await create(globex, { sequence_id: globexSequence })).status).toBe(201);
    expect((await create(globex, { sequence_id: globexSequence })).status).toBe(409);
    await db.storage.setTenantLimits(acme.id, { cronSchedules: null });
    tenantLimitsCache(db).invalidate();
    await clear();
  });
});

describe("the other routes", () => {
  it("lists oldest first with a limit, and never another tenant's", async () => {
    await clear();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((((await create(acme, {})).json()) as { id: string }).id);
    await create(globex, { sequence_id: globexSequence });
    const all = await call(db, "GET", "/cron", { key: acme.key });
    expect((all.json() as { id: string }[]).map((s) => s.id)).toEqual(ids);
    const two = await call(db, "GET", "/cron?limit=2", { key: acme.key });
    expect((two.json() as { id: string }[]).map((s) => s.id)).toEqual(ids.slice(0, 2));
    expect((await call(db, "GET", "/cron?limit=x", { key: acme.key })).status).toBe(400);
  });

  it("PUT changes what it names (null = unchanged), recomputes next_fire_at, and answers the full schedule", async () => {
    await clear();
    const { id } = (await create(acme, { metadata: { a: 1 } })).json() as { id: string };
    const reply = await call(db, "PUT", `/cron/${id}`, { key: acme.key, body: { cron_expr: "0 30 * * * *", timezone: "Asia/Kolkata", metadata: null, enabled: false } });
    expect(reply.status).toBe(200);
    const body = reply.json() as Record<string, unknown>;
    expect(body).toMatchObject({ id, cron_expr: "0 30 * * * *", timezone: "Asia/Kolkata", metadata: { a: 1 }, enabled: false, overlap_policy: "allow" });
    // Kolkata is UTC+5:30, so minute 30 there is minute 0 in UTC.
    expect(new Date(body.next_fire_at as string).getUTCMinutes()).toBe(0);
    const bad = await call(db, "PUT", `/cron/${id}`, { key: acme.key, body: { cron_expr: "0 0 * * 0" } });
    expect(bad.status).toBe(400);
    expect(bad.json()).toEqual({ error: "invalid argument: invalid cron expression: day of week: 0 is out of range 1-7" });
    const policy = await call(db, "PUT", `/cron/${id}`, { key: acme.key, body: { overlap_policy: "never" } });
    expect(policy.status).toBe(422);
  });

  it("next-fires: 5 by default, n clamped to 1..50, in UTC, with the zone", async () => {
    const { id } = (await create(acme, { cron_expr: "0 0 9 * * *", timezone: "America/New_York" })).json() as { id: string };
    const five = (await call(db, "GET", `/cron/${id}/next-fires`, { key: acme.key })).json() as { timezone: string; fires: string[] };
    expect(five.timezone).toBe("America/New_York");
    expect(five.fires).toHaveLength(5);
    for (const fire of five.fires) expect(fire).toMatch(/T1[34]:00:00\.000Z$/);
    expect(((await call(db, "GET", `/cron/${id}/next-fires?n=0`, { key: acme.key })).json() as { fires: string[] }).fires).toHaveLength(1);
    expect(((await call(db, "GET", `/cron/${id}/next-fires?n=500`, { key: acme.key })).json() as { fires: string[] }).fires).toHaveLength(50);
  });

  it("DELETE answers 204, then 404", async () => {
    const { id } = (await create(acme, {})).json() as { id: string };
    const gone = await call(db, "DELETE", `/cron/${id}`, { key: acme.key });
    expect(gone.status).toBe(204);
    expect(gone.text).toBe("");
    const again = await call(db, "DELETE", `/cron/${id}`, { key: acme.key });
    expect(again.status).toBe(404);
    expect(again.json()).toEqual({ error: `not found: cron_schedule ${id}` });
  });

  it("answers another tenant's schedule on every route exactly as a missing one, changing nothing", async () => {
    await clear();
    const { id: theirs } = (await create(globex, { sequence_id: globexSequence })).json() as { id: string };
    const before = (await db.sql.query("SELECT * FROM cron_schedules")).rows;
    const missing = randomUUID();
    for (const [method, suffix, body] of [["GET", ""], ["PUT", "", { enabled: false }], ["DELETE", ""], ["GET", "/next-fires"]] as const) {
      const foreign = await call(db, method, `/cron/${theirs}${suffix}`, { key: acme.key, body });
      const random = await call(db, method, `/cron/${missing}${suffix}`, { key: acme.key, body });
      expect(foreign.status, `${method} ${suffix}`).toBe(404);
      expect(foreign.json()).toEqual({ error: `not found: cron_schedule ${theirs}` });
      expectSameReply({ ...foreign, text: foreign.text.replace(theirs, "<id>") }, { ...random, text: random.text.replace(missing, "<id>") });
    }
    expect((await db.sql.query("SELECT * FROM cron_schedules")).rows).toEqual(before);
  });

  it("records each change in the audit log, with the key that made it", async () => {
    const { id } = (await create(acme, { cron_expr: "0 0 * * *" })).json() as { id: string };
    await call(db, "PUT", `/cron/${id}`, { key: acme.key, body: { enabled: false } });
    await call(db, "DELETE", `/cron/${id}`, { key: acme.key });
    const { rows } = await db.sql.query(
      "SELECT action, actor, details FROM audit_log WHERE tenant_id = $1 AND details ->> 'cron_schedule_id' = $2 ORDER BY id", [acme.id, id],
    );
    expect(rows.map((r) => r.action)).toEqual(["cron_schedule.create", "cron_schedule.update", "cron_schedule.delete"]);
    expect(rows[0].actor).toBe(acme.key.slice(0, rows[0].actor.length));
    expect(rows[1].details).toEqual({
      cron_schedule_id: id, sequence_id: acmeSequence, cron_expr: "0 0 * * *", timezone: "UTC", enabled: false, overlap_policy: "allow",
    });
  });

  it("PATCH is not routed (405); a non-UUID id is a plain-text 400", async () => {
    const patch = await call(db, "PATCH", `/cron/${randomUUID()}`, { key: acme.key, body: { enabled: false } });
    expect(patch.status).toBe(405);
    const bad = await call(db, "GET", "/cron/not-a-uuid", { key: acme.key });
    expect(bad.status).toBe(400);
    expect(bad.contentType).toBe(PLAIN);
  });
});

describe("keys", () => {
  it("an operator key must send X-Tenant-Id, then acts for that tenant", async () => {
    await clear();
    const key = await operatorKey(db);
    const operator = { id: acme.id, key };
    const bare = await create(operator, {});
    expect(bare.status).toBe(400);
    expect(bare.json()).toEqual({ error: "invalid argument: X-Tenant-Id header is required" });
    expect((await call(db, "GET", "/cron", { key })).json()).toEqual({ error: "invalid argument: X-Tenant-Id header is required" });
    const made = await create(operator, {}, { "x-tenant-id": acme.id });
    expect(made.status).toBe(201);
    const { id } = made.json() as { id: string };
    expect((await call(db, "GET", `/cron/${id}`, { key, headers: { "x-tenant-id": acme.id } })).status).toBe(200);
    const elsewhere = await call(db, "GET", `/cron/${id}`, { key, headers: { "x-tenant-id": globex.id } });
    expect(elsewhere.json()).toEqual({ error: `not found: cron_schedule ${id}` });
  });

  it("a tenant key naming another tenant gets the 404 of a missing schedule; a different X-Tenant-Id header too", async () => {
    const { id } = (await create(acme, {})).json() as { id: string };
    const named = await call(db, "GET", `/cron/${id}?tenant_id=${globex.id}`, { key: acme.key });
    expect(named.status).toBe(404);
    expect(named.json()).toEqual({ error: `not found: cron_schedule ${id}` });
    const list = await call(db, "GET", `/cron?tenant_id=${globex.id}`, { key: acme.key });
    expect(list.status).toBe(404);
  });
});
