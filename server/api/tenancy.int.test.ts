// The tenancy matrix of the tRPC API, generated from the router itself: every procedure has a case
// below saying how to call it, and a procedure added without one fails the first test. Through
// the HTTP handler, byte for byte: a tenant the caller may not see answers like a tenant that does
// not exist; another tenant's object id answers like a random id of the same form (and changes
// nothing of that tenant); the caller's own id is served; operator procedures do not exist for
// anyone else.
import { randomBytes, randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyProcedure } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertOpenBreaker } from "../../engine/storage/breakers.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, insertTrigger, makeTenant, makeUser } from "../../test/factories.ts";
import { createApiKey } from "../control/api-keys.ts";
import { createInvitation } from "../control/invitations.ts";
import { sequenceJson } from "../rest/testing.ts";
import { appRouter } from "./root.ts";
import { createContext } from "./trpc.ts";

// ------------------------------------------------------------------ the cases

/**
 * Who a procedure serves: any signed-in user (naming their tenants), the signed-in user's own
 * account (naming no tenant), a tenant's members, its admins, or operators.
 */
type Gate = "user" | "self" | "tenant" | "tenantAdmin" | "operator";

/** The objects an input can name by id (or by a name scoped by the tenant: slug, handler). */
type Kind = "instance" | "sequence" | "member" | "invitation" | "apiKey" | "trigger" | "handler" | "tenant" | "cronSchedule" | "credential";

interface IdProbe {
  kind: Kind;
  /** A valid input acting for `tenantId` and naming object `id`. */
  input(tenantId: string, id: string): unknown;
  /**
   * Any id creates one of the caller's own objects under it, and the success repeats it (and, for
   * a row created now, its timestamps): answers are compared with those swapped for placeholders.
   */
  echoes?: "id" | "id and timestamps";
  /** The NOT_FOUND names the id asked for (wire-format L: `trigger '<slug>'`): compared with it swapped for a placeholder. */
  namesId?: true;
}

interface Case {
  gate: Gate;
  /** A valid input acting for `tenantId` (ignored by procedures that take no tenant). */
  input?(tenantId: string): unknown;
  /** Every object id the input takes, each probed own / foreign / random. */
  ids?: IdProbe[];
}

const SEQUENCE_NAME = "matrix-sequence";
let epochs = 0;
const tenantOnly = (tenantId: string) => ({ tenantId });
const email = () => `new-${randomBytes(4).toString("hex")}@example.test`;

