// /credentials (wire-format N) over the dispatcher and a real PostgreSQL: shapes, defaults, the
// refusals with N's texts, no value or refresh token in any answer or row, and worker tasks: the
// listing keeps `credentials://` references while the claimant's poll gets the values.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { parkOnWorkerTask } from "../../test/factories.ts";
import { call, operatorKey, tenantWithKey, type Reply } from "./testing.ts";

const SECRET = `tok-${randomBytes(10).toString("hex")}`;
const REFRESH = `rt-${randomBytes(10).toString("hex")}`;
const keyBefore = process.env.BULKHEAD_ENCRYPTION_KEY;
let db: TestDatabase;
let tenant: { id: string; key: string };
let other: { id: string; key: string };
let opKey: string;
const replies: Reply[] = [];

beforeAll(async () => {
  process.env.BULKHEAD_ENCRYPTION_KEY = randomBytes(32).toString("hex");
  db = await freshDatabase();
  tenant = await tenantWithKey(db);
  other = await tenantWithKey(db);
  opKey = await operatorKey(db);
});
afterAll(async () => {
  await db.drop();
  if (keyBefore === undefined) delete process.env.BULKHEAD_ENCRYPTION_KEY;
  else process.env.BULKHEAD_ENCRYPTION_KEY = keyBefore;
});

const ids = (reply: Reply) => (reply.json() as { id: string }[]).map((c) => c.id);
const tasks = (reply: Reply) => reply.json() as { id: string; params: unknown }[];

/** Every answer is kept: none may carry a secret. */
async function send(method: string, path: string, body?: unknown, key = tenant.key, headers?: Record<string, string>) {
  const reply = await call(db, method, path, { key, body, headers });
  replies.push(reply);
  return reply;
}

