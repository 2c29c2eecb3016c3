// Wire-format V's brief routes: POST /debug/template (a template resolved against the body's
// context and outputs, its placeholders one by one, and a bad template answered with `error`,
// never a 4xx) and GET /api/v1/metrics (operator keys only, a tenant key 403; the orch8_* names
// Orch8's clients read, with numbers once work ran).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TenantMetrics } from "../../engine/metrics/tenant-metrics.ts";
import { writeTenantMetrics } from "../../engine/storage/metrics.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { call, operatorKey, tenantWithKey } from "./testing.ts";

let db: TestDatabase;
let acme: { id: string; key: string };
beforeAll(async () => {
  db = await freshDatabase();
  acme = await tenantWithKey(db);
});
afterAll(() => db.drop());

describe("POST /debug/template", () => {
  const debug = (body: unknown, key = acme.key) => call(db, "POST", "/debug/template", { key, body });

  it("resolves the template against the given context and outputs, keeping a whole-string placeholder's type", async () => {
    const reply = await debug({
      template: "Hi {{context.data.name | upper}}, order {{outputs.fetch.id}}", context_data: { name: "ada" }, outputs: { fetch: { id: 7 } },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      result: "Hi ADA, order 7", result_type: "string",
      entries: [
        { expression: "context.data.name | upper", result: "ADA", result_type: "string" },
        { expression: "outputs.fetch.id", result: 7, result_type: "number" },
      ],
    });
    expect((await debug({ template: "{{config.limits}}", context_config: { limits: [1, 2] } })).json()).toMatchObject({ result: [1, 2], result_type: "array" });
    expect((await debug({ template: "plain" })).json()).toEqual({ result: "plain", result_type: "string", entries: [] });
  });

  it("answers a bad template with 200 and `error`, naming the placeholder that failed", async () => {
    const reply = await debug({ template: "{{context.data.x}} and {{nowhere.y}}", context_data: { x: 1 } });
    expect(reply.status).toBe(200);
    const body = reply.json() as { error: string; entries: { expression: string; error?: string }[] };
    expect(body.error).toMatch(/^template error: /);
    expect(body.entries.map((e) => [e.expression, "error" in e])).toEqual([["context.data.x", false], ["nowhere.y", true]]);
    // A missing template is the framework's 422; an operator key must name the tenant.
    expect((await debug({})).status).toBe(422);
    expect((await debug({ template: "x" }, await operatorKey(db))).json()).toEqual({ error: "invalid argument: X-Tenant-Id header is required" });
  });
});

describe("GET /api/v1/metrics", () => {
  it("serves Prometheus text with Orch8's names to an operator key, refuses a tenant key (403) and no key (401)", async () => {
    const metrics = new TenantMetrics();
    for (let i = 0; i < 3; i++) metrics.claimed(acme.id, 5);
    metrics.ended(acme.id, "completed");
    await writeTenantMetrics(db.sql, metrics.drain());

    const reply = await call(db, "GET", "/metrics", { key: await operatorKey(db) });
    expect(reply.status).toBe(200);
    expect(reply.contentType).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(reply.text).toMatch(/^orch8_instances_claimed_total 3$/m);
    expect(reply.text).toMatch(/^orch8_instances_completed_total 1$/m);
    expect(reply.text).toMatch(/^# TYPE orch8_queue_depth gauge$/m);
    expect(reply.text).toContain("bulkhead_backend_up");

    const tenant = await call(db, "GET", "/metrics", { key: acme.key });
    expect([tenant.status, tenant.json()]).toEqual([403, { error: "forbidden: metrics span every tenant: an operator API key is required" }]);
    expect((await call(db, "GET", "/metrics")).status).toBe(401);
  });
});