/** How to call every procedure. A new procedure fails the coverage test until it is added here. */
const CASES: Record<string, Case> = {
  "account.me": { gate: "user" },
  "account.sessions": { gate: "self" },
  // A wrong current password: refused, so the matrix's users keep theirs.
  "account.changePassword": { gate: "self", input: () => ({ currentPassword: "not-the-password", newPassword: "another-password-9" }) },
  "account.signOutEverywhere": { gate: "self" },

  "overview.instanceCounts": { gate: "tenant", input: tenantOnly },
  "overview.sequences": { gate: "tenant", input: tenantOnly },
  "overview.throughput": { gate: "tenant", input: tenantOnly },
  "overview.recentFailures": { gate: "tenant", input: tenantOnly },

  "members.list": { gate: "tenantAdmin", input: tenantOnly },
  // Emails are global accounts, not a tenant's objects: nothing to probe.
  "members.invite": { gate: "tenantAdmin", input: (tenantId) => ({ tenantId, email: email(), role: "member" }) },
  "members.invitations": { gate: "tenantAdmin", input: tenantOnly },
  "members.revokeInvitation": { gate: "tenantAdmin", ids: [{ kind: "invitation", input: (tenantId, id) => ({ tenantId, id }) }] },
  "members.setRole": { gate: "tenantAdmin", ids: [{ kind: "member", input: (tenantId, userId) => ({ tenantId, userId, role: "member" }) }] },
  "members.remove": { gate: "tenantAdmin", ids: [{ kind: "member", input: (tenantId, userId) => ({ tenantId, userId }) }] },

  "apiKeys.list": { gate: "tenantAdmin", input: tenantOnly },
  "apiKeys.create": { gate: "tenantAdmin", input: (tenantId) => ({ tenantId, name: "matrix" }) },
  "apiKeys.revoke": { gate: "tenantAdmin", ids: [{ kind: "apiKey", input: (tenantId, id) => ({ tenantId, id }) }] },

  "ops.tenants": { gate: "operator" },
  "ops.tenantPage": { gate: "operator", input: (tenantId) => ({ search: tenantId.slice(0, 2), order: "claims" }) },
  "ops.tenant": { gate: "operator", input: (tenantId) => ({ tenantId }) },
  "ops.users.signOutEverywhere": { gate: "operator", input: () => ({ email: loner.email }) },
  "ops.backends": { gate: "operator" },
  // Served calls act for A on the backend it is already on: a newer epoch each time, a move with nothing to do.
  "ops.advancePlacement": { gate: "operator", input: (tenantId) => ({ tenantId, backendId: "primary", epoch: 1_000 + ++epochs }) },
  "ops.startMove": { gate: "operator", input: (tenantId) => ({ tenantId, backendId: "primary" }) },
  "ops.moves": { gate: "operator", input: (tenantId) => ({ tenantId }) },
  "ops.fairness": { gate: "operator", input: () => ({ range: "1h" }) },
  "ops.fairnessTenant": { gate: "operator", input: (tenantId) => ({ tenantId, range: "1h" }) },
  "ops.createTenant": { gate: "operator", input: () => ({ slug: `new-${randomBytes(4).toString("hex")}`, adminEmail: email() }) },
  "ops.limits.get": { gate: "operator", input: (tenantId) => ({ tenantId }) },
  "ops.limits.set": { gate: "operator", input: (tenantId) => ({ tenantId, claimCap: null, maxConcurrency: null, maxSteps: null }) },
  "ops.limits.setBudget": { gate: "operator", input: (tenantId) => ({ tenantId, stepsPerPeriod: 0, periodSecs: 60 }) },
  "ops.limits.setRateLimit": { gate: "operator", input: (tenantId) => ({ tenantId, key: "matrix-key", maxCount: 0, windowMs: 1000 }) },
  "ops.audit.list": { gate: "operator", input: (tenantId) => ({ tenantId }) },
  "ops.exports.start": { gate: "operator", input: (tenantId) => ({ tenantId }) },
  "ops.exports.list": { gate: "operator", input: (tenantId) => ({ tenantId }) },
  // Records a deletion of A that nothing runs here (no engine): A keeps answering, and no later case moves it.
  "ops.deletions.start": { gate: "operator", input: (tenantId) => ({ tenantId, confirm: tenantId }) },
  "ops.deletions.get": { gate: "operator", input: () => ({ deletionId: "00000000-0000-4000-8000-000000000000" }) },
  "resources.ledger": { gate: "operator" },
  "resources.usage": { gate: "operator" },
  "resources.throttled": { gate: "operator" },
  "resources.waits": { gate: "operator" },
  "resources.retention": { gate: "operator" },

  "breakers.list": { gate: "tenant", input: tenantOnly },
  "breakers.resets": { gate: "tenant", input: (tenantId) => ({ tenantId, limit: 10 }) },
  "breakers.setSettings": {
    gate: "tenantAdmin",
    ids: [{ kind: "handler", input: (tenantId, handler) => ({ tenantId, handler, failureThreshold: 5, cooldownSecs: 60 }) }],
  },
  // Resetting a handler without an open breaker succeeds (and is recorded): foreign and random alike.
  "breakers.reset": { gate: "tenantAdmin", ids: [{ kind: "handler", input: (tenantId, handler) => ({ tenantId, handler }) }] },
  "breakers.ops.list": { gate: "operator", input: (tenant) => ({ tenant }) },
  "breakers.ops.reset": { gate: "operator", input: (tenantId) => ({ tenantId, handler: "matrix-handler" }) },

  "instances.list": {
    gate: "tenant",
    input: tenantOnly,
    ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId }) }],
  },
  "instances.get": { gate: "tenant", ids: [{ kind: "instance", input: (tenantId, instanceId) => ({ tenantId, instanceId }) }] },
  "instances.signal": {
    gate: "tenant",
    ids: [{ kind: "instance", input: (tenantId, instanceId) => ({ tenantId, instanceId, signal: { type: "pause" } }) }],
  },
  // Own instances have no gate waiting: BAD_REQUEST, past the lookup that foreign and random fail.
  "instances.answer": {
    gate: "tenant",
    ids: [{ kind: "instance", input: (tenantId, instanceId) => ({ tenantId, instanceId, blockId: "one", value: "yes" }) }],
  },

  // The DLQ and bulk actions (wire-format J, K). A filter naming another tenant's sequence matches
  // nothing, as a random one does; own instances are scheduled, so retry and resume-from answer
  // BAD_REQUEST past the lookup that foreign and random fail.
  "instances.deadLetters": {
    gate: "tenant",
    input: tenantOnly,
    ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId }) }],
  },
  "instances.failureGroups": { gate: "tenant", input: tenantOnly },
  "instances.retry": { gate: "tenantAdmin", ids: [{ kind: "instance", input: (tenantId, instanceId) => ({ tenantId, instanceId }) }] },
  "instances.resumeFrom": {
    gate: "tenantAdmin",
    ids: [{ kind: "instance", input: (tenantId, instanceId) => ({ tenantId, instanceId, blockId: "one", context: { x: 1 } }) }],
  },
  "instances.bulkSetState": {
    gate: "tenantAdmin",
    ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, filter: { sequenceId }, state: "paused" }) }],
  },
  "instances.bulkReschedule": {
    gate: "tenantAdmin",
    ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, filter: { sequenceId }, offsetSecs: 60 }) }],
  },
  "instances.batchAction": {
    gate: "tenantAdmin",
    ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, filter: { sequenceId }, action: "cancel" }) }],
  },

  "sequences.list": { gate: "tenant", input: tenantOnly },
  "sequences.handlers": { gate: "tenant", input: tenantOnly },
  "sequences.get": { gate: "tenant", ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId }) }] },
  "sequences.create": {
    gate: "tenant",
    ids: [
      // Sequence ids are per tenant: another tenant's id is free for this one (own: CONFLICT).
      { kind: "sequence", input: (tenantId, id) => ({ tenantId, sequence: sequenceJson(tenantId, { id }) }), echoes: "id" },
      // The definition's own tenant_id must be the acting tenant's, whichever other tenant it names.
      { kind: "tenant", input: (tenantId, other) => ({ tenantId, sequence: sequenceJson(other) }) },
    ],
  },
  "sequences.run": {
    gate: "tenant",
    ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId, input: { x: 1 } }) }],
  },
  "sequences.versions": { gate: "tenant", ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId }) }] },
  "sequences.deprecate": { gate: "tenant", ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId }) }] },
  "sequences.remove": { gate: "tenant", ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId }) }] },
  // A draft's key is the edited sequence's id, or a new sequence's own: keys are per tenant, so
  // any key is the caller's own (another tenant's draft under the same key is another row).
  "sequenceDrafts.get": { gate: "tenant", input: (tenantId) => ({ tenantId, key: randomUUID() }) },
  "sequenceDrafts.save": {
    gate: "tenant",
    input: (tenantId) => ({ tenantId, key: randomUUID(), definition: { name: "draft", blocks: [] }, updatedAt: new Date().toISOString() }),
  },
  "sequenceDrafts.discard": { gate: "tenant", input: (tenantId) => ({ tenantId, key: randomUUID() }) },

  "triggers.list": { gate: "tenant", input: tenantOnly },
  // Slugs are unique across tenants (the public webhook route names a slug alone), so another
  // tenant's slug is refused as taken (CONFLICT, wire-format L: it reveals only that); that rule
  // has its own tests (server/rest/triggers.int.test.ts). Here: a free slug.
  "triggers.create": {
    gate: "tenantAdmin",
    input: (tenantId) => ({ tenantId, slug: `matrix-${randomBytes(4).toString("hex")}`, sequenceName: SEQUENCE_NAME, sequenceVersion: null, triggerType: "event", generateSecret: false }),
  },
  // The trigger's 404 names the slug asked for (wire-format L: `trigger '<slug>'`).
  "triggers.deliveries": { gate: "tenant", ids: [{ kind: "trigger", input: (tenantId, slug) => ({ tenantId, slug }), namesId: true }] },
  "triggers.sendTest": { gate: "tenant", ids: [{ kind: "trigger", input: (tenantId, slug) => ({ tenantId, slug, data: { x: 1 } }), namesId: true }] },
  "triggers.remove": { gate: "tenantAdmin", ids: [{ kind: "trigger", input: (tenantId, slug) => ({ tenantId, slug }), namesId: true }] },

  // A filter by another tenant's sequence lists nothing, as a random one does.
  "schedules.list": { gate: "tenant", input: tenantOnly, ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId }) }] },
  "schedules.create": { gate: "tenant", ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId, cronExpr: "0 0 * * *" }) }] },
  "schedules.update": { gate: "tenant", ids: [{ kind: "cronSchedule", input: (tenantId, id) => ({ tenantId, id, enabled: false }) }] },
  "schedules.remove": { gate: "tenant", ids: [{ kind: "cronSchedule", input: (tenantId, id) => ({ tenantId, id }) }] },
  "schedules.nextFires": { gate: "tenant", ids: [{ kind: "cronSchedule", input: (tenantId, id) => ({ tenantId, id }) }] },
  "credentials.list": { gate: "tenantAdmin", input: tenantOnly },
  // Any free id becomes one of the caller's credentials: another tenant's id is free too (ids are per tenant).
  "credentials.create": {
    gate: "tenantAdmin",
    ids: [{ kind: "credential", input: (tenantId, id) => ({ tenantId, credential: { id, name: "Vendor", value: "v" } }), echoes: "id and timestamps" }],
  },
  "credentials.update": { gate: "tenantAdmin", ids: [{ kind: "credential", input: (tenantId, id) => ({ tenantId, id, patch: { description: "changed" } }) }] },
  "credentials.remove": { gate: "tenantAdmin", ids: [{ kind: "credential", input: (tenantId, id) => ({ tenantId, id }) }] },
  "schedules.preview": { gate: "tenant", input: (tenantId) => ({ tenantId, cronExpr: "0 0 9 * * MON-FRI", timezone: "America/New_York" }) },

  // A filter by another tenant's sequence lists nothing, as a random one does. Answers go through instances.answer.
  "approvals.list": { gate: "tenant", input: tenantOnly, ids: [{ kind: "sequence", input: (tenantId, sequenceId) => ({ tenantId, sequenceId }) }] },
  // Worker ids are the workers' own names, not objects of a tenant: nothing to probe.
  "workers.list": { gate: "tenant", input: tenantOnly },
  "workers.stats": { gate: "tenant", input: tenantOnly },
  "workers.claimed": { gate: "tenant", input: (tenantId) => ({ tenantId, staleOnly: true }) },
  "workers.ops.fleet": { gate: "operator" },
};

