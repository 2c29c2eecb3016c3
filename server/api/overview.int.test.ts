// The overview procedures against a real PostgreSQL: throughput per minute over the last hour
// (from tenant_metrics, window edges included, equal to what an engine ran), the latest failures
// newest first with their sequence names, and a non-member answered exactly like a tenant that
// does not exist.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { TRPCError } from "@trpc/server";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
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
  /** A minute of the tenant's tenant_metrics, as the engines write them. */
  const minute = (tenantId: string, at: Date, completed: number, failed: number) =>
    db.sql.query("INSERT INTO tenant_metrics (tenant_id, minute, claimed, completed, failed) VALUES ($1, $2, $3, $4, $5)", [tenantId, at, completed + failed, completed, failed]);

  it("gives the engines' completed and failed instances per minute over the last 60 minutes, from tenant_metrics", async () => {
    const tenant = (await makeTenant(db)).id;
    const user = await makeUser(db, { memberOf: [[tenant, "member"]] });
    // "Now" is 20 s into the minute starting at 10:30; the window is 09:31 (inclusive) to 10:31 (exclusive).
    const now = new Date("2026-11-29T10:30:20.000Z");
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(now);
    const at = (iso: string) => new Date(`2026-11-29T${iso}Z`);
    await minute(tenant, at("10:30:00.000"), 3, 1);
    await minute(tenant, at("10:20:00.000"), 2, 2);
    // The window's first minute is in; the one before it is out, as is another tenant's.
    await minute(tenant, at("09:31:00.000"), 1, 0);
    await minute(tenant, at("09:30:00.000"), 0, 5);
    await minute(tenantB, at("10:30:00.000"), 9, 9);
    // Instances are not read: a finished one with no minute counted by an engine is not throughput.
    await finished(tenant, "completed", at("10:25:00.000"));

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

  it("adds up to the instances an engine ran, completed and failed, counted from task_instances", async () => {
    const tenant = (await makeTenant(db)).id;
    const user = await makeUser(db, { memberOf: [[tenant, "member"]] });
    const ok = await insertSequence(db, tenant, [{ type: "step", id: "a", handler: "noop" }]);
    const bad = await insertSequence(db, tenant, [{ type: "step", id: "a", handler: "fail", params: { message: "no" } }]);
    await insertInstancesOf(db, tenant, ok, 12);
    await insertInstancesOf(db, tenant, bad, 5);
    const scheduler = makeScheduler(db);
    await scheduler.start();
    try {
      await expect.poll(async () => (await db.sql.query(
        "SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1 AND state IN ('completed', 'failed')", [tenant],
      )).rows[0].n, { timeout: 20_000 }).toBe(17);
    } finally {
      await scheduler.stop(); // writes its last minutes
    }
    const raw = (await db.sql.query<{ state: string; n: number }>(
      "SELECT state, count(*)::int AS n FROM task_instances WHERE tenant_id = $1 AND completed_at >= now() - interval '59 minutes' GROUP BY state", [tenant],
    )).rows;
    const { buckets } = await callerFor(user.id).overview.throughput({ tenantId: tenant });
    const sum = (key: "completed" | "failed") => buckets.reduce((total, b) => total + b[key], 0);
    expect({ completed: sum("completed"), failed: sum("failed") }).toEqual({
      completed: raw.find((r) => r.state === "completed")?.n ?? 0, failed: raw.find((r) => r.state === "failed")?.n ?? 0,
    });
    expect(sum("completed")).toBe(12);
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
