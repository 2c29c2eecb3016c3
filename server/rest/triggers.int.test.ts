// Trigger slug routes: create or repoint with PUT, read, list, delete; a slug of another tenant is
// a slug this tenant does not have, and nothing a refused request sends changes anything.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, createSequence, expectSameReply, operatorKey, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let acmeSequence: string;

const sequenceName = async (id: string) => (await db.sql.query("SELECT name FROM sequences WHERE id = $1", [id])).rows[0].name as string;
const triggerRows = async () => (await db.sql.query("SELECT tenant_id, slug, sequence_name, sequence_version FROM triggers ORDER BY 1, 2")).rows;

beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  acmeSequence = await sequenceName(await createSequence(db, acme));
  await call(db, "PUT", "/triggers/globex-signup", { key: globex.key, body: { sequence_name: await sequenceName(await createSequence(db, globex)) } });
});
afterAll(() => db.drop());

describe("PUT /triggers/{slug}", () => {
  it("creates a trigger (201), repoints it (200), and records both in the audit log", async () => {
    const created = await call(db, "PUT", "/triggers/order-placed", { key: acme.key, body: { sequence_name: acmeSequence } });
    expect(created.status).toBe(201);
    expect(created.json()).toEqual({
      tenant_id: acme.id, slug: "order-placed", sequence_name: acmeSequence, sequence_version: null,
      created_at: expect.stringMatching(/Z$/), updated_at: expect.stringMatching(/Z$/),
    });
    const pinned = await call(db, "PUT", "/triggers/order-placed", { key: acme.key, body: { sequence_name: acmeSequence, sequence_version: 1 } });
    expect(pinned.status).toBe(200);
    expect(pinned.json()).toMatchObject({ slug: "order-placed", sequence_version: 1 });

    const read = await call(db, "GET", "/triggers/order-placed", { key: acme.key });
    expect(read.json()).toEqual(pinned.json());
    const list = await call(db, "GET", "/triggers", { key: acme.key });
    expect(list.json()).toEqual([pinned.json()]);

    const { rows } = await db.sql.query("SELECT action, details FROM audit_log WHERE tenant_id = $1 AND action LIKE 'trigger.%' ORDER BY id", [acme.id]);
    expect(rows).toEqual([
      { action: "trigger.create", details: { slug: "order-placed", sequence_name: acmeSequence, sequence_version: null } },
      { action: "trigger.update", details: { slug: "order-placed", sequence_name: acmeSequence, sequence_version: 1 } },
    ]);
  });

  it("refuses a bad slug, a sequence the tenant does not have, a missing version, and a malformed body, changing nothing", async () => {
    const before = await triggerRows();
    const bad = await call(db, "PUT", "/triggers/Not%20A%20Slug", { key: acme.key, body: { sequence_name: acmeSequence } });
    expect(bad.status).toBe(400);
    expect((bad.json() as { error: string }).error).toMatch(/^invalid argument: invalid trigger slug "Not A Slug"/);

    const unknown = await call(db, "PUT", "/triggers/t1", { key: acme.key, body: { sequence_name: "no-such-sequence" } });
    expect(unknown.status).toBe(400);
    expect(unknown.json()).toEqual({ error: 'invalid argument: no sequence "no-such-sequence" in this tenant' });
    // Another tenant's sequence name reads exactly like a name nobody uses.
    const globexName = (await db.sql.query("SELECT name FROM sequences WHERE tenant_id = $1", [globex.id])).rows[0].name;
    const foreign = await call(db, "PUT", "/triggers/t1", { key: acme.key, body: { sequence_name: globexName } });
    expect(foreign.json()).toEqual({ error: `invalid argument: no sequence ${JSON.stringify(globexName)} in this tenant` });

    const version = await call(db, "PUT", "/triggers/t1", { key: acme.key, body: { sequence_name: acmeSequence, sequence_version: 9 } });
    expect(version.json()).toEqual({ error: `invalid argument: no sequence ${JSON.stringify(acmeSequence)} version 9 in this tenant` });

    const shapeless = await call(db, "PUT", "/triggers/t1", { key: acme.key, body: { sequence_version: 1 } });
    expect(shapeless.status).toBe(422);
    expect(await triggerRows()).toEqual(before);
  });
});

describe("another tenant's slug", () => {
  it("reads, and deletes, exactly like a slug nobody has, and stays put", async () => {
    for (const method of ["GET", "DELETE"]) {
      const missing = await call(db, method, "/triggers/nobody-has-this", { key: acme.key });
      expect(missing.status).toBe(404);
      expect(missing.json()).toEqual({ error: "not found: trigger not found" });
      expectSameReply(await call(db, method, "/triggers/globex-signup", { key: acme.key }), missing);
      expectSameReply(await call(db, method, "/triggers/globex-signup", { key: acme.key, headers: { "x-tenant-id": globex.id } }), missing);
    }
    expect((await call(db, "GET", "/triggers/globex-signup", { key: globex.key })).status).toBe(200);
    expect((await call(db, "GET", "/triggers", { key: acme.key })).json()).not.toContainEqual(expect.objectContaining({ slug: "globex-signup" }));
  });

  it("is the operator's to manage once the operator names the tenant", async () => {
    const key = await operatorKey(db);
    const reply = await call(db, "GET", "/triggers/globex-signup", { key, headers: { "x-tenant-id": globex.id } });
    expect(reply.json()).toMatchObject({ tenant_id: globex.id, slug: "globex-signup" });
    const unnamed = await call(db, "GET", "/triggers", { key });
    expect(unnamed.status).toBe(400);
  });
});

describe("DELETE /triggers/{slug}", () => {
  it("removes the trigger (204), then answers 404", async () => {
    await call(db, "PUT", "/triggers/short-lived", { key: acme.key, body: { sequence_name: acmeSequence } });
    const removed = await call(db, "DELETE", "/triggers/short-lived", { key: acme.key });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe("");
    expect((await call(db, "DELETE", "/triggers/short-lived", { key: acme.key })).status).toBe(404);
    expect((await call(db, "GET", "/triggers/short-lived", { key: acme.key })).status).toBe(404);
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1 AND action = 'trigger.delete'", [acme.id]);
    expect(rows[0].n).toBe(1);
  });
});