// ------------------------------------------------------------------ fixtures

let db: TestDatabase;
let tenantA: string;
let tenantB: string;
/** Admin of A, not a member of B: the caller of the matrix. */
let adminA: { id: string };
let memberA: { id: string };
/** Signed in, member of nothing. */
let loner: { id: string; email: string };
let operator: { id: string };
/** B's objects, one of each kind: the foreign ids. */
let foreign: Record<Kind, string>;

const hex = () => randomBytes(4).toString("hex");
const BLOCKS = [{ type: "step", id: "one", handler: "noop" }];

/** A new object of `tenantId`; its id as the procedures take it. Slugs and handlers have one length, like the random ones. */
const MAKE: Record<Kind, (tenantId: string) => Promise<string>> = {
  // With an instance, so a filter by a foreign sequence id would have something to show.
  sequence: async (tenantId) => {
    const id = await insertSequence(db, tenantId, BLOCKS);
    await insertInstancesOf(db, tenantId, id);
    return id;
  },
  instance: async (tenantId) => (await insertInstancesOf(db, tenantId, await insertSequence(db, tenantId, BLOCKS)))[0]!,
  member: async (tenantId) => (await makeUser(db, { memberOf: [[tenantId, "member"]] })).id,
  invitation: async (tenantId) => (await createInvitation(db.prisma, { tenantId, email: email(), role: "member", invitedByUserId: null })).id,
  apiKey: async (tenantId) => (await createApiKey(db.prisma, { tenantId, name: "matrix" })).id,
  trigger: async (tenantId) => {
    const slug = RANDOM.trigger();
    await insertTrigger(db, tenantId, slug, SEQUENCE_NAME);
    return slug;
  },
  handler: async (tenantId) => {
    const handler = RANDOM.handler();
    await upsertOpenBreaker(db.sql, { tenantId, handler, failureCount: 5, openedAt: new Date(Date.now() - 1_000) });
    return handler;
  },
  tenant: async (tenantId) => tenantId,
  credential: async (tenantId) => {
    const id = RANDOM.credential();
    await (await db.storage.tenant(tenantId)).createCredential({
      id, name: "Vendor", kind: "api_key", value: "s3cret", expiresAt: null, refreshUrl: null, refreshToken: null, description: null,
    });
    return id;
  },
  cronSchedule: async (tenantId) => {
    const sequenceId = await insertSequence(db, tenantId, BLOCKS);
    const schedule = await (await db.storage.tenant(tenantId)).insertCronSchedule({
      namespace: "default", sequenceId, cronExpr: "0 0 * * *", timezone: "UTC", enabled: true, metadata: null, overlapPolicy: "allow", nextFireAt: null,
    }, 1_000);
    return schedule.id;
  },
};

