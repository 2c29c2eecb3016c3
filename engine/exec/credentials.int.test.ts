// Credentials in step params (wire-format N), through the real scheduler, PostgreSQL and a local
// echo vendor: the vendor gets the value, while the stored output, context and database rows do
// not hold it; another tenant's credential fails the step exactly like a missing one; a worker
// task keeps the reference, and only its claimant's poll gets the value; a key rotation keeps
// old rows readable and rewrites them under the new key when they are used.
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { createBuiltInHandlers } from "../handlers/registry.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import { keyringFromEnv, open } from "../secrets/sealed-text.ts";
import { asTenantId, type TenantId, type TenantStore } from "../storage/index.ts";

let ACME: TenantId;
let GLOBEX: TenantId;
const SECRET = `sk-live-${randomBytes(12).toString("hex")}`;
const keyBefore = process.env.BULKHEAD_ENCRYPTION_KEY;
let db: TestDatabase;
let scheduler: Scheduler;
let vendor: http.Server;
let vendorUrl = "";
const heard: string[] = [];
let acme: TenantStore;
let globex: TenantStore;

beforeAll(async () => {
  process.env.BULKHEAD_ENCRYPTION_KEY = randomBytes(32).toString("hex");
  db = await freshDatabase();
  // Echoes the Authorization header it got, as a careless vendor might.
  vendor = http.createServer((req, res) => {
    heard.push(req.headers.authorization ?? "");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ you_sent: req.headers.authorization ?? null }));
  });
  await new Promise<void>((resolve) => vendor.listen(0, "127.0.0.1", resolve));
  vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
  [ACME, GLOBEX] = [asTenantId((await makeTenant(db)).id), asTenantId((await makeTenant(db)).id)];
  scheduler = makeScheduler(db, { handlers: createBuiltInHandlers({ httpAllow: ["127.0.0.1"] }), ownerId: "credentials" });
  await scheduler.start();
  [acme, globex] = [await db.storage.tenant(ACME), await db.storage.tenant(GLOBEX)];
  const credential = { kind: "api_key" as const, expiresAt: null, refreshUrl: null, refreshToken: null, description: null };
  await acme.createCredential({ ...credential, id: "vendor", name: "Vendor", value: JSON.stringify({ header: `Bearer ${SECRET}`, token: SECRET }) });
  await globex.createCredential({ ...credential, id: "globex-only", name: "Globex", value: "globex-secret-value" });
});
afterAll(async () => {
  await scheduler.stop();
  await new Promise((resolve) => vendor.close(resolve));
  await db.drop();
  if (keyBefore === undefined) delete process.env.BULKHEAD_ENCRYPTION_KEY;
  else process.env.BULKHEAD_ENCRYPTION_KEY = keyBefore;
});

async function run(tenantId: string, blocks: unknown[]) {
  const [id] = await insertInstancesOf(db, tenantId, await insertSequence(db, tenantId, blocks), 1, { data: { ref: "credentials://vendor/token" }, config: null });
  return id!;
}

const stateOf = async (id: string) => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state as string;
const everything = async () =>
  JSON.stringify((await db.sql.query("SELECT t::text AS row FROM task_instances t UNION ALL SELECT o::text FROM block_outputs o UNION ALL SELECT w::text FROM worker_tasks w UNION ALL SELECT c::text FROM credentials c UNION ALL SELECT a::text FROM instance_audit_log a")).rows);
const failure = async (id: string) =>
  (await db.sql.query("SELECT output->>'message' AS message FROM block_outputs WHERE instance_id = $1 ORDER BY created_at DESC LIMIT 1", [id])).rows[0]?.message as string | undefined;

