// The settings procedures (members.*, apiKeys.*) against a real PostgreSQL: tenant admins manage
// members and API keys; to anyone else (plain members included) the procedures do not exist; one-time passwords and key secrets are returned once and stored only hashed;
// the tenant never loses its last admin; another tenant's key is indistinguishable from none.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { authenticateApiKey, createApiKey } from "../control/api-keys.ts";
import { appRouter, createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenantA: string;
let tenantB: string;
let member: { id: string; email: string };
let admin: { id: string; email: string };
let adminB: { id: string; email: string };

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  admin = await makeUser(db, { memberOf: [[tenantA, "admin"]] });
  adminB = await makeUser(db, { memberOf: [[tenantB, "admin"]] });
});
afterAll(() => db.drop());

const callerFor = (userId: string | null) => createCaller(createContext(db, userId));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
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

const auditRows = async (tenantId: string, action: string) =>
  (await db.sql.query("SELECT actor, actor_user_id, details FROM audit_log WHERE tenant_id = $1 AND action = $2 ORDER BY id", [tenantId, action]))
    .rows;

const roleOf = async (tenantId: string, userId: string) =>
  (await db.prisma.membership.findUnique({ where: { tenantId_userId: { tenantId, userId } }, select: { role: true } }))?.role ?? null;

/** A tenant of its own with one admin, for tests that change memberships. */
async function tenantWithAdmin() {
  const tenantId = (await makeTenant(db)).id;
  const owner = await makeUser(db, { memberOf: [[tenantId, "admin"]] });
  return { tenantId, owner, caller: callerFor(owner.id) };
}