/** An id of the same form that names nothing. */
const RANDOM: Record<Kind, () => string> = {
  sequence: randomUUID,
  instance: randomUUID,
  member: randomUUID,
  invitation: randomUUID,
  apiKey: randomUUID,
  trigger: () => `slug-${hex()}`,
  handler: () => `handler-${hex()}`,
  // The form makeTenant gives tenant ids.
  tenant: () => `t-${hex()}`,
  cronSchedule: randomUUID,
  credential: () => `cred-${hex()}`,
};

beforeAll(async () => {
  // ops.exports.start, served, writes A's export: into the temporary directory, not .data.
  db = await freshDatabase({ BULKHEAD_EXPORT_DIR: join(tmpdir(), `bulkhead-tenancy-exports-${process.pid}`) });
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  adminA = await makeUser(db, { memberOf: [[tenantA, "admin"]] });
  memberA = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  loner = await makeUser(db);
  operator = await makeUser(db, { isOperator: true });
  await makeUser(db, { memberOf: [[tenantB, "admin"]] });
  for (const tenantId of [tenantA, tenantB]) {
    await insertSequence(db, tenantId, BLOCKS, SEQUENCE_NAME);
  }
  foreign = {} as Record<Kind, string>;
  for (const kind of Object.keys(MAKE) as Kind[]) foreign[kind] = await MAKE[kind](tenantB);
});
afterAll(() => db.drop());

