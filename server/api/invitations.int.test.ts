// Inviting members (members.invite, members.invitations, members.revokeInvitation) against a real
// PostgreSQL: the answer to an invitation is the same, byte for byte through the HTTP handler,
// whether or not the address has an account anywhere; nobody becomes a member by being invited;
// the token is returned once and stored only hashed; re-inviting replaces the link; revoking kills
// it; plain members can do none of it. Accepting is server/control/invitations.int.test.ts's.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser } from "../../test/factories.ts";
import { INVITATION_TTL_MS, viewInvitation } from "../control/invitations.ts";
import { appRouter, createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const callerFor = (userId: string) => createCaller(createContext(db, userId));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

/** A tenant of its own with one admin. */
async function tenantWithAdmin() {
  const tenantId = (await makeTenant(db)).id;
  const owner = await makeUser(db, { memberOf: [[tenantId, "admin"]] });
  return { tenantId, owner, caller: callerFor(owner.id) };
}

/** The raw HTTP answer of the tRPC endpoint for one mutation. */
async function httpMutation(userId: string, path: string, input: unknown) {
  const response = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req: new Request(`http://localhost/api/trpc/${path}`, {
      method: "POST",
      body: JSON.stringify(input),
      headers: { "content-type": "application/json" },
    }),
    router: appRouter,
    createContext: () => createContext(db, userId),
  });
  return { status: response.status, headers: [...response.headers.entries()], body: await response.text() };
}

const TOKEN_IN_LINK = /\/invite\/([A-Za-z0-9_-]{43})/;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;

/** An answer's text with what must differ (the address asked for, ids, the token, times) swapped for placeholders. */
const neutral = (text: string, email: string) =>
  text.replaceAll(email, "<email>").replace(UUID, "<id>").replace(new RegExp(TOKEN_IN_LINK.source, "g"), "/invite/<token>").replace(ISO_TIME, "<time>");

/** Every key of a JSON value, nested ones as dotted paths, sorted. */
function keysOf(value: unknown, prefix = ""): string[] {
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => [`${prefix}${key}`, ...keysOf(inner, `${prefix}${key}.`)]).sort();
}

const invitationRows = async (tenantId: string) =>
  (await db.sql.query("SELECT * FROM invitations WHERE tenant_id = $1 ORDER BY created_at, id", [tenantId])).rows;

const auditRows = async (tenantId: string, action: string) =>
  (await db.sql.query("SELECT actor, actor_user_id, details FROM audit_log WHERE tenant_id = $1 AND action = $2 ORDER BY id", [tenantId, action]))
    .rows;

/** An address no account has, of the form (and length) test/factories.ts gives accounts. */
const unknownEmail = () => `u-${randomBytes(4).toString("hex")}@example.test`;

const userCount = async () => (await db.sql.query("SELECT count(*)::int AS n FROM users")).rows[0].n as number;

