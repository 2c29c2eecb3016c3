// Text PostgreSQL cannot store (a lone UTF-16 surrogate, NUL) at every door, generated from the
// route table and the tRPC router, so a new route or procedure is covered without being listed:
// each answers 400 naming the field, never a 5xx; nothing is written; the service answers after.
import { randomUUID } from "node:crypto";
import type { AnyProcedure } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../test/db.ts";
import { insertSequence, makeUser } from "../test/factories.ts";
import { appRouter } from "./api/root.ts";
import { createContext } from "./api/trpc.ts";
import { UUID_PARAMETERS } from "./rest/index.ts";
import { ROUTES } from "./rest/routes.ts";
import { call, operatorKey, sequenceJson, tenantWithKey } from "./rest/testing.ts";

const BAD = [
  { name: "a lone surrogate", text: "a\ud800b", message: "contains an unpaired UTF-16 surrogate" },
  { name: "a NUL", text: "a\u0000b", message: "contains a NUL (\\u0000) character" },
];

let db: TestDatabase;
let tenant: { id: string; key: string };
let opKey: string;
let userId: string;
let sequenceId: string;
beforeAll(async () => {
  db = await freshDatabase();
  tenant = await tenantWithKey(db);
  opKey = await operatorKey(db);
  // Passes every gate: an operator and an admin of the tenant.
  userId = (await makeUser(db, { isOperator: true, memberOf: [[tenant.id, "admin"]] })).id;
  sequenceId = await insertSequence(db, tenant.id, [{ type: "step", id: "one", handler: "noop" }], "hygiene");
});
afterAll(() => db.drop());

const instanceCount = async () => (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1", [tenant.id])).rows[0].n;

describe("REST", () => {
  const withBody = ROUTES.filter((route) => route.body);

  it("has routes with a body to probe", () => {
    expect(withBody.length).toBeGreaterThan(10);
  });

  for (const bad of BAD) {
    for (const route of withBody) {
      it(`${route.method} ${route.path}: ${bad.name} in the body is a 400 naming the field`, async () => {
        const path = route.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => (UUID_PARAMETERS.has(name) ? randomUUID() : "x"));
        const key = route.access === "operator" ? opKey : tenant.key;
        const reply = await call(db, route.method, path, { key, body: { tenant_id: tenant.id, probe: { deep: [bad.text] } } });
        expect({ status: reply.status, body: reply.json() }).toEqual({ status: 400, body: { error: `invalid argument: probe.deep[0]: ${bad.message}` } });
      });
    }
  }

  // A NUL can reach a path or a query percent-encoded (a lone surrogate cannot: it is not UTF-8,
  // so it fails to decode, a 400 of its own). Each is a 400 naming the parameter, public routes too.
  const NUL_MESSAGE = "contains a NUL (\\u0000) character";
  const keyOf = (route: (typeof ROUTES)[number]) => (route.access === "operator" ? opKey : tenant.key);
  const fill = (path: string, bad?: string) =>
    path.replace(/\{([a-z_]+)\}/g, (_, name: string) => (UUID_PARAMETERS.has(name) ? randomUUID() : name === bad ? "a%00b" : "x"));

  for (const route of ROUTES) {
    for (const [, name] of route.path.matchAll(/\{([a-z_]+)\}/g)) {
      if (UUID_PARAMETERS.has(name!)) continue;
      it(`${route.method} ${route.path}: a NUL in {${name}} is a 400 naming it`, async () => {
        const reply = await call(db, route.method, fill(route.path, name), { key: keyOf(route) });
        expect({ status: reply.status, body: reply.json() }).toEqual({ status: 400, body: { error: `invalid argument: ${name}: ${NUL_MESSAGE}` } });
      });
    }
    it(`${route.method} ${route.path}: a NUL in a query value is a 400 naming it`, async () => {
      const reply = await call(db, route.method, `${fill(route.path)}?namespace=a%00b`, { key: keyOf(route) });
      expect({ status: reply.status, body: reply.json() }).toEqual({ status: 400, body: { error: `invalid argument: namespace: ${NUL_MESSAGE}` } });
    });
  }

  it("a sequence name, instance context and idempotency key with bad text are refused, and nothing is written", async () => {
    const before = await instanceCount();
    const named = await call(db, "POST", "/sequences", { key: tenant.key, body: { ...sequenceJson(tenant.id), name: "a\ud800b" } });
    expect({ status: named.status, body: named.json() }).toEqual({ status: 400, body: { error: "invalid argument: name: contains an unpaired UTF-16 surrogate" } });
    const context = await call(db, "POST", "/instances", { key: tenant.key, body: { sequence_id: sequenceId, tenant_id: tenant.id, namespace: "default", context: { data: { v: "x\u0000" } } } });
    expect(context.json()).toEqual({ error: "invalid argument: context.data.v: contains a NUL (\\u0000) character" });
    // Two keys that differ only in a lone surrogate must not both become U+FFFD and dedupe to one instance.
    const keyed = await call(db, "POST", "/instances", { key: tenant.key, body: { sequence_id: sequenceId, tenant_id: tenant.id, namespace: "default", idempotency_key: "k\udc00" } });
    expect(keyed.status).toBe(400);
    expect(await instanceCount()).toBe(before);
    expect((await call(db, "GET", "/health/live")).status).toBe(200);
  });
});

