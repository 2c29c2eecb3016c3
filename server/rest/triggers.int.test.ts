// Triggers and webhooks (wire-format L) over REST: create, read, list, delete and the 405 of
// PUT/PATCH; /fire with and without a shared secret; the public signed webhook with every check
// in its order (timestamp window, nonce shape and single use, signature, JSON), its deliveries,
// and the tenant's webhook rate (429 for the flooded tenant, 202 for its neighbour). Another
// tenant's slug answers exactly as the same slug does once nobody has it.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { tenantLimitsCache } from "../tenant-limits-cache.ts";
import { webhookSignature } from "../webhooks.ts";
import { call, expectSameReply, operatorKey, sequenceJson, tenantWithKey, type Reply } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let flow: string;

const SECRET = "s3cret-signing-key";
const slugOf = (what: string) => `${what}-${randomBytes(4).toString("hex")}`;
const errorOf = (reply: Reply) => (reply.json() as { error: string }).error;
const triggerRows = async () => (await db.sql.query("SELECT tenant_id, slug, sequence_name, sequence_version, trigger_type FROM triggers ORDER BY 1, 2")).rows;
const instanceRow = async (id: string) =>
  (await db.sql.query("SELECT tenant_id, state, priority, timezone, idempotency_key, context->'data' AS data, metadata FROM task_instances WHERE id = $1", [id])).rows[0];
const deliveries = async (slug: string) =>
  (await db.sql.query("SELECT source, status, outcome, instance_id FROM trigger_deliveries WHERE slug = $1 ORDER BY id", [slug])).rows;

/** A sequence of the tenant's named `name` at `version`, through the API; its id. */
async function sequence(tenant: { id: string; key: string }, name: string, version = 1): Promise<string> {
  const reply = await call(db, "POST", "/sequences", { key: tenant.key, body: sequenceJson(tenant.id, { name, version }) });
  expect(reply.status).toBe(201);
  return (reply.json() as { id: string }).id;
}

const create = (tenant: { key: string }, body: Record<string, unknown>) => call(db, "POST", "/triggers", { key: tenant.key, body: { sequence_name: flow, ...body } });

/** A webhook request as a sender signs it; `tamper` changes what is sent after signing. */
function signed(slug: string, body: string, options: { secret?: string; timestamp?: number; nonce?: string; headers?: Record<string, string> } = {}) {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = options.nonce ?? randomBytes(12).toString("hex");
  const signature = webhookSignature(options.secret ?? SECRET, timestamp, nonce, Buffer.from(body));
  const headers = { "content-type": "application/json", "x-trigger-timestamp": timestamp, "x-trigger-nonce": nonce, "x-orch8-signature": signature, ...options.headers };
  return { send: () => call(db, "POST", `/webhooks/${slug}`, { raw: body, headers }), nonce, headers };
}

// With a key, as `npm start` always has one: secrets are sealed.
const keyBefore = process.env.BULKHEAD_ENCRYPTION_KEY;
beforeAll(async () => {
  process.env.BULKHEAD_ENCRYPTION_KEY = randomBytes(32).toString("hex");
  db = await freshDatabase();
  acme = await tenantWithKey(db);
  globex = await tenantWithKey(db);
  flow = `flow-${randomBytes(3).toString("hex")}`;
  await sequence(acme, flow);
  await sequence(globex, flow);
});
afterAll(async () => {
  await db.drop();
  if (keyBefore === undefined) delete process.env.BULKHEAD_ENCRYPTION_KEY;
  else process.env.BULKHEAD_ENCRYPTION_KEY = keyBefore;
});

