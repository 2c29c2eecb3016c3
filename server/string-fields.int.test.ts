// Every string field of every REST body and tRPC input, found by walking their zod schemas, gets a
// lone surrogate, a NUL and a 1 MiB value in turn (issue 16's matrix). Bad text is a 4xx naming
// that field; a huge value is anything but a 5xx; the service answers afterwards. A new route or
// procedure, or a new field of one, is covered without being listed here.
import { randomUUID } from "node:crypto";
import type { AnyProcedure } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../test/db.ts";
import { insertInstancesOf, insertSequence, makeUser } from "../test/factories.ts";
import { SAMPLE_TEXT, SAMPLE_UUID, stringFieldCases, type KnownValues } from "../test/string-fields.ts";
import { appRouter } from "./api/root.ts";
import { createContext, type ProcedureMeta } from "./api/trpc.ts";
import { UUID_PARAMETERS } from "./rest/index.ts";
import { ROUTES } from "./rest/routes.ts";
import { call, operatorKey, tenantWithKey } from "./rest/testing.ts";

const PROBES = [
  { name: "a lone surrogate", text: "a\ud800b", message: "contains an unpaired UTF-16 surrogate" },
  { name: "a NUL", text: "a\u0000b", message: "contains a NUL (\\u0000) character" },
  { name: "a 1 MiB value", text: "m".repeat(1024 * 1024), message: null },
] as const;

let db: TestDatabase;
let tenant: { id: string; key: string };
let opKey: string;
let userId: string;
let known: { rest: KnownValues; trpc: KnownValues; path: Record<string, string> };
beforeAll(async () => {
  // Hundreds of calls a second, from one key.
  db = await freshDatabase({ BULKHEAD_API_RATE_PER_SEC: "100000", BULKHEAD_API_BURST: "100000" });
  tenant = await tenantWithKey(db);
  opKey = await operatorKey(db);
  userId = (await makeUser(db, { isOperator: true, memberOf: [[tenant.id, "admin"]] })).id;
  const sequenceId = await insertSequence(db, tenant.id, [{ type: "step", id: "one", handler: "noop" }], "fields");
  const [instanceId] = (await insertInstancesOf(db, tenant.id, sequenceId)) as [string];
  // Fields a minimal input must get right for the probe to reach the database.
  known = {
    rest: { tenant_id: tenant.id, sequence_id: sequenceId, instance_id: instanceId, signal_type: "update_context" },
    trpc: { tenantId: tenant.id, tenant: tenant.id, sequenceId, instanceId },
    path: { instance: instanceId, sequence: sequenceId },
  };
});
afterAll(() => db.drop());

interface Answer {
  path: string;
  status: number;
  text: string;
}

/** The answers that break the rule: a 5xx for any probe, and for bad text an answer `refused` does not accept. */
function offenders(answers: Answer[], probe: (typeof PROBES)[number], refused: (answer: Answer, message: string) => boolean): Answer[] {
  return answers.filter((answer) => answer.status >= 500 || (probe.message !== null && !refused(answer, probe.message)));
}

/** The samples' ids and texts made new for each call, so what one call creates does not collide with the next. */
const freshIds = (input: unknown): unknown =>
  JSON.parse(JSON.stringify(input).replaceAll(SAMPLE_UUID, () => randomUUID()).replaceAll(`"${SAMPLE_TEXT}"`, () => `"${SAMPLE_TEXT}-${randomUUID().slice(0, 8)}"`));

const brief = (answers: Answer[]) => answers.map(({ path, status, text }) => `${path}: ${status} ${text.slice(0, 160)}`);