// ------------------------------------------------------------------ helpers

// In tRPC 11 `_def.procedures` is flat at runtime, keyed by dotted path ("breakers.ops.reset");
// its type is the nested record, hence the cast.
const PROCEDURES = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** The raw HTTP answer of the tRPC endpoint: queries as GET `?input=`, mutations as POST with a JSON body. */
async function http(userId: string, path: string, input: unknown): Promise<Answer> {
  const url = new URL(`http://localhost/api/trpc/${path}`);
  const mutation = PROCEDURES[path]?._def.type === "mutation";
  if (!mutation && input !== undefined) url.searchParams.set("input", JSON.stringify(input));
  const request = new Request(url, mutation
    ? { method: "POST", body: JSON.stringify(input), headers: { "content-type": "application/json" } }
    : undefined);
  const response = await fetchRequestHandler({ endpoint: "/api/trpc", req: request, router: appRouter, createContext: () => createContext(db, userId) });
  return { status: response.status, headers: [...response.headers.entries()], body: await response.text() };
}

const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;

/** An answer with `id` (and, when asked, every timestamp) swapped for a placeholder; see IdProbe.echoes and namesId. */
function swapped(answer: Answer, id: string, echoes: IdProbe["echoes"], namesId?: true): Answer {
  if (namesId) return { ...answer, body: answer.body.replaceAll(id, "<id>") };
  if (!echoes) return answer;
  let body = answer.body.replaceAll(id, "<id>");
  if (echoes === "id and timestamps") body = body.replace(ISO_TIME, "<time>");
  return { ...answer, body };
}

