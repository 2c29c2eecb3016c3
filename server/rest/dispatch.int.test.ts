// The dispatcher's own answers, before and around the handlers: health, routing, API keys, the
// body extractor (415, 413, 400), path parameters and the 500 that leaks nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Storage, StorageBackends } from "../../engine/storage/index.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import { createApiKey } from "../control/api-keys.ts";
import { BODY_LIMIT } from "./body.ts";
import { handleRest, matchRoute } from "./index.ts";
import { ROUTES } from "./routes.ts";
import { call, createSequence, sequenceJson, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
});
afterAll(() => db.drop());

const PLAIN = "text/plain; charset=utf-8";

describe("health", () => {
  it("live: 200 with an empty body, no key needed", async () => {
    const reply = await call(db, "GET", "/health/live");
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
  });

  it("ready: 200 while every backend answers, no key needed", async () => {
    const reply = await call(db, "GET", "/health/ready");
    expect(reply.status).toBe(200);
    expect(reply.text).toBe("");
  });

  it("ready: 503 when a backend does not answer, naming no backend", async () => {
    // Port 1 refuses connections: a backend that is down.
    const backends = new Map([...db.config.backends, ["eu-1", "postgresql://bulkhead@127.0.0.1:1/none"]]);
    const storage = new Storage(new StorageBackends(backends, { poolSize: 1 }));
    try {
      const response = await handleRest(new Request("http://bulkhead.test/api/v1/health/ready"), { ...db, storage });
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ error: "unavailable: storage is not reachable" });
    } finally {
      await storage.close();
    }
  });
});

describe("routing", () => {
  it("answers an unknown path, or a known path with another method, with a JSON 404", async () => {
    for (const [method, path] of [["GET", "/nope"], ["DELETE", "/instances"], ["GET", "/instances/batch/x"], ["GET", ""]] as const) {
      const reply = await call(db, method, path, { key: acme.key });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.json()).toEqual({ error: "not found: route not found" });
    }
    const outside = await handleRest(new Request("http://bulkhead.test/api/v2/health/live"), db);
    expect(outside.status).toBe(404);
  });

  it("serves HEAD as GET", async () => {
    expect((await call(db, "HEAD", "/health/live")).status).toBe(200);
    expect((await call(db, "HEAD", "/instances")).status).toBe(401);
  });

  it("prefers a literal segment over a parameter", () => {
    expect(matchRoute("POST", "/api/v1/instances/batch")?.route.path).toBe("/instances/batch");
    expect(matchRoute("GET", "/api/v1/instances/abc")?.route.path).toBe("/instances/{id}");
    expect(matchRoute("GET", "/api/v1/instances/")).toBeNull();
  });

  it("has one route per method and path, each under an access rule, tenant routes with a 404 noun", () => {
    const keys = ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(expect.arrayContaining([
      "GET /health/live", "GET /health/ready", "POST /sequences", "GET /sequences/{id}", "POST /instances",
      "POST /instances/batch", "GET /instances/{id}", "GET /instances", "GET /instances/{id}/outputs", "POST /tenants",
    ]));
    for (const route of ROUTES) {
      if (route.path.includes("{id}")) expect(route.access, route.path).toBe("tenant");
      expect(route.notFound).toMatch(/^[a-z ]+$/);
    }
  });

  it("refuses a path id that is not a UUID with a plain-text 400, after authentication", async () => {
    const reply = await call(db, "GET", "/instances/not-a-uuid", { key: acme.key });
    expect(reply.status).toBe(400);
    expect(reply.contentType).toBe(PLAIN);
    expect(reply.text).toMatch(/^Invalid URL: /);
    expect((await call(db, "GET", "/instances/not-a-uuid")).status).toBe(401);
  });
});

describe("API keys", () => {
  const path = "/instances";

  it("401 without a key, with a JSON error and a WWW-Authenticate header", async () => {
    const reply = await call(db, "GET", path);
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual({ error: "unauthorized: missing API key (send it in x-api-key or Authorization: Bearer)" });
    expect(reply.headers).toContainEqual(["www-authenticate", "Bearer"]);
  });

  it("401 alike for an unknown, a malformed and a revoked key", async () => {
    const tenant = await makeTenant(db);
    const revoked = await createApiKey(db.prisma, { tenantId: tenant.id });
    await db.prisma.apiKey.update({ where: { id: revoked.id }, data: { revokedAt: new Date() } });
    const answers = await Promise.all(
      [revoked.secret, "bh_unknown", "nonsense"].map((key) => call(db, "GET", path, { key })),
    );
    for (const reply of answers) {
      expect(reply.status).toBe(401);
      expect(reply.json()).toEqual({ error: "unauthorized: invalid API key" });
    }
  });

  it("accepts the key in x-api-key or as a Bearer token", async () => {
    expect((await call(db, "GET", path, { key: acme.key })).status).toBe(200);
    expect((await call(db, "GET", path, { headers: { authorization: `Bearer ${acme.key}` } })).status).toBe(200);
    expect((await call(db, "GET", path, { headers: { authorization: `Basic ${acme.key}` } })).status).toBe(401);
  });

  it("authenticates before reading the body", async () => {
    const reply = await call(db, "POST", "/sequences", { raw: "{broken", headers: { "content-type": "application/json" } });
    expect(reply.status).toBe(401);
  });
});