describe("REST bodies, field by field", () => {
  // Bodies with no string field (a prune's `keep`) have nothing to probe.
  const withBody = ROUTES.filter((route) => route.body && stringFieldCases(route.body.schema, "").length > 0);

  for (const probe of PROBES) {
    for (const route of withBody) {
      it(`${route.method} ${route.path}: ${probe.name} in each string field`, async () => {
        const cases = stringFieldCases(route.body!.schema, probe.text, known.rest);
        const path = route.path
          .replaceAll("{id}", known.path[route.notFound] ?? "00000000-0000-4000-8000-000000000000")
          .replace("{block_id}", "one")
          // Other UUID parameters (a pool's) name nothing: a malformed one would be refused before the body is read.
          .replace(/\{([a-z_]+)\}/g, (_, name: string) => (UUID_PARAMETERS.has(name) ? "00000000-0000-4000-8000-000000000000" : "x"));
        const key = route.access === "operator" ? opKey : tenant.key;
        const answers: Answer[] = [];
        for (const { path: field, input } of cases) {
          const reply = await call(db, route.method, path, { key, body: freshIds(input) });
          answers.push({ path: field, status: reply.status, text: reply.text });
        }
        const named = (answer: Answer, message: string) =>
          answer.status === 400 && (JSON.parse(answer.text) as { error: string }).error === `invalid argument: ${answer.path}: ${message}`;
        expect(brief(offenders(answers, probe, named))).toEqual([]);
        expect((await call(db, "GET", "/health/live")).status).toBe(200);
      });
    }
  }
});

const PROCEDURES = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;

/** A procedure's input: its chained `.input()` parsers, all of which it must satisfy. */
function inputSchema(procedure: AnyProcedure): z.ZodType | null {
  const inputs = procedure._def.inputs as z.ZodType[];
  return inputs.length === 0 ? null : inputs.reduce((all, next) => z.intersection(all, next));
}

/**
 * Inputs that pick the caller's tenant: bad text there reads as a tenant the caller is not a member
 * of (a 404), as any unknown tenant does. Operators name any tenant, so theirs is a plain field.
 */
const TENANT_FIELDS = new Set(["tenantId", "tenant"]);
const isGate = (procedure: string, field: string) => TENANT_FIELDS.has(field) && accessOf(procedure) !== "operator";
const accessOf = (path: string) => (PROCEDURES[path]!._def.meta as ProcedureMeta | undefined)?.access;
const errorOf = (answer: Answer) => (JSON.parse(answer.text) as { error: { message: string } }).error;

async function trpc(path: string, input: unknown): Promise<{ status: number; text: string }> {
  const url = new URL(`http://localhost/api/trpc/${path}`);
  const mutation = PROCEDURES[path]!._def.type === "mutation";
  if (!mutation) url.searchParams.set("input", JSON.stringify(input));
  const request = new Request(url, mutation ? { method: "POST", body: JSON.stringify(input), headers: { "content-type": "application/json" } } : undefined);
  const response = await fetchRequestHandler({ endpoint: "/api/trpc", req: request, router: appRouter, createContext: () => createContext(db, userId) });
  return { status: response.status, text: await response.text() };
}

describe("tRPC inputs, field by field", () => {
  const withInput = Object.entries(PROCEDURES).flatMap(([path, procedure]) => {
    const schema = inputSchema(procedure);
    return schema && stringFieldCases(schema, "").length > 0 ? [{ path, schema }] : [];
  });

  it("has procedures with inputs to probe", () => {
    expect(withInput.length).toBeGreaterThan(30);
  });

  for (const probe of PROBES) {
    for (const { path, schema } of withInput) {
      it(`${path}: ${probe.name} in each string field`, async () => {
        const cases = stringFieldCases(schema, probe.text, known.trpc);
        const answers: Answer[] = [];
        for (const { path: field, input } of cases) answers.push({ path: field, ...(await trpc(path, input)) });
        const refused = (answer: Answer, message: string) =>
          isGate(path, answer.path) ? answer.status === 404 : answer.status === 400 && errorOf(answer).message === `${answer.path}: ${message}`;
        expect(brief(offenders(answers, probe, refused))).toEqual([]);
      });
    }
  }
});