const isNotFound = (answer: Answer) => answer.status === 404 || answer.body.includes('"code":"NOT_FOUND"');

/**
 * A fingerprint of every row of `tenantId`: each table with a tenant_id column, the tenant row
 * and its members' user rows. Equal before and after: nothing of the tenant changed.
 */
async function rowsOf(tenantId: string): Promise<Record<string, string | null>> {
  const { rows: tables } = await db.sql.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY table_name",
  );
  const hash = "md5(string_agg(t::text, ',' ORDER BY t::text)) AS h";
  const snapshot: Record<string, string | null> = {};
  for (const { table_name: table } of tables) {
    snapshot[table] = (await db.sql.query(`SELECT ${hash} FROM "${table}" t WHERE tenant_id = $1`, [tenantId])).rows[0].h;
  }
  snapshot.tenants = (await db.sql.query(`SELECT ${hash} FROM tenants t WHERE id = $1`, [tenantId])).rows[0].h;
  snapshot.users = (await db.sql.query(
    `SELECT ${hash} FROM users t WHERE id IN (SELECT user_id FROM memberships WHERE tenant_id = $1)`, [tenantId],
  )).rows[0].h;
  return snapshot;
}

/** A valid input of the case acting for `tenantId`, naming B's object where the procedure takes one. */
function inputOf(c: Case, tenantId: string): unknown {
  const probe = c.ids?.[0];
  return probe ? probe.input(tenantId, foreign[probe.kind]) : c.input?.(tenantId);
}

const paths = (gate: Gate) => Object.keys(CASES).filter((path) => CASES[path]!.gate === gate);
const tenantGated = [...paths("tenant"), ...paths("tenantAdmin")];
const probes = Object.entries(CASES).flatMap(([path, c]) => (c.ids ?? []).map((probe) => ({ path, probe })));

// ------------------------------------------------------------------ the matrix