describe("request bodies", () => {
  const post = (raw: BodyInit, headers: Record<string, string> = { "content-type": "application/json" }) =>
    call(db, "POST", "/sequences", { key: acme.key, raw, headers });

  it("415 in plain text without Content-Type: application/json", async () => {
    // Bytes, not a string: a string body would get `text/plain` from the Request itself.
    const body = new TextEncoder().encode(JSON.stringify(sequenceJson(acme.id)));
    const cases: Record<string, string>[] = [{}, { "content-type": "text/plain" }, { "content-type": "application/x-www-form-urlencoded" }];
    for (const headers of cases) {
      const reply = await post(body, headers);
      expect(reply.status).toBe(415);
      expect(reply.contentType).toBe(PLAIN);
      expect(reply.text).toBe("Expected request with `Content-Type: application/json`");
    }
  });

  it("accepts JSON media types with parameters or a +json suffix", async () => {
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/vnd.bulkhead+json"]) {
      const reply = await post(JSON.stringify(sequenceJson(acme.id)), { "content-type": type });
      expect(reply.status, type).toBe(201);
    }
  });

  it("400 in plain text for malformed JSON or an empty body", async () => {
    for (const raw of ["{\"id\": ", "", "{'a': 1}", new Uint8Array([0x7b, 0xff, 0x7d])]) {
      const reply = await post(raw);
      expect(reply.status).toBe(400);
      expect(reply.contentType).toBe(PLAIN);
      expect(reply.text).toMatch(/^Failed to parse the request body as JSON/);
    }
  });

  it("400 in plain text for JSON nested deeper than the walkers can follow", async () => {
    const depth = 100_000;
    const reply = await call(db, "POST", "/instances", {
      key: acme.key,
      raw: `{"context":{"data":${"[".repeat(depth)}${"]".repeat(depth)}}}`,
      headers: { "content-type": "application/json" },
    });
    expect(reply.status).toBe(400);
    expect(reply.contentType).toBe(PLAIN);
    expect(reply.text).toBe("Failed to parse the request body as JSON: nesting exceeds the maximum depth of 512");
  });

  it("413 in plain text for a body over 10 MiB, streamed or declared", async () => {
    const count = async () => (await db.sql.query("SELECT count(*)::int AS n FROM sequences WHERE tenant_id = $1", [acme.id])).rows[0].n;
    const before = await count();
    const oversized = JSON.stringify({ ...sequenceJson(acme.id), padding: "x".repeat(BODY_LIMIT) });
    const streamed = await post(new Blob([oversized]).stream());
    expect(streamed.status).toBe(413);
    expect(streamed.contentType).toBe(PLAIN);
    expect(streamed.text).toMatch(/length limit/);

    const declared = await post("{}", { "content-type": "application/json", "content-length": String(BODY_LIMIT + 1) });
    expect(declared.status).toBe(413);
    expect(await count()).toBe(before);
  });

  it("accepts a body of exactly 10 MiB (the limit is inclusive) up to the handler", async () => {
    const base = JSON.stringify(sequenceJson(acme.id, { padding: "" }));
    const exact = base.replace('"padding":""', `"padding":"${"x".repeat(BODY_LIMIT - base.length)}"`);
    expect(Buffer.byteLength(exact)).toBe(BODY_LIMIT);
    expect((await post(exact)).status).toBe(201);
  });

  it("accepts a ~123 KB body", async () => {
    const sequenceId = await createSequence(db, acme);
    const data = { blob: "y".repeat(123_000) };
    const reply = await call(db, "POST", "/instances", {
      key: acme.key,
      body: { sequence_id: sequenceId, tenant_id: acme.id, namespace: "default", context: { data } },
    });
    expect(reply.status).toBe(201);
    const { id } = reply.json() as { id: string };
    const { rows } = await db.sql.query("SELECT context -> 'data' AS data FROM task_instances WHERE id = $1", [id]);
    expect(rows[0].data).toEqual(data);
  });
});

describe("unexpected failures", () => {
  it("answer 500 with a fixed body: no message, no stack", async () => {
    // A storage whose pools are closed fails with pg's own error, which must not reach the client.
    const storage = new Storage(new StorageBackends(db.config.backends, { poolSize: 1 }));
    await storage.close();
    const response = await handleRest(
      new Request("http://bulkhead.test/api/v1/instances", { headers: { "x-api-key": acme.key } }),
      { ...db, storage },
    );
    expect(response.status).toBe(500);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.text()).toBe('{"error":"internal server error"}');
  });
});