describe("credentials in step params", () => {
  it("the vendor gets the value; no output, context or row holds it", async () => {
    const id = await run(ACME, [{ type: "step", id: "call", handler: "http_request", params: { url: `${vendorUrl}/charge`, headers: { authorization: "credentials://vendor/header" } } }]);
    await expect.poll(() => stateOf(id), { timeout: 10_000 }).toBe("completed");
    expect(heard).toContain(`Bearer ${SECRET}`);
    const { rows } = await db.sql.query("SELECT output FROM block_outputs WHERE instance_id = $1", [id]);
    expect(JSON.stringify(rows[0].output)).toContain("[credential]");
    expect(await everything()).not.toContain(SECRET);
  });

  it("a reference made by a template resolves too", async () => {
    heard.length = 0;
    const id = await run(ACME, [{ type: "step", id: "call", handler: "http_request", params: { url: `${vendorUrl}/t`, headers: { authorization: "{{ context.data.ref }}" } } }]);
    await expect.poll(() => stateOf(id), { timeout: 10_000 }).toBe("completed");
    expect(heard).toEqual([SECRET]);
    expect(await everything()).not.toContain(SECRET);
  });

  it("another tenant's credential fails the step exactly like a missing one", async () => {
    const step = (ref: string) => [{ type: "step", id: "call", handler: "http_request", params: { url: vendorUrl, headers: { authorization: ref } } }];
    const foreign = await run(ACME, step("credentials://globex-only"));
    const missing = await run(ACME, step("credentials://no-such"));
    await expect.poll(() => stateOf(foreign), { timeout: 10_000 }).toBe("failed");
    await expect.poll(() => stateOf(missing), { timeout: 10_000 }).toBe("failed");
    expect(await failure(foreign)).toBe("credentials: no credential registered with id 'globex-only'");
    expect(await failure(missing)).toBe("credentials: no credential registered with id 'no-such'");
  });

  it("a disabled credential and a missing field fail the step for good, with N's messages", async () => {
    const credential = { kind: "basic" as const, expiresAt: null, refreshUrl: null, refreshToken: null, description: null };
    await acme.createCredential({ ...credential, id: "off", name: "Off", value: "{}" });
    await acme.updateCredential("off", { enabled: false });
    const disabled = await run(ACME, [{ type: "step", id: "s", handler: "noop", params: { key: "credentials://off" } }]);
    const noField = await run(ACME, [{ type: "step", id: "s", handler: "noop", params: { key: "credentials://vendor/nope" } }]);
    await expect.poll(() => stateOf(disabled), { timeout: 10_000 }).toBe("failed");
    await expect.poll(() => stateOf(noField), { timeout: 10_000 }).toBe("failed");
    expect(await failure(disabled)).toBe("credentials: credential 'off' is disabled");
    expect(await failure(noField)).toBe("credentials: credential 'vendor' has no field 'nope'");
  });

  it("a worker task keeps the reference; the claimant's poll gets the value", async () => {
    const id = await run(ACME, [{ type: "step", id: "ext", handler: "vendor_worker", params: { token: "credentials://vendor/token" } }]);
    await expect.poll(async () => (await acme.listWorkerTasks({ limit: 10, offset: 0 })).filter((t) => t.instanceId === id).length, { timeout: 10_000 }).toBe(1);
    const listed = (await acme.listWorkerTasks({ limit: 10, offset: 0 })).find((t) => t.instanceId === id)!;
    expect(listed.params).toEqual({ token: "credentials://vendor/token" });
    expect(await everything()).not.toContain(SECRET);
  });
});

describe("keys", () => {
  it("the stored value is sealed under the key; a rotation reads it with the old key and rewrites it under the new one on use", async () => {
    const stored = async () => (await db.sql.query("SELECT value FROM credentials WHERE tenant_id = $1 AND id = 'vendor'", [ACME])).rows[0].value as string;
    const oldKey = process.env.BULKHEAD_ENCRYPTION_KEY!;
    const sealedBefore = await stored();
    expect(sealedBefore).toMatch(/^enc:v1:/);
    const newKey = randomBytes(32).toString("hex");
    process.env.BULKHEAD_ENCRYPTION_KEY = newKey;
    process.env.BULKHEAD_OLD_ENCRYPTION_KEY = oldKey;
    try {
      heard.length = 0;
      const id = await run(ACME, [{ type: "step", id: "call", handler: "http_request", params: { url: vendorUrl, headers: { authorization: "credentials://vendor/header" } } }]);
      await expect.poll(() => stateOf(id), { timeout: 10_000 }).toBe("completed");
      expect(heard).toEqual([`Bearer ${SECRET}`]);
      const sealedAfter = await stored();
      expect(sealedAfter).not.toBe(sealedBefore);
      expect(JSON.parse(open(sealedAfter, keyringFromEnv({ BULKHEAD_ENCRYPTION_KEY: newKey }))).token).toBe(SECRET);
    } finally {
      process.env.BULKHEAD_ENCRYPTION_KEY = oldKey;
      delete process.env.BULKHEAD_OLD_ENCRYPTION_KEY;
    }
  });
});