describe("name-like fields", () => {
  const huge = "n".repeat(1024 * 1024);

  it("a sequence name, namespace or handler over 255 characters is a 422 naming the field and the limit; 255 is fine", async () => {
    for (const [field, body] of [
      ["name", { ...sequenceJson(tenant.id), name: huge }],
      ["namespace", { ...sequenceJson(tenant.id), namespace: "s".repeat(256) }],
      ["blocks[0].handler", { ...sequenceJson(tenant.id), blocks: [{ type: "step", id: "one", handler: "h".repeat(256) }] }],
    ] as const) {
      const reply = await call(db, "POST", "/sequences", { key: tenant.key, body });
      expect({ status: reply.status, text: reply.text }).toEqual({
        status: 422, text: `Failed to deserialize the JSON body into the target type: ${field}: must be at most 255 characters`,
      });
    }
    expect((await call(db, "POST", "/sequences", { key: tenant.key, body: { ...sequenceJson(tenant.id), name: "n".repeat(255) } })).status).toBe(201);
  });

  it("an instance's idempotency and concurrency keys over 255 characters are a 422, and nothing is written", async () => {
    const before = await instanceCount();
    for (const field of ["idempotency_key", "concurrency_key"]) {
      const reply = await call(db, "POST", "/instances", { key: tenant.key, body: { sequence_id: sequenceId, tenant_id: tenant.id, namespace: "default", [field]: huge } });
      expect({ status: reply.status, text: reply.text }).toEqual({
        status: 422, text: `Failed to deserialize the JSON body into the target type: ${field}: must be at most 255 characters`,
      });
    }
    expect(await instanceCount()).toBe(before);
  });

  it("tRPC sequences.create refuses a 1 MiB name with BAD_REQUEST, not a 500", async () => {
    const answer = await trpc("sequences.create", { tenantId: tenant.id, sequence: { ...sequenceJson(tenant.id), name: huge } });
    expect(answer.status).toBeLessThan(500);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.body.error?.message).toContain("must be at most 255 characters");
  });
});

const PROCEDURES = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;

async function trpc(path: string, input: unknown) {
  const url = new URL(`http://localhost/api/trpc/${path}`);
  const mutation = PROCEDURES[path]!._def.type === "mutation";
  if (!mutation) url.searchParams.set("input", JSON.stringify(input));
  const request = new Request(url, mutation ? { method: "POST", body: JSON.stringify(input), headers: { "content-type": "application/json" } } : undefined);
  const response = await fetchRequestHandler({ endpoint: "/api/trpc", req: request, router: appRouter, createContext: () => createContext(db, userId) });
  return { status: response.status, body: (await response.json()) as { error?: { message: string; data: { code: string } } } };
}

describe("tRPC", () => {
  it("has procedures to probe", () => {
    expect(Object.keys(PROCEDURES).length).toBeGreaterThan(30);
  });

  for (const bad of BAD) {
    for (const path of Object.keys(PROCEDURES)) {
      it(`${path}: ${bad.name} in the input is BAD_REQUEST naming the field`, async () => {
        const before = await instanceCount();
        const answer = await trpc(path, { tenantId: tenant.id, tenant: tenant.id, probe: { deep: [bad.text] } });
        expect({ status: answer.status, code: answer.body.error?.data.code, message: answer.body.error?.message }).toEqual({
          status: 400, code: "BAD_REQUEST", message: `probe.deep[0]: ${bad.message}`,
        });
        expect(await instanceCount()).toBe(before);
      });
    }
  }

  it("a tenant id with bad text reads as a tenant the caller is not a member of", async () => {
    const bad = await trpc("overview.instanceCounts", { tenantId: "acme\ud800" });
    const missing = await trpc("overview.instanceCounts", { tenantId: `no-such-${randomUUID().slice(0, 8)}` });
    expect(bad).toEqual(missing);
  });

  it("a non-operator with bad input to an operator procedure is told it does not exist, as with good input", async () => {
    const member = (await makeUser(db, { memberOf: [[tenant.id, "member"]] })).id;
    const asMember = async (input: unknown) => {
      const request = new Request(`http://localhost/api/trpc/ops.tenants?input=${encodeURIComponent(JSON.stringify(input))}`);
      const response = await fetchRequestHandler({ endpoint: "/api/trpc", req: request, router: appRouter, createContext: () => createContext(db, member) });
      return { status: response.status, body: await response.text() };
    };
    expect(await asMember({ probe: "a\ud800" })).toEqual(await asMember({ probe: "fine" }));
  });
});