describe("the tRPC tenancy matrix", () => {
  it("has a case for every procedure of the router, and none for a procedure that is gone", async () => {
    // A lazy router's procedures would be missing from the flat record until loaded.
    expect(Object.keys(appRouter._def.lazy)).toEqual([]);
    const enumerated = Object.keys(PROCEDURES).sort();
    const missing = enumerated.filter((path) => !(path in CASES));
    expect(missing, `procedures without an entry in CASES: ${missing.join(", ")}`).toEqual([]);
    expect(Object.keys(CASES).sort()).toEqual(enumerated);
    expect(enumerated.length).toBeGreaterThanOrEqual(32);
    for (const [path, c] of Object.entries(CASES)) {
      expect(PROCEDURES[path]!._def.type, path).toMatch(/^(query|mutation)$/);
      // Every tenant procedure can be called: with an input of its own or one built from a probe.
      if (c.gate === "tenant" || c.gate === "tenantAdmin") expect(c.input ?? c.ids?.[0], path).toBeDefined();
    }
    // The fingerprint that shows "nothing changed" does look at the tenant's rows.
    const tables = ["task_instances", "signals", "sequences", "triggers", "circuit_breakers", "breaker_settings", "memberships", "invitations", "api_keys", "audit_log"];
    expect(Object.keys(await rowsOf(tenantB))).toEqual(expect.arrayContaining([...tables, "users", "tenants"]));
  });

  describe("a tenant the caller is not a member of", () => {
    for (const path of tenantGated) {
      it(`${path} answers it byte for byte like a tenant that does not exist, and changes nothing there`, async () => {
        const c = CASES[path]!;
        const before = await rowsOf(tenantB);
        for (const user of [adminA, memberA]) {
          // With B's own objects in the input, and for comparison a tenant nobody has.
          const theirs = await http(user.id, path, inputOf(c, tenantB));
          const missing = await http(user.id, path, inputOf(c, RANDOM.tenant()));
          expect(theirs.status, path).toBe(404);
          expect(theirs, path).toEqual(missing);
        }
        expect(await rowsOf(tenantB), path).toEqual(before);
      });
    }
  });

  describe("another tenant's object", () => {
    for (const { path, probe } of probes) {
      it(`${path} answers a ${probe.kind} of another tenant byte for byte like a random one, changing nothing there, and serves its own`, async () => {
        // A fresh object of B's: an echoing probe leaves A an object under the id it was given, and
        // a later probe of the same id would then find A's own.
        const theirs = await MAKE[probe.kind](tenantB);
        const before = await rowsOf(tenantB);
        const random = RANDOM[probe.kind]();
        expect(random.length, "a random id of the same form").toBe(theirs.length);
        const foreignAnswer = await http(adminA.id, path, probe.input(tenantA, theirs));
        const randomAnswer = await http(adminA.id, path, probe.input(tenantA, random));
        expect(swapped(foreignAnswer, theirs, probe.echoes, probe.namesId), path).toEqual(swapped(randomAnswer, random, probe.echoes, probe.namesId));
        if (probe.echoes) expect(foreignAnswer.status, `${path}: ${foreignAnswer.body}`).toBe(200);
        expect(await rowsOf(tenantB), path).toEqual(before);

        const own = await MAKE[probe.kind](tenantA);
        const ownAnswer = await http(adminA.id, path, probe.input(tenantA, own));
        expect(isNotFound(ownAnswer), `${path} with its own ${probe.kind}: ${ownAnswer.body}`).toBe(false);
        expect(ownAnswer.status, `${path} with its own ${probe.kind}: ${ownAnswer.body}`).toBeLessThan(500);
      });
    }
  });

  describe("an operator procedure", () => {
    for (const path of paths("operator")) {
      it(`${path} is NOT_FOUND for everyone but operators, the same bytes whoever asks and whatever tenant it names`, async () => {
        const c = CASES[path]!;
        const before = await rowsOf(tenantB);
        // After sign-in, exactly what a path that does not exist answers (an anonymous caller is
        // asked to sign in first instead: the list of procedures is no secret, who may use them is).
        const first = await http(loner.id, path, c.input?.(RANDOM.tenant()));
        expect(first.status, path).toBe(404);
        const missingPath = `${path}Missing`;
        expect(first).toEqual(JSON.parse(JSON.stringify(await http(loner.id, missingPath, c.input?.(RANDOM.tenant())))
          .replaceAll(missingPath, path)));
        for (const user of [adminA, memberA, loner]) {
          for (const tenantId of [tenantA, tenantB, RANDOM.tenant()]) expect(await http(user.id, path, c.input?.(tenantId)), path).toEqual(first);
        }
        expect(await rowsOf(tenantB), path).toEqual(before);
        // Operators are served (on their own behalf: acting for A, so B stays untouched).
        const served = await http(operator.id, path, c.input?.(tenantA));
        expect(served.status, `${path}: ${served.body}`).toBe(200);
      });
    }
  });

  describe("a procedure of the caller's own account", () => {
    for (const path of paths("self")) {
      it(`${path} answers the signed-in user without naming any tenant`, async () => {
        const answer = await http(adminA.id, path, CASES[path]!.input?.(tenantA));
        expect(answer.status, answer.body).toBeLessThan(500);
        expect(answer.body).not.toContain(tenantA);
        expect(answer.body).not.toContain(tenantB);
      });
    }
  });

  describe("a procedure of no tenant", () => {
    for (const path of paths("user")) {
      it(`${path} serves the signed-in user and names no tenant they are not a member of`, async () => {
        const answer = await http(adminA.id, path, CASES[path]!.input?.(tenantA));
        expect(answer.status, answer.body).toBe(200);
        expect(answer.body).toContain(tenantA);
        expect(answer.body).not.toContain(tenantB);
      });
    }
  });
});
