// Several storage backends at start-up: openBulkheadDatabase migrates every backend, one at a
// time, and the demo seed places initech on `eu-1` when that backend is registered.
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import pg from "pg";
import { DEMO_TENANTS, seedDemo } from "../prisma/seed.ts";
import { emptyDatabase, freshDatabase, type TestDatabase } from "../test/db.ts";
import { openBulkheadDatabase, pendingMigrations } from "./database.ts";

const dropped: (() => Promise<void>)[] = [];
afterEach(() => vi.unstubAllEnvs());
afterAll(() => Promise.all(dropped.map((drop) => drop())));

async function rows(url: string, query: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(query)).rows;
  } finally {
    await client.end();
  }
}

describe("openBulkheadDatabase", () => {
  it("applies pending migrations to every backend, and only once", async () => {
    const [primary, eu] = await Promise.all([emptyDatabase(), emptyDatabase()]);
    dropped.push(primary.drop, eu.drop);
    vi.stubEnv("DATABASE_URL", primary.url);
    vi.stubEnv("BULKHEAD_BACKENDS", `eu-1=${eu.url}`);
    const count = (await pendingMigrations(primary.url)).length;

    const lines: string[] = [];
    const db = await openBulkheadDatabase((line) => lines.push(line));
    expect(db).toMatchObject({ url: primary.url, backends: `eu-1=${eu.url}`, embedded: false });
    expect(lines).toEqual([`applying ${count} migration(s) to backend primary`, `applying ${count} migration(s) to backend eu-1`]);
    expect(await pendingMigrations(eu.url)).toEqual([]);

    lines.length = 0;
    await openBulkheadDatabase((line) => lines.push(line));
    expect(lines).toEqual([]);
  });

  it("names the backend it could not migrate", async () => {
    const primary = await freshDatabase();
    dropped.push(primary.drop);
    const missing = new URL(primary.url);
    missing.pathname = "/no_such_database";
    vi.stubEnv("DATABASE_URL", primary.url);
    vi.stubEnv("BULKHEAD_BACKENDS", `eu-1=${missing}`);
    await expect(openBulkheadDatabase(() => {})).rejects.toThrow(/^backend "eu-1": /);
  });
});

describe("seedDemo", () => {
  async function seeded(env: Record<string, string> = {}): Promise<TestDatabase> {
    const db = await freshDatabase(env);
    dropped.push(db.drop);
    expect(await seedDemo(db.prisma, db.storage, db.config)).toBe(true);
    return db;
  }
  const placements = (db: TestDatabase) =>
    db.prisma.tenantStoragePlacement.findMany({ orderBy: { tenantId: "asc" } }).then((all) => all.map((p) => [p.tenantId, p.backendId]));

  it("places initech on eu-1, its sequences and instances there, the others on the default", async () => {
    const eu = await freshDatabase();
    dropped.push(eu.drop);
    const db = await seeded({ BULKHEAD_BACKENDS: `eu-1=${eu.url}` });
    expect(await placements(db)).toEqual([["acme", "primary"], ["globex", "primary"], ["initech", "eu-1"]]);
    const perTenant = "SELECT tenant_id, count(*)::int AS n FROM task_instances GROUP BY 1 ORDER BY 1";
    expect(await rows(db.url, perTenant)).toEqual([{ tenant_id: "acme", n: 3 }, { tenant_id: "globex", n: 3 }]);
    expect(await rows(eu.url, perTenant)).toEqual([{ tenant_id: "initech", n: 3 }]);
    expect(await rows(eu.url, "SELECT DISTINCT tenant_id FROM sequences")).toEqual([{ tenant_id: "initech" }]);
  });

  it("keeps every tenant on the default backend when eu-1 is not registered", async () => {
    const db = await seeded();
    expect(await placements(db)).toEqual(DEMO_TENANTS.map((t) => [t.slug, "primary"]));
  });
});