describe("POST /triggers", () => {
  it("creates a TriggerDef (201): defaults filled, the secret redacted, version omitted unless pinned; read, listed oldest first, audited", async () => {
    const slug = slugOf("order-placed");
    const created = await create(acme, { slug, secret: SECRET });
    expect(created.status).toBe(201);
    expect(created.json()).toEqual({
      slug, sequence_name: flow, tenant_id: acme.id, namespace: "default", enabled: true, secret: "[REDACTED]", trigger_type: "webhook", config: null,
      created_at: expect.stringMatching(/Z$/), updated_at: expect.stringMatching(/Z$/),
    });
    const pinned = await create(acme, { slug: slugOf("pinned"), version: 1, trigger_type: "event", config: { note: 1 } });
    expect(pinned.json()).toMatchObject({ version: 1, trigger_type: "event", config: { note: 1 } });
    expect(pinned.json()).not.toHaveProperty("secret");

    expect((await call(db, "GET", `/triggers/${slug}`, { key: acme.key })).json()).toEqual(created.json());
    const list = (await call(db, "GET", "/triggers", { key: acme.key })).json() as { slug: string }[];
    expect(list.map((t) => t.slug).slice(-2)).toEqual([slug, (pinned.json() as { slug: string }).slug]);
    expect(((await call(db, "GET", "/triggers?limit=1", { key: acme.key })).json() as unknown[]).length).toBe(1);

    const { rows } = await db.sql.query("SELECT details FROM audit_log WHERE tenant_id = $1 AND action = 'trigger.create' AND details->>'slug' = $2", [acme.id, slug]);
    expect(rows).toEqual([{ details: { slug, trigger_type: "webhook", namespace: "default", sequence_name: flow, version: null, secret: true } }]);
    // The secret is sealed at rest: the row never holds it.
    const { rows: [row] } = await db.sql.query("SELECT secret FROM triggers WHERE slug = $1", [slug]);
    expect(row.secret).toMatch(/^enc:v1:/);
    expect(row.secret).not.toContain(SECRET);
  });

  it("refuses what the spec refuses, with its words, and changes nothing", async () => {
    const taken = slugOf("taken");
    expect((await create(globex, { slug: taken })).status).toBe(201);
    const before = await triggerRows();
    const cases: [Record<string, unknown>, number, string | RegExp][] = [
      [{ slug: "" }, 400, "invalid argument: slug and sequence_name are required"],
      [{ slug: "x", sequence_name: "" }, 400, "invalid argument: slug and sequence_name are required"],
      [{ slug: "a".repeat(256) }, 400, "invalid argument: slug must not exceed 255 characters"],
      [{ slug: "x", sequence_name: "s".repeat(256) }, 400, "invalid argument: sequence_name must not exceed 255 characters"],
      [{ slug: "no/slash" }, 400, /^invalid argument: slug may hold only letters/],
      [{ slug: "x", secret: "" }, 400, /^invalid argument: trigger secret cannot be empty; /],
      [{ slug: "x", trigger_type: "nats" }, 400, "invalid argument: trigger_type 'nats' is not supported"],
      [{ slug: "x", sequence_name: "no-such-flow" }, 404, "not found: sequence no-such-flow in namespace default"],
      [{ slug: "x", version: 9 }, 404, `not found: sequence ${flow} in namespace default`],
      [{ slug: "x", namespace: "other" }, 404, `not found: sequence ${flow} in namespace other`],
      // Slugs are unique across tenants: another tenant's is taken (it reveals only that).
      [{ slug: taken }, 409, `already exists: trigger '${taken}'`],
    ];
    for (const [body, status, error] of cases) {
      const reply = await create(acme, body);
      expect({ body, status: reply.status }).toEqual({ body, status });
      expect(errorOf(reply)).toMatch(error);
    }
    expect((await create(globex, { slug: taken })).status).toBe(409);
    const unknownType = await create(acme, { slug: "x", trigger_type: "carrier_pigeon" });
    expect(unknownType.status).toBe(422);
    expect((await call(db, "POST", "/triggers", { key: acme.key, body: { slug: "x" } })).status).toBe(422);
    expect(await triggerRows()).toEqual(before);
    // A refused create gives its slug claim back: "x" is anyone's.
    expect((await create(globex, { slug: "x" })).status).toBe(201);
  });

  it("has no update: PUT and PATCH answer 405", async () => {
    for (const method of ["PUT", "PATCH"]) {
      const reply = await call(db, method, "/triggers/anything", { key: acme.key, body: { sequence_name: flow } });
      expect(reply.status).toBe(405);
    }
  });
});

