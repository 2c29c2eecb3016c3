import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { emptyDatabase } from "../test/db.ts";
import { migrateDeploy, pendingMigrations } from "./database.ts";

let db: { url: string; drop(): Promise<void> };
beforeAll(async () => {
  db = await emptyDatabase();
});
afterAll(() => db.drop());

describe("migrations", () => {
  it("apply to an empty database and leave nothing pending", async () => {
    expect((await pendingMigrations(db.url)).length).toBeGreaterThan(0);
    await migrateDeploy(db.url);
    expect(await pendingMigrations(db.url)).toEqual([]);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const tables = await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
      expect(tables.rows.map((r) => r.tablename)).toEqual(
        expect.arrayContaining([
          "users", "tenants", "memberships", "api_keys", "tenant_storage_placements", "audit_log",
          "sequences", "task_instances", "block_outputs", "signals", "worker_tasks", "worker_task_attempts",
          "event_dedupe", "circuit_breakers", "rate_limit_windows", "tenant_budgets", "tenant_metrics",
        ]),
      );
      const claimIndex = await client.query<{ indexdef: string }>(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'task_instances_claim_idx'",
      );
      expect(claimIndex.rows[0]?.indexdef).toMatch(/\(priority DESC, next_fire_at\) WHERE \(state = 'scheduled'::text\)/);
    } finally {
      await client.end();
    }
  });

  it("are idempotent: a second deploy changes nothing", async () => {
    await migrateDeploy(db.url);
    expect(await pendingMigrations(db.url)).toEqual([]);
  });
});
