// The overview procedures against a real PostgreSQL: throughput per minute over the last hour
// (counted exactly, window edges included), the latest failures newest first with their sequence
// names, and a non-member answered exactly like a tenant that does not exist.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { TRPCError } from "@trpc/server";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { appRouter, createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenantA: string;
let tenantB: string;
let member: { id: string; email: string };

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenantA, "member"]] });
});
afterAll(() => db.drop());
afterEach(() => {
  vi.useRealTimers();
});

const callerFor = (userId: string | null) => createCaller(createContext(db, userId));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

async function http(userId: string, path: string, input: unknown) {
  const url = `http://localhost/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`;
  const response = await fetchRequestHandler({
    endpoint: "/api/trpc", req: new Request(url), router: appRouter, createContext: () => createContext(db, userId),
  });
  return { status: response.status, headers: [...response.headers.entries()], body: await response.text() };
}

/** A finished (or not) instance of `tenantId`; returns its id. */
async function finished(tenantId: string, state: string, completedAt: Date | null, sequenceId: string = randomUUID()) {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, completed_at)
     VALUES (gen_random_uuid(), $1, 'default', $2, $3, $4) RETURNING id`,
    [tenantId, sequenceId, state, completedAt],
  );
  return rows[0]!.id;
}

describe("overview.throughput", () => {
  it("counts completed and failed instances per minute over the last 60 minutes, exactly", async () => {
    const tenant = (await makeTenant(db)).id;
    const user = await makeUser(db, { memberOf: [[tenant, "member"]] });
    // "Now" is 20 s into the minute starting at 10:30; the window is 09:31:00 (inclusive) to 10:31:00 (exclusive).
    const now = new Date("2026-11-29T10:30:20.000Z");
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(now);
    const at = (iso: string) => new Date(`2026-11-29T${iso}Z`);
    // The current minute: 3 completed, 1 failed.
    for (const t of ["10:30:00.000", "10:30:10.000", "10:30:19.999"]) await finished(tenant, "completed", at(t));
    await finished(tenant, "failed", at("10:30:05.000"));
    // Ten minutes back: 2 completed, 2 failed (one on the minute's last millisecond).
    for (const t of ["10:20:00.000", "10:20:59.999"]) await finished(tenant, "completed", at(t));
    for (const t of ["10:20:30.000", "10:20:59.999"]) await finished(tenant, "failed", at(t));
    // The window's first instant is in; the millisecond before it is out.
    await finished(tenant, "completed", at("09:31:00.000"));
    await finished(tenant, "failed", at("09:30:59.999"));
    // Not throughput: cancelled, not finished, another tenant's.
    await finished(tenant, "cancelled", at("10:30:01.000"));
    await finished(tenant, "running", null);
    await finished(tenantB, "completed", at("10:30:02.000"));

    const { bucketSecs, buckets } = await callerFor(user.id).overview.throughput({ tenantId: tenant });
    expect(bucketSecs).toBe(60);
    expect(buckets).toHaveLength(60);
    expect(buckets[0]!.start).toBe("2026-11-29T09:31:00.000Z");
    expect(buckets[59]!.start).toBe("2026-11-29T10:30:00.000Z");
    buckets.forEach((b, i) => expect(new Date(b.start).getTime()).toBe(at("09:31:00.000").getTime() + i * 60_000));
    const nonEmpty = buckets.filter((b) => b.completed + b.failed > 0);
    expect(nonEmpty).toEqual([
      { start: "2026-11-29T09:31:00.000Z", completed: 1, failed: 0 },
      { start: "2026-11-29T10:20:00.000Z", completed: 2, failed: 2 },
      { start: "2026-11-29T10:30:00.000Z", completed: 3, failed: 1 },
    ]);
  });

  it("gives 60 empty buckets for a tenant with nothing finished", async () => {
    const tenant = (await makeTenant(db)).id;
    const user = await makeUser(db, { memberOf: [[tenant, "member"]] });
    const { buckets } = await callerFor(user.id).overview.throughput({ tenantId: tenant });
    expect(buckets).toHaveLength(60);
    expect(buckets.every((b) => b.completed === 0 && b.failed === 0)).toBe(true);
  });
});

describe("overview.recentFailures", () => {
  it("lists the last 10 failed instances, newest first, with sequence names and links' ids", async () => {
    const seq = await insertSequence(db, tenantA, [{ type: "step", id: "a", handler: "noop" }], "nightly-report");
    const base = Date.now() - 3_600_000;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await finished(tenantA, "failed", new Date(base + i * 1_000), seq));
    // The newest failure's sequence is gone: listed without a name.
    const orphanSeq = randomUUID();
    const orphan = await finished(tenantA, "failed", new Date(base + 60_000), orphanSeq);
    await finished(tenantA, "completed", new Date(base + 120_000), seq);
    await finished(tenantB, "failed", new Date(base + 120_000), seq);

    const failures = await callerFor(member.id).overview.recentFailures({ tenantId: tenantA });
    expect(failures).toHaveLength(10);
    expect(failures[0]).toEqual({
      id: orphan, sequenceId: orphanSeq, sequenceName: null, sequenceVersion: null,
      completedAt: new Date(base + 60_000).toISOString(),
    });
    // Then the newest nine of the twelve, newest first.
    expect(failures.slice(1).map((f) => f.id)).toEqual(ids.slice(3).reverse());
    expect(failures.slice(1).every((f) => f.sequenceName === "nightly-report" && f.sequenceVersion === 1 && f.sequenceId === seq)).toBe(true);
    expect(failures[1]!.completedAt).toBe(new Date(base + 11_000).toISOString());
  });

  it("is empty for a tenant without failures", async () => {
    const tenant = (await makeTenant(db)).id;
    const user = await makeUser(db, { memberOf: [[tenant, "member"]] });
    await finished(tenant, "completed", new Date());
    expect(await callerFor(user.id).overview.recentFailures({ tenantId: tenant })).toEqual([]);
  });
});

describe("overview access", () => {
  it("refuses a non-member exactly as it refuses a tenant that does not exist", async () => {
    for (const path of ["throughput", "recentFailures"] as const) {
      const foreign = await trpcError(callerFor(member.id).overview[path]({ tenantId: tenantB }));
      const missing = await trpcError(callerFor(member.id).overview[path]({ tenantId: "no-such-tenant" }));
      expect(foreign.code).toBe("NOT_FOUND");
      expect({ code: foreign.code, message: foreign.message }).toEqual({ code: missing.code, message: missing.message });
      const foreignHttp = await http(member.id, `overview.${path}`, { tenantId: tenantB });
      expect(foreignHttp.status).toBe(404);
      expect(foreignHttp).toEqual(await http(member.id, `overview.${path}`, { tenantId: "no-such-tenant" }));
      expect((await trpcError(callerFor(null).overview[path]({ tenantId: tenantA }))).code).toBe("UNAUTHORIZED");
    }
  });
});