describe("members.invite", () => {
  it("answers an address with an account elsewhere exactly as one without, and makes nobody a member", async () => {
    const { tenantId, owner, caller } = await tenantWithAdmin();
    const elsewhere = await makeUser(db, { memberOf: [[(await makeTenant(db)).id, "admin"]] });
    const other = await makeUser(db, { memberOf: [[(await makeTenant(db)).id, "member"]] });
    const usersBefore = await userCount();

    const known = await caller.members.invite({ tenantId, email: elsewhere.email, role: "member" });
    const unknown = unknownEmail();
    const fresh = await caller.members.invite({ tenantId, email: unknown, role: "member" });
    expect(keysOf(known)).toEqual(["email", "expiresAt", "id", "link", "role"]);
    expect(keysOf(fresh)).toEqual(keysOf(known));
    const strip = ({ id: _id, link: _link, expiresAt: _expiresAt, ...rest }: typeof known) => rest;
    expect({ ...strip(known), email: "<email>" }).toEqual({ ...strip(fresh), email: "<email>" });
    expect(strip(known)).toEqual({ email: elsewhere.email, role: "member" });
    expect(strip(fresh)).toEqual({ email: unknown, role: "member" });
    for (const answer of [known, fresh]) {
      expect(answer.link).toMatch(/^\/invite\/[A-Za-z0-9_-]{43}$/);
      expect(Date.parse(answer.expiresAt) - Date.now()).toBeGreaterThan(INVITATION_TTL_MS - 60_000);
      expect(Date.parse(answer.expiresAt) - Date.now()).toBeLessThanOrEqual(INVITATION_TTL_MS);
    }

    // Byte for byte through the HTTP handler too (status, headers, body), the differing parts
    // swapped; the unknown address has the same length as the known one.
    const nobody = unknownEmail();
    expect(nobody.length).toBe(other.email.length);
    const httpKnown = await httpMutation(owner.id, "members.invite", { tenantId, email: other.email, role: "admin" });
    const httpFresh = await httpMutation(owner.id, "members.invite", { tenantId, email: nobody, role: "admin" });
    expect(httpKnown.status).toBe(200);
    expect({ ...httpKnown, body: neutral(httpKnown.body, other.email) }).toEqual({ ...httpFresh, body: neutral(httpFresh.body, nobody) });

    // Nobody joined, no account was made, and the audit log says the same of both.
    expect(await db.prisma.membership.count({ where: { tenantId } })).toBe(1);
    expect(await userCount()).toBe(usersBefore);
    const audit = await auditRows(tenantId, "member.invite");
    expect(audit).toHaveLength(4);
    expect(neutral(JSON.stringify(audit[0]), elsewhere.email)).toBe(neutral(JSON.stringify(audit[1]), unknown));
    expect(audit[0]).toEqual({
      actor: owner.email, actor_user_id: owner.id, details: { email: elsewhere.email, role: "member", invitation: known.id, replaced: false },
    });
  });

  it("returns the token once and stores only its SHA-256 hash", async () => {
    const { tenantId, caller } = await tenantWithAdmin();
    const invited = await caller.members.invite({ tenantId, email: `hash-${randomUUID().slice(0, 8)}@example.test`, role: "member" });
    const token = TOKEN_IN_LINK.exec(invited.link)![1]!;
    const rows = await invitationRows(tenantId);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(createHash("sha256").update(token).digest("hex"));
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(JSON.stringify(await caller.members.invitations({ tenantId }))).not.toContain(token);
    expect(JSON.stringify(await auditRows(tenantId, "member.invite"))).not.toContain(token);
  });

  it("normalizes the address, and refuses an invalid one with BAD_REQUEST, creating nothing", async () => {
    const { tenantId, caller } = await tenantWithAdmin();
    const email = `case-${randomUUID().slice(0, 8)}@example.test`;
    expect(await caller.members.invite({ tenantId, email: `  ${email.toUpperCase()} `, role: "admin" })).toMatchObject({ email, role: "admin" });
    const error = await trpcError(caller.members.invite({ tenantId, email: "not an email", role: "member" }));
    expect(error.code).toBe("BAD_REQUEST");
    expect(error.message).toMatch(/invalid email/);
    expect(await invitationRows(tenantId)).toHaveLength(1);
  });

  it("refuses a current member with CONFLICT (admins see the members list anyway), creating nothing", async () => {
    const { tenantId, owner, caller } = await tenantWithAdmin();
    const member = await makeUser(db, { memberOf: [[tenantId, "member"]] });
    for (const email of [member.email, owner.email.toUpperCase()]) {
      const error = await trpcError(caller.members.invite({ tenantId, email, role: "admin" }));
      expect(error.code).toBe("CONFLICT");
      expect(error.message).toMatch(/already a member/);
    }
    expect(await invitationRows(tenantId)).toEqual([]);
    expect(await db.prisma.membership.findUnique({ where: { tenantId_userId: { tenantId, userId: member.id } } })).toMatchObject({ role: "member" });
  });

  it("re-inviting a pending address replaces its invitation: the old link stops working", async () => {
    const { tenantId, caller } = await tenantWithAdmin();
    const email = `again-${randomUUID().slice(0, 8)}@example.test`;
    const first = await caller.members.invite({ tenantId, email, role: "member" });
    const second = await caller.members.invite({ tenantId, email, role: "admin" });
    expect(second.id).not.toBe(first.id);
    expect(second.link).not.toBe(first.link);
    await expect(viewInvitation(db.prisma, TOKEN_IN_LINK.exec(first.link)![1]!)).resolves.toBeNull();
    await expect(viewInvitation(db.prisma, TOKEN_IN_LINK.exec(second.link)![1]!)).resolves.toMatchObject({ email, role: "admin" });
    expect((await caller.members.invitations({ tenantId })).map((i) => [i.id, i.role])).toEqual([[second.id, "admin"]]);
    expect((await auditRows(tenantId, "member.invite")).map((r) => r.details.replaced)).toEqual([false, true]);
  });

  it("two invitations of one address at once leave exactly one pending", async () => {
    const { tenantId, caller } = await tenantWithAdmin();
    const email = `race-${randomUUID().slice(0, 8)}@example.test`;
    const answers = await Promise.all(Array.from({ length: 4 }, () => caller.members.invite({ tenantId, email, role: "member" })));
    const working = [];
    for (const answer of answers) if (await viewInvitation(db.prisma, TOKEN_IN_LINK.exec(answer.link)![1]!)) working.push(answer.id);
    expect(working).toHaveLength(1);
    expect((await caller.members.invitations({ tenantId })).map((i) => i.id)).toEqual(working);
  });
});