describe("members.setRole and members.remove", () => {
  it("changes a member's role, and a repeat changes nothing", async () => {
    const { tenantId, owner, caller } = await tenantWithAdmin();
    const someone = await makeUser(db, { memberOf: [[tenantId, "member"]] });
    await expect(caller.members.setRole({ tenantId, userId: someone.id, role: "admin" })).resolves.toEqual({
      userId: someone.id, email: someone.email, role: "admin", changed: true,
    });
    expect(await roleOf(tenantId, someone.id)).toBe("admin");
    await expect(caller.members.setRole({ tenantId, userId: someone.id, role: "admin" })).resolves.toMatchObject({ changed: false });
    await caller.members.setRole({ tenantId, userId: someone.id, role: "member" });
    expect(await roleOf(tenantId, someone.id)).toBe("member");
    expect(await auditRows(tenantId, "member.role")).toEqual([
      { actor: owner.email, actor_user_id: owner.id, details: { email: someone.email, from: "member", to: "admin" } },
      { actor: owner.email, actor_user_id: owner.id, details: { email: someone.email, from: "admin", to: "member" } },
    ]);
  });

  it("removes a member, who then cannot see the tenant; their account stays", async () => {
    const { tenantId, owner, caller } = await tenantWithAdmin();
    const someone = await makeUser(db, { memberOf: [[tenantId, "admin"]] });
    await expect(caller.members.remove({ tenantId, userId: someone.id })).resolves.toEqual({ userId: someone.id, email: someone.email });
    expect(await roleOf(tenantId, someone.id)).toBeNull();
    expect((await caller.members.list({ tenantId })).map((m) => m.email)).toEqual([owner.email]);
    expect((await trpcError(callerFor(someone.id).members.list({ tenantId }))).code).toBe("NOT_FOUND");
    expect(await db.prisma.user.findUnique({ where: { id: someone.id } })).not.toBeNull();
    expect(await auditRows(tenantId, "member.remove")).toEqual([
      { actor: owner.email, actor_user_id: owner.id, details: { email: someone.email, role: "admin" } },
    ]);
  });

  it("never demotes or removes the tenant's last admin, themselves included", async () => {
    const { tenantId, owner, caller } = await tenantWithAdmin();
    const someone = await makeUser(db, { memberOf: [[tenantId, "member"]] });
    // One at a time: a second call started early would reject while the first is awaited.
    for (const attempt of [
      () => caller.members.setRole({ tenantId, userId: owner.id, role: "member" }),
      () => caller.members.remove({ tenantId, userId: owner.id }),
    ]) {
      const error = await trpcError(attempt());
      expect(error.code).toBe("BAD_REQUEST");
      expect(error.message).toMatch(/last admin/);
    }
    expect(await roleOf(tenantId, owner.id)).toBe("admin");

    // With a second admin, an admin may step down or leave.
    await caller.members.setRole({ tenantId, userId: someone.id, role: "admin" });
    await caller.members.remove({ tenantId, userId: owner.id });
    expect(await roleOf(tenantId, owner.id)).toBeNull();
    expect((await trpcError(caller.members.list({ tenantId }))).code).toBe("NOT_FOUND");
    const error = await trpcError(callerFor(someone.id).members.setRole({ tenantId, userId: someone.id, role: "member" }));
    expect(error.message).toMatch(/last admin/);
  });

  it("keeps an admin when two admins demote each other at the same moment", async () => {
    const { tenantId, owner, caller } = await tenantWithAdmin();
    const other = await makeUser(db, { memberOf: [[tenantId, "admin"]] });
    const results = await Promise.allSettled([
      caller.members.setRole({ tenantId, userId: other.id, role: "member" }),
      callerFor(other.id).members.setRole({ tenantId, userId: owner.id, role: "member" }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(await db.prisma.membership.count({ where: { tenantId, role: "admin" } })).toBe(1);
  });

  it("answers a user of another tenant, a random id and a malformed id alike: NOT_FOUND", async () => {
    const { tenantId, caller } = await tenantWithAdmin();
    const ids = [adminB.id, randomUUID(), "not-a-uuid"];
    for (const call of [
      (userId: string) => caller.members.setRole({ tenantId, userId, role: "member" }),
      (userId: string) => caller.members.remove({ tenantId, userId }),
    ]) {
      const errors = await Promise.all(ids.map((id) => trpcError(call(id))));
      expect(errors.map((e) => [e.code, e.message])).toEqual(ids.map(() => ["NOT_FOUND", "member not found"]));
    }
    expect(await roleOf(tenantB, adminB.id)).toBe("admin");
  });
});

describe("apiKeys", () => {
  it("creates a key whose secret authenticates for the tenant; the list shows its prefix, never the secret", async () => {
    const created = await callerFor(admin.id).apiKeys.create({ tenantId: tenantA, name: "  ci deploys " });
    expect(created).toMatchObject({ name: "ci deploys", prefix: created.secret.slice(0, created.prefix.length) });
    expect(created.secret.length).toBeGreaterThan(created.prefix.length + 20);
    await expect(authenticateApiKey(db.prisma, created.secret)).resolves.toEqual({ keyId: created.id, tenantId: tenantA });

    const listed = await callerFor(admin.id).apiKeys.list({ tenantId: tenantA });
    const mine = listed.find((k) => k.id === created.id);
    expect(mine).toEqual({
      id: created.id, name: "ci deploys", prefix: created.prefix,
      createdAt: expect.any(String), lastUsedAt: expect.any(String), revokedAt: null,
    });
    const everything = JSON.stringify([listed, await auditRows(tenantA, "api_key.create")]);
    expect(everything).not.toContain(created.secret);
    expect(await auditRows(tenantA, "api_key.create")).toContainEqual({
      actor: admin.email, actor_user_id: admin.id, details: { prefix: created.prefix, name: "ci deploys" },
    });
  });

  it("lists only the tenant's own keys, newest first, with when each was last used", async () => {
    const tenantId = (await makeTenant(db)).id;
    const owner = await makeUser(db, { memberOf: [[tenantId, "admin"]] });
    const caller = callerFor(owner.id);
    expect(await caller.apiKeys.list({ tenantId })).toEqual([]);
    const first = await caller.apiKeys.create({ tenantId, name: "first" });
    const second = await caller.apiKeys.create({ tenantId, name: "second" });
    await createApiKey(db.prisma, { tenantId: null, name: "operator" });
    await createApiKey(db.prisma, { tenantId: tenantB, name: "elsewhere" });
    const before = await caller.apiKeys.list({ tenantId });
    expect(before.map((k) => k.name)).toEqual(["second", "first"]);
    expect(before.map((k) => k.lastUsedAt)).toEqual([null, null]);
    await authenticateApiKey(db.prisma, first.secret);
    const after = await caller.apiKeys.list({ tenantId });
    expect(after.find((k) => k.id === first.id)?.lastUsedAt).toEqual(expect.any(String));
    expect(after.find((k) => k.id === second.id)?.lastUsedAt).toBeNull();
  });

  it("revokes a key: its secret stops authenticating, the list says when, and a repeat changes nothing", async () => {
    const caller = callerFor(admin.id);
    const key = await caller.apiKeys.create({ tenantId: tenantA, name: "to revoke" });
    const revoked = await caller.apiKeys.revoke({ tenantId: tenantA, id: key.id });
    expect(revoked).toMatchObject({ id: key.id, prefix: key.prefix, revokedAt: expect.any(String) });
    await expect(authenticateApiKey(db.prisma, key.secret)).resolves.toBeNull();
    expect((await caller.apiKeys.list({ tenantId: tenantA })).find((k) => k.id === key.id)?.revokedAt).toBe(revoked.revokedAt);

    const again = await caller.apiKeys.revoke({ tenantId: tenantA, id: key.id });
    expect(again.revokedAt).toBe(revoked.revokedAt);
    const audit = (await auditRows(tenantA, "api_key.revoke")).filter((r) => r.details.prefix === key.prefix);
    expect(audit).toEqual([{ actor: admin.email, actor_user_id: admin.id, details: { prefix: key.prefix, name: "to revoke" } }]);
  });

  it("answers another tenant's key id exactly like a random id, down to the HTTP bytes, and leaves that key alone", async () => {
    const foreign = await createApiKey(db.prisma, { tenantId: tenantB, name: "b's" });
    const operatorKey = await createApiKey(db.prisma, { tenantId: null });
    const ids = [foreign.id, operatorKey.id, randomUUID(), "not-a-uuid"];
    const errors = await Promise.all(ids.map((id) => trpcError(callerFor(admin.id).apiKeys.revoke({ tenantId: tenantA, id }))));
    expect(errors.map((e) => [e.code, e.message])).toEqual(ids.map(() => ["NOT_FOUND", "API key not found"]));

    const foreignHttp = await httpMutation(admin.id, "apiKeys.revoke", { tenantId: tenantA, id: foreign.id });
    expect(foreignHttp.status).toBe(404);
    expect(foreignHttp).toEqual(await httpMutation(admin.id, "apiKeys.revoke", { tenantId: tenantA, id: randomUUID() }));

    await expect(authenticateApiKey(db.prisma, foreign.secret)).resolves.toEqual({ keyId: foreign.id, tenantId: tenantB });
    await expect(authenticateApiKey(db.prisma, operatorKey.secret)).resolves.toEqual({ keyId: operatorKey.id, tenantId: null });
  });

  it("refuses a key without a name", async () => {
    const error = await trpcError(callerFor(admin.id).apiKeys.create({ tenantId: tenantA, name: "   " }));
    expect(error.code).toBe("BAD_REQUEST");
  });
});

describe("who may call the settings procedures", () => {
  const everyProcedure = (tenantId: string, targetUserId: string, keyId: string) => {
    const calls = (userId: string) => {
      const c = callerFor(userId);
      return {
        "members.list": () => c.members.list({ tenantId }),
        "members.invite": () => c.members.invite({ tenantId, email: `x-${Date.now()}@example.test`, role: "admin" }),
        "members.invitations": () => c.members.invitations({ tenantId }),
        "members.revokeInvitation": () => c.members.revokeInvitation({ tenantId, id: keyId }),
        "members.setRole": () => c.members.setRole({ tenantId, userId: targetUserId, role: "member" }),
        "members.remove": () => c.members.remove({ tenantId, userId: targetUserId }),
        "apiKeys.list": () => c.apiKeys.list({ tenantId }),
        "apiKeys.create": () => c.apiKeys.create({ tenantId, name: "sneaky" }),
        "apiKeys.revoke": () => c.apiKeys.revoke({ tenantId, id: keyId }),
      };
    };
    return calls;
  };

  it("tells a plain member that no procedure exists, on every procedure, and changes nothing", async () => {
    const key = await createApiKey(db.prisma, { tenantId: tenantA, name: "kept" });
    const keysBefore = await db.prisma.apiKey.count({ where: { tenantId: tenantA } });
    const calls = everyProcedure(tenantA, admin.id, key.id)(member.id);
    for (const [name, call] of Object.entries(calls)) {
      const error = await trpcError(call());
      expect([name, error.code, error.message]).toEqual([name, "NOT_FOUND", expect.stringMatching(/^No procedure found on path "(members|apiKeys)\.\w+"$/)]);
    }
    expect(await roleOf(tenantA, admin.id)).toBe("admin");
    expect(await db.prisma.apiKey.count({ where: { tenantId: tenantA } })).toBe(keysBefore);
    await expect(authenticateApiKey(db.prisma, key.secret)).resolves.not.toBeNull();
    expect(await db.prisma.membership.count({ where: { tenantId: tenantA } })).toBe(2);
  });

  it("answers a non-member, even another tenant's admin, the same as for a tenant that does not exist", async () => {
    const key = await createApiKey(db.prisma, { tenantId: tenantA, name: "kept" });
    const foreign = everyProcedure(tenantA, admin.id, key.id)(adminB.id);
    const missing = everyProcedure("no-such-tenant", admin.id, key.id)(adminB.id);
    for (const [name, call] of Object.entries(foreign)) {
      const error = await trpcError(call());
      const other = await trpcError(missing[name as keyof typeof missing]());
      expect([name, error.code, error.message]).toEqual([name, "NOT_FOUND", other.message]);
      expect(error.message).toMatch(/^No procedure found on path/);
    }
    expect((await trpcError(callerFor(null).apiKeys.list({ tenantId: tenantA }))).message).toBe('No procedure found on path "apiKeys.list"');
    await expect(authenticateApiKey(db.prisma, key.secret)).resolves.not.toBeNull();
  });
});

describe("triggers.*", () => {
  it("lets an admin create and remove a trigger, each in the audit log; members may look and send a test event", async () => {
    const name = `flow-${randomUUID().slice(0, 8)}`;
    await insertSequence(db, tenantA, [{ type: "step", id: "x", handler: "noop" }], name);
    const slug = `order-paid-${randomUUID().slice(0, 8)}`;
    const created = await callerFor(admin.id).triggers.create({ tenantId: tenantA, slug, sequenceName: name, sequenceVersion: null, triggerType: "webhook", generateSecret: true });
    expect(created).toMatchObject({ slug, sequenceName: name, sequenceVersion: null, triggerType: "webhook", hasSecret: true, webhookPath: `/api/v1/webhooks/${slug}` });
    expect(created.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const listed = await callerFor(member.id).triggers.list({ tenantId: tenantA });
    expect(listed).toEqual([expect.objectContaining({ slug, hasSecret: true })]);
    expect(JSON.stringify(listed)).not.toContain(created.secret!);
    expect((await trpcError(callerFor(member.id).triggers.remove({ tenantId: tenantA, slug }))).message).toBe('No procedure found on path "triggers.remove"');

    const test = await callerFor(member.id).triggers.sendTest({ tenantId: tenantA, slug, data: { order: 7 } });
    const { rows: [instance] } = await db.sql.query("SELECT context->'data' AS data, metadata FROM task_instances WHERE id = $1", [test.instanceId]);
    expect(instance).toEqual({ data: { order: 7 }, metadata: { _trigger: slug, _trigger_type: "webhook", _trigger_event: { source: "test_event", by: member.email } } });
    expect(await callerFor(member.id).triggers.deliveries({ tenantId: tenantA, slug })).toEqual([
      expect.objectContaining({ source: "test", status: 201, outcome: "instance created", instanceId: test.instanceId }),
    ]);

    const bad = await trpcError(callerFor(admin.id).triggers.create({ tenantId: tenantA, slug: "bad slug", sequenceName: name, sequenceVersion: null, triggerType: "event", generateSecret: false }));
    expect(bad.code).toBe("BAD_REQUEST");
    expect(bad.message).toMatch(/^slug may hold only letters/);

    await callerFor(admin.id).triggers.remove({ tenantId: tenantA, slug });
    expect(await callerFor(admin.id).triggers.list({ tenantId: tenantA })).toEqual([]);
    expect((await auditRows(tenantA, "trigger.create")).map((r) => r.actor)).toEqual([admin.email]);
    expect(await auditRows(tenantA, "trigger.delete")).toHaveLength(1);
  });

  it("answers another tenant's slug as a slug nobody has, down to the bytes, and leaves it alone", async () => {
    const name = `flow-${randomUUID().slice(0, 8)}`;
    await insertSequence(db, tenantB, [{ type: "step", id: "x", handler: "noop" }], name);
    const foreignSlug = `b-only-${randomUUID().slice(0, 8)}`;
    await callerFor(adminB.id).triggers.create({ tenantId: tenantB, slug: foreignSlug, sequenceName: name, sequenceVersion: null, triggerType: "event", generateSecret: false });
    await db.sql.query("DELETE FROM trigger_slugs WHERE slug = 'nobody-has-this'");
    for (const path of ["triggers.remove", "triggers.sendTest"]) {
      const foreign = await httpMutation(admin.id, path, { tenantId: tenantA, slug: foreignSlug, data: null });
      const missing = await httpMutation(admin.id, path, { tenantId: tenantA, slug: "nobody-has-this", data: null });
      expect(foreign.status).toBe(404);
      expect(JSON.stringify(foreign).replaceAll(foreignSlug, "nobody-has-this")).toBe(JSON.stringify(missing));
    }
    expect(await callerFor(adminB.id).triggers.list({ tenantId: tenantB })).toEqual([expect.objectContaining({ slug: foreignSlug })]);
  });
});