describe("another tenant's slug", () => {
  it("reads, fires and deletes exactly as the same slug does once nobody has it", async () => {
    const slug = slugOf("globex-signup");
    await create(globex, { slug });
    const asked = async () => Promise.all([
      call(db, "GET", `/triggers/${slug}`, { key: acme.key }),
      call(db, "DELETE", `/triggers/${slug}`, { key: acme.key }),
      call(db, "POST", `/triggers/${slug}/fire`, { key: acme.key, body: {} }),
      call(db, "GET", `/triggers/${slug}`, { key: acme.key, headers: { "x-tenant-id": globex.id } }),
    ]);
    const foreign = await asked();
    expect((await call(db, "GET", `/triggers/${slug}`, { key: globex.key })).status).toBe(200);
    expect((await call(db, "DELETE", `/triggers/${slug}`, { key: globex.key })).status).toBe(204);
    const missing = await asked();
    expect(missing[0]!.json()).toEqual({ error: `not found: trigger '${slug}'` });
    foreign.forEach((reply, i) => expectSameReply(reply, missing[i]!));
  });

  it("is the operator's to manage once the operator names the tenant", async () => {
    const slug = slugOf("ops");
    await create(globex, { slug });
    const key = await operatorKey(db);
    expect((await call(db, "GET", `/triggers/${slug}`, { key, headers: { "x-tenant-id": globex.id } })).json()).toMatchObject({ tenant_id: globex.id, slug });
    const unnamed = await call(db, "GET", "/triggers", { key });
    expect(unnamed.json()).toEqual({ error: "invalid argument: X-Tenant-Id header is required" });
  });
});

describe("DELETE /triggers/{slug}", () => {
  it("removes the trigger (204) and frees its slug for any tenant", async () => {
    const slug = slugOf("short-lived");
    await create(acme, { slug });
    const removed = await call(db, "DELETE", `/triggers/${slug}`, { key: acme.key });
    expect(removed.status).toBe(204);
    expect(removed.text).toBe("");
    expect((await call(db, "DELETE", `/triggers/${slug}`, { key: acme.key })).status).toBe(404);
    expect((await create(globex, { slug })).status).toBe(201);
  });
});

describe("POST /triggers/{slug}/fire", () => {
  it("starts the sequence with the body as context.data: scheduled, Normal, UTC, no idempotency key, stamped metadata", async () => {
    const slug = slugOf("fire-free");
    await create(acme, { slug, trigger_type: "event" });
    for (const data of [{ order: 7 }, [1, 2], "text", null]) {
      const fired = await call(db, "POST", `/triggers/${slug}/fire`, { key: acme.key, body: data });
      expect(fired.status).toBe(201);
      const body = fired.json() as { instance_id: string };
      expect(body).toEqual({ instance_id: expect.any(String), trigger: slug, sequence_name: flow });
      expect(await instanceRow(body.instance_id)).toEqual({
        tenant_id: acme.id, state: expect.stringMatching(/^(scheduled|running|completed)$/), priority: 1, timezone: "UTC", idempotency_key: null,
        data, metadata: { _trigger: slug, _trigger_type: "event", _trigger_event: { source: "http_fire" } },
      });
    }
    expect((await deliveries(slug)).map((d) => [d.source, d.status, d.outcome])).toEqual(Array(4).fill(["fire", 201, "instance created"]));
  });

  it("with a secret, wants x-trigger-secret: missing or different is 401 {\"error\":\"unauthorized\"}", async () => {
    const slug = slugOf("fire-secret");
    await create(acme, { slug, secret: SECRET });
    for (const headers of [{}, { "x-trigger-secret": "nope" }, { "x-trigger-secret": `${SECRET}x` }] as Record<string, string>[]) {
      const refused = await call(db, "POST", `/triggers/${slug}/fire`, { key: acme.key, body: {}, headers });
      expect(refused.status).toBe(401);
      expect(refused.text).toBe('{"error":"unauthorized"}');
    }
    const fired = await call(db, "POST", `/triggers/${slug}/fire`, { key: acme.key, body: {}, headers: { "x-trigger-secret": SECRET } });
    expect(fired.status).toBe(201);
  });

  it("looks the sequence up at every firing: the newest not deprecated, a pinned version even when deprecated, 404 when gone", async () => {
    const name = `versions-${randomBytes(3).toString("hex")}`;
    const v1 = await sequence(acme, name, 1);
    const v2 = await sequence(acme, name, 2);
    const latest = slugOf("latest");
    const pinned = slugOf("pinned");
    await create(acme, { slug: latest, sequence_name: name });
    await create(acme, { slug: pinned, sequence_name: name, version: 1 });
    const sequenceOf = async (slug: string) => {
      const fired = await call(db, "POST", `/triggers/${slug}/fire`, { key: acme.key, body: {} });
      const id = (fired.json() as { instance_id: string }).instance_id;
      return (await db.sql.query("SELECT sequence_id FROM task_instances WHERE id = $1", [id])).rows[0].sequence_id;
    };
    expect(await sequenceOf(latest)).toBe(v2);
    expect((await call(db, "POST", `/sequences/${v2}/deprecate`, { key: acme.key })).status).toBeLessThan(300);
    expect((await call(db, "POST", `/sequences/${v1}/deprecate`, { key: acme.key })).status).toBeLessThan(300);
    expect(await sequenceOf(pinned)).toBe(v1);
    const gone = await call(db, "POST", `/triggers/${latest}/fire`, { key: acme.key, body: {} });
    expect(gone.status).toBe(404);
    expect(gone.json()).toEqual({ error: `not found: sequence '${name}' for trigger '${latest}'` });
  });
});