describe("members.invitations and members.revokeInvitation", () => {
  it("list pending invitations only, newest first, with who invited", async () => {
    const { tenantId, owner, caller } = await tenantWithAdmin();
    const a = await caller.members.invite({ tenantId, email: `a-${randomUUID().slice(0, 8)}@example.test`, role: "member" });
    const b = await caller.members.invite({ tenantId, email: `b-${randomUUID().slice(0, 8)}@example.test`, role: "admin" });
    const c = await caller.members.invite({ tenantId, email: `c-${randomUUID().slice(0, 8)}@example.test`, role: "member" });
    // Apart by minutes, so the order cannot hang on two rows made in one millisecond.
    await db.sql.query("UPDATE invitations SET created_at = created_at - interval '2 minutes' WHERE id = $1", [a.id]);
    await db.sql.query("UPDATE invitations SET created_at = created_at - interval '1 minute' WHERE id = $1", [b.id]);
    expect(await caller.members.invitations({ tenantId })).toEqual([
      { id: c.id, email: c.email, role: "member", createdAt: expect.stringMatching(ISO_TIME), expiresAt: c.expiresAt, invitedBy: owner.email },
      { id: b.id, email: b.email, role: "admin", createdAt: expect.stringMatching(ISO_TIME), expiresAt: b.expiresAt, invitedBy: owner.email },
      { id: a.id, email: a.email, role: "member", createdAt: expect.stringMatching(ISO_TIME), expiresAt: a.expiresAt, invitedBy: owner.email },
    ]);
    // Expired, accepted and revoked ones are not pending.
    await db.sql.query("UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1", [a.id]);
    await db.sql.query("UPDATE invitations SET accepted_at = now() WHERE id = $1", [b.id]);
    await caller.members.revokeInvitation({ tenantId, id: c.id });
    expect(await caller.members.invitations({ tenantId })).toEqual([]);
  });

  it("revoke kills the link at once and is audited; anything not pending is NOT_FOUND", async () => {
    const { tenantId, owner, caller } = await tenantWithAdmin();
    const email = `revoke-${randomUUID().slice(0, 8)}@example.test`;
    const invited = await caller.members.invite({ tenantId, email, role: "member" });
    const token = TOKEN_IN_LINK.exec(invited.link)![1]!;
    await expect(caller.members.revokeInvitation({ tenantId, id: invited.id })).resolves.toEqual({ id: invited.id, email });
    await expect(viewInvitation(db.prisma, token)).resolves.toBeNull();
    expect(await auditRows(tenantId, "member.invite.revoke")).toEqual([
      { actor: owner.email, actor_user_id: owner.id, details: { email, role: "member", invitation: invited.id } },
    ]);
    for (const id of [invited.id, randomUUID(), "not-a-uuid"]) {
      const error = await trpcError(caller.members.revokeInvitation({ tenantId, id }));
      expect([error.code, error.message]).toEqual(["NOT_FOUND", "invitation not found"]);
    }
  });
});

describe("a plain member", () => {
  it("can neither invite, list nor revoke, and nothing is created or changed", async () => {
    // Only that it is refused: which error a refused caller gets is trpc.ts's (tenancy.int.test.ts).
    const { tenantId, caller } = await tenantWithAdmin();
    const member = await makeUser(db, { memberOf: [[tenantId, "member"]] });
    const pending = await caller.members.invite({ tenantId, email: `kept-${randomUUID().slice(0, 8)}@example.test`, role: "member" });
    const before = await invitationRows(tenantId);
    const auditBefore = await auditRows(tenantId, "member.invite");
    const as = callerFor(member.id);
    for (const call of [
      () => as.members.invite({ tenantId, email: `sneaky-${randomUUID().slice(0, 8)}@example.test`, role: "admin" }),
      () => as.members.invite({ tenantId, email: member.email, role: "admin" }),
      () => as.members.invitations({ tenantId }),
      () => as.members.revokeInvitation({ tenantId, id: pending.id }),
    ]) {
      await trpcError(call());
    }
    expect(await invitationRows(tenantId)).toEqual(before);
    expect(await auditRows(tenantId, "member.invite")).toEqual(auditBefore);
    expect(await auditRows(tenantId, "member.invite.revoke")).toEqual([]);
    expect(await db.prisma.membership.findUnique({ where: { tenantId_userId: { tenantId, userId: member.id } } })).toMatchObject({ role: "member" });
  });
});