describe("/credentials", () => {
  it("creates with N's defaults and answers without the value", async () => {
    const reply = await send("POST", "/credentials", { id: "stripe.live", name: "Stripe", value: JSON.stringify({ token: SECRET }) });
    expect(reply.status).toBe(201);
    expect(reply.json()).toEqual({
      id: "stripe.live", tenant_id: tenant.id, name: "Stripe", kind: "api_key", enabled: true, has_refresh_token: false,
      created_at: expect.any(String), updated_at: expect.any(String),
    });
    const oauth = await send("POST", "/credentials", {
      id: "crm", name: "CRM", kind: "oauth2", value: "{}", refresh_url: "https://auth.example.com/token", refresh_token: REFRESH,
      expires_at: "2030-01-01T00:00:00Z", description: "the CRM",
    });
    expect(oauth.json()).toMatchObject({ kind: "oauth2", has_refresh_token: true, refresh_url: "https://auth.example.com/token", expires_at: "2030-01-01T00:00:00.000Z", description: "the CRM" });
  });

  it("refuses what N refuses, with its texts", async () => {
    const cases: [unknown, number, string][] = [
      [{ id: "", name: "n", value: "v" }, 400, '{"error":"invalid argument: id, name, and value are required"}'],
      [{ id: "x", name: "n", value: "" }, 400, '{"error":"invalid argument: id, name, and value are required"}'],
      [{ id: "has space", name: "n", value: "v" }, 400, `{"error":"invalid argument: credential id must be 1 to 255 characters of A-Z, a-z, 0-9, '.', '_' and '-'"}`],
      [{ id: "o", name: "n", value: "v", kind: "oauth2", refresh_url: "https://auth.example.com/t" }, 400, '{"error":"invalid argument: oauth2 credential with refresh_url requires refresh_token"}'],
      [{ id: "o", name: "n", value: "v", refresh_url: "http://10.0.0.8/token" }, 400, '{"error":"invalid argument: refresh_url must be a public address: 10.0.0.8 is not"}'],
      [{ id: "big", name: "n", value: "v".repeat(256 * 1024 + 1) }, 413, '{"error":"payload too large: credential value exceeds 256 KiB"}'],
      [{ id: "stripe.live", name: "again", value: "v" }, 409, `{"error":"already exists: credential 'stripe.live'"}`],
    ];
    for (const [body, status, text] of cases) {
      const reply = await send("POST", "/credentials", body);
      expect({ status: reply.status, text: reply.text }).toEqual({ status, text });
    }
    const kind = await send("POST", "/credentials", { id: "k", name: "n", value: "v", kind: "password" });
    expect(kind.status).toBe(422);
  });

  it("lists by id, gets, patches (null and absent leave a field alone) and deletes", async () => {
    await send("POST", "/credentials", { id: "a-first", name: "A", value: "v" });
    expect(ids(await send("GET", "/credentials"))).toEqual(["a-first", "crm", "stripe.live"]);
    expect(ids(await send("GET", "/credentials?limit=1"))).toHaveLength(1);
    const patched = await send("PATCH", "/credentials/stripe.live", { name: "Stripe (live)", enabled: false, description: null, value: `{"token":"${SECRET}-2"}` });
    expect(patched.status).toBe(200);
    expect(patched.json()).toMatchObject({ name: "Stripe (live)", enabled: false, kind: "api_key" });
    expect((await send("GET", "/credentials/stripe.live")).json()).toMatchObject({ name: "Stripe (live)", enabled: false });
    const privateUrl = await send("PATCH", "/credentials/crm", { refresh_url: "http://127.0.0.1:8080/token" });
    expect({ status: privateUrl.status, text: privateUrl.text }).toEqual({
      status: 400, text: '{"error":"invalid argument: refresh_url must be a public address: 127.0.0.1 is not"}',
    });
    expect((await send("GET", "/credentials/crm")).json()).toMatchObject({ refresh_url: "https://auth.example.com/token" });
    expect((await send("DELETE", "/credentials/a-first")).status).toBe(204);
    const gone = await send("GET", "/credentials/a-first");
    expect({ status: gone.status, text: gone.text }).toEqual({ status: 404, text: `{"error":"not found: credential 'a-first'"}` });
  });

  it("another tenant's credential reads exactly like a missing one, and cannot be changed", async () => {
    await send("POST", "/credentials", { id: "theirs", name: "T", value: "their-secret" }, other.key);
    for (const method of ["GET", "PATCH", "DELETE"]) {
      const foreign = await send(method, "/credentials/theirs", method === "PATCH" ? { name: "mine now" } : undefined);
      const missing = await send(method, "/credentials/nobodys", method === "PATCH" ? { name: "mine now" } : undefined);
      expect([foreign.status, foreign.text.replace("theirs", "<id>")]).toEqual([missing.status, missing.text.replace("nobodys", "<id>")]);
    }
    expect((await send("GET", "/credentials/theirs", undefined, other.key)).json()).toMatchObject({ name: "T" });
  });

  it("an operator key names the tenant with X-Tenant-Id, and must", async () => {
    const without = await send("GET", "/credentials", undefined, opKey);
    expect({ status: without.status, text: without.text }).toEqual({ status: 400, text: '{"error":"invalid argument: X-Tenant-Id header is required"}' });
    const listed = await send("GET", "/credentials", undefined, opKey, { "x-tenant-id": tenant.id });
    expect(ids(listed)).toEqual(["crm", "stripe.live"]);
  });

  it("a worker task lists its reference; the poll that claims it gets the value", async () => {
    await send("PATCH", "/credentials/stripe.live", { enabled: true });
    const { taskId } = await parkOnWorkerTask(db, tenant.id, "charge", { params: { key: "credentials://stripe.live/token", amount: 5 } });
    const listed = await send("GET", "/workers/tasks?handler_name=charge");
    expect(tasks(listed).find((t) => t.id === taskId)!.params).toEqual({ key: "credentials://stripe.live/token", amount: 5 });
    const polled = await call(db, "POST", "/workers/tasks/poll", { key: tenant.key, body: { handler_name: "charge", worker_id: "w1" } });
    expect(tasks(polled).find((t) => t.id === taskId)!.params).toEqual({ key: `${SECRET}-2`, amount: 5 });
    const after = await send("GET", "/workers/tasks?handler_name=charge");
    expect(JSON.stringify(after.json())).not.toContain(SECRET);
  });

  it("no answer above, and no row, holds a value or a refresh token", async () => {
    for (const reply of replies) {
      expect(reply.text).not.toContain(SECRET);
      expect(reply.text).not.toContain(REFRESH);
      expect(reply.text).not.toContain("their-secret");
    }
    const { rows } = await db.sql.query("SELECT c::text AS row FROM credentials c UNION ALL SELECT a::text FROM audit_log a UNION ALL SELECT w::text FROM worker_tasks w");
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain(REFRESH);
    expect(stored).toContain("enc:v1:");
  });
});