describe("POST /webhooks/{slug} (public)", () => {
  let slug: string;
  beforeAll(async () => {
    slug = slugOf("vendor-hook");
    await create(acme, { slug, secret: SECRET });
  });

  it("starts the sequence (202) from a signed request with no API key, recording the sender's user agent", async () => {
    const request = signed(slug, '{"event":"paid","amount":12}', { headers: { "user-agent": "vendor/2.0" } });
    const reply = await request.send();
    expect(reply.status).toBe(202);
    const body = reply.json() as { instance_id: string };
    expect(body).toEqual({ instance_id: expect.any(String), trigger: slug });
    expect(await instanceRow(body.instance_id)).toMatchObject({
      tenant_id: acme.id, priority: 1, timezone: "UTC", data: { event: "paid", amount: 12 },
      metadata: { _trigger: slug, _trigger_type: "webhook", _trigger_event: { source: "public_webhook", user_agent: "vendor/2.0" } },
    });
  });

  it("answers every failed check with the same 401, and records each outcome", async () => {
    // Timestamps are taken when each request is signed, 30 s clear of the window's edges (300 s
    // back, 60 s ahead), so a slow run cannot carry one across an edge.
    const now = () => Math.floor(Date.now() / 1000);
    const before = (await deliveries(slug)).length;
    const attempts: [string, () => ReturnType<typeof signed>["headers"] | Record<string, string>][] = [
      ["wrong secret", () => signed(slug, "{}", { secret: "other" }).headers],
      ["no signature", () => ({ ...signed(slug, "{}").headers, "x-orch8-signature": "" })],
      ["padded signature", () => ((h) => ({ ...h, "x-orch8-signature": `${h["x-orch8-signature"]}=` }))(signed(slug, "{}").headers)],
      ["no timestamp", () => ({ ...signed(slug, "{}").headers, "x-trigger-timestamp": "" })],
      ["too old", () => signed(slug, "{}", { timestamp: now() - 330 }).headers],
      ["too far ahead", () => signed(slug, "{}", { timestamp: now() + 90 }).headers],
      ["short nonce", () => signed(slug, "{}", { nonce: "n".repeat(15) }).headers],
      ["nonce with a space", () => signed(slug, "{}", { nonce: "nonce with spaces!" }).headers],
    ];
    for (const [why, headersNow] of attempts) {
      const reply = await call(db, "POST", `/webhooks/${slug}`, { raw: "{}", headers: headersNow() });
      expect({ why, status: reply.status, text: reply.text }).toEqual({ why, status: 401, text: '{"error":"unauthorized"}' });
    }
    // The body as signed, changed by one byte.
    const tampered = signed(slug, '{"amount":1}');
    expect((await call(db, "POST", `/webhooks/${slug}`, { raw: '{"amount":2}', headers: tampered.headers })).status).toBe(401);
    // Edges of the window are accepted.
    expect((await signed(slug, "{}", { timestamp: now() - 270 }).send()).status).toBe(202);
    expect((await signed(slug, "{}", { timestamp: now() + 30 }).send()).status).toBe(202);
    const outcomes = (await deliveries(slug)).slice(before).map((d) => `${d.status} ${d.outcome}`);
    expect(outcomes).toEqual([
      "401 bad signature", "401 bad signature", "401 bad signature", "401 missing or malformed timestamp", "401 timestamp outside the replay window",
      "401 timestamp outside the replay window", "401 missing or malformed nonce", "401 missing or malformed nonce", "401 bad signature",
      "202 instance created", "202 instance created",
    ]);
  });

  it("takes a nonce once: a replay is 401 even with a valid signature, and a signed broken body still uses its nonce", async () => {
    const request = signed(slug, '{"once":true}');
    expect((await request.send()).status).toBe(202);
    const replay = await request.send();
    expect(replay.status).toBe(401);
    expect(replay.text).toBe('{"error":"unauthorized"}');

    const broken = signed(slug, '{"oops":');
    const first = await broken.send();
    expect(first.status).toBe(400);
    expect(errorOf(first)).toMatch(/^invalid argument: invalid webhook JSON: /);
    expect((await broken.send()).status).toBe(401);
    // Another slug's nonce space is its own.
    const other = slugOf("other-hook");
    await create(acme, { slug: other, secret: SECRET });
    expect((await signed(other, '{"once":true}', { nonce: request.nonce }).send()).status).toBe(202);
  });

  it("is 404 for an unknown slug, an event trigger and a disabled one; 401 for a webhook without a secret; 413 over 1 MiB", async () => {
    const unknown = await signed("nobody-has-this", "{}").send();
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toEqual({ error: "not found: webhook 'nobody-has-this'" });
    const event = slugOf("event-only");
    await create(acme, { slug: event, trigger_type: "event", secret: SECRET });
    expect((await signed(event, "{}").send()).json()).toEqual({ error: `not found: webhook '${event}'` });
    const disabled = slugOf("disabled");
    await create(acme, { slug: disabled, secret: SECRET });
    await db.sql.query("UPDATE triggers SET enabled = false WHERE slug = $1", [disabled]);
    expect((await signed(disabled, "{}").send()).status).toBe(404);
    expect((await call(db, "POST", `/triggers/${disabled}/fire`, { key: acme.key, body: {} })).json()).toEqual({ error: `invalid argument: trigger '${disabled}' is disabled` });

    const unsigned = slugOf("unsigned");
    await create(acme, { slug: unsigned });
    expect((await signed(unsigned, "{}").send()).status).toBe(401);

    const big = JSON.stringify({ pad: "x".repeat(1024 * 1024) });
    const tooBig = await signed(slug, big).send();
    expect(tooBig.status).toBe(413);
    expect(tooBig.contentType).toMatch(/^text\/plain/);
    // Under the 1 MiB body limit but over the context's 256 KiB: 413, and no instance.
    const before = (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE metadata->>'_trigger' = $1", [slug])).rows[0].n;
    const overContext = await signed(slug, JSON.stringify({ pad: "x".repeat(300_000) })).send();
    expect([overContext.status, errorOf(overContext)]).toEqual([413, "payload too large: context is 300010 bytes, exceeding the maximum of 262144 bytes"]);
    const overFire = await call(db, "POST", `/triggers/${slug}/fire`, { key: acme.key, body: { pad: "x".repeat(300_000) }, headers: { "x-trigger-secret": SECRET } });
    expect(overFire.status).toBe(413);
    expect((await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE metadata->>'_trigger' = $1", [slug])).rows[0].n).toBe(before);
    expect((await deliveries(slug)).slice(-2).map((d) => `${d.status} ${d.outcome}`)).toEqual(Array(2).fill("413 body over the context limit"));
  });

  it("holds a flooded tenant to its webhook rate (429) while another tenant's webhooks pass", async () => {
    const flooded = slugOf("flooded");
    const quiet = slugOf("quiet");
    await create(acme, { slug: flooded, secret: SECRET });
    await create(globex, { slug: quiet, secret: SECRET });
    await db.storage.setTenantLimits(acme.id, { webhookRatePerSec: 1 });
    tenantLimitsCache(db).invalidate();
    try {
      const replies = [];
      const started = Date.now();
      for (let i = 0; i < 12; i++) {
        replies.push((await signed(flooded, `{"n":${i}}`).send()).status);
        expect((await signed(quiet, `{"n":${i}}`).send()).status).toBe(202);
      }
      // A burst of twice the rate (2), then one more per second that passed.
      const accepted = replies.filter((s) => s === 202).length;
      expect(accepted).toBeLessThanOrEqual(2 + Math.ceil((Date.now() - started) / 1000));
      expect(replies.filter((s) => s === 429).length).toBe(12 - accepted);
      expect(replies.slice(0, 2)).toEqual([202, 202]);
      const refused = await signed(flooded, "{}").send();
      expect(refused.json()).toEqual({ error: "rate limit exceeded: public webhook request rate exceeded" });
      const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE metadata->>'_trigger' = $1", [flooded]);
      expect(rows[0].n).toBe(replies.filter((s) => s === 202).length);
    } finally {
      await db.storage.setTenantLimits(acme.id, { webhookRatePerSec: null });
      tenantLimitsCache(db).invalidate();
    }
  });
});
