// The copies of every tenant's placement and limits that engines keep (TenantView) and that
// Storage.listPlacements serves are read again only when the control plane's version moved. With
// 10,000 tenants, reading both tables every 500 ms was about a quarter of a core for an idle
// engine. So every change to either table must move the version, in the change's own transaction.
import { afterEach, beforeEach, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import { countStatements } from "../../test/statement-counts.ts";
import { createLogger } from "../logger.ts";
import { Storage, StorageBackends } from "../storage/index.ts";
import { TenantView } from "./tenant-view.ts";

let db: TestDatabase;
let backends: StorageBackends | undefined;
beforeEach(async () => {
  db = await freshDatabase();
});
afterEach(async () => {
  await backends?.close();
  backends = undefined;
  await db.drop();
});

/** Storage on connections that count the statements they run, by name. */
function countingStorage(): { storage: Storage; counts: Map<string, number> } {
  backends = new StorageBackends(db.config.backends, { poolSize: 4 });
  return { storage: new Storage(backends), counts: countStatements(backends.primary.pool) };
}

const version = async () => BigInt((await db.sql.query<{ version: string }>("SELECT version::text FROM control_plane_version")).rows[0]!.version);

/** Runs `sql` with triggers off (session_replication_role = replica): a change the version does not see. */
async function behindTheVersion(sql: string, values: unknown[]): Promise<void> {
  const client = await db.sql.connect();
  try {
    await client.query("SET session_replication_role = replica");
    await client.query(sql, values);
  } finally {
    await client.query("SET session_replication_role = DEFAULT");
    client.release();
  }
}

it("moves the version with every change to a placement or a tenant's limits, in that change's transaction", async () => {
  const changes: [string, () => Promise<unknown>][] = [];
  let tenant = "";
  changes.push(["a tenant created (its placement)", async () => (tenant = (await makeTenant(db)).id)]);
  changes.push(["a placement quiesced", () => db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [tenant])]);
  changes.push(["limits set", () => db.storage.setTenantLimits(tenant, { claimCap: 3 })]);
  changes.push(["limits changed", () => db.storage.setTenantLimits(tenant, { maxSteps: 9 })]);
  changes.push(["limits cleared", () => db.storage.setTenantLimits(tenant, { claimCap: null, maxSteps: null })]);
  changes.push(["a tenant deleted (its placement by cascade)", () => db.sql.query("DELETE FROM tenants WHERE id = $1", [tenant])]);
  for (const [change, make] of changes) {
    const before = await version();
    await make();
    expect({ change, moved: (await version()) > before }).toEqual({ change, moved: true });
  }

  const other = (await makeTenant(db)).id;
  const before = await version();
  const client = await db.sql.connect();
  try {
    await client.query("BEGIN");
    await client.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [other]);
    await client.query("ROLLBACK");
  } finally {
    client.release();
  }
  expect(await version()).toBe(before);
});

it("an engine's view reads the placements and limits again only when the version moved, and then sees the change", async () => {
  const tenant = (await makeTenant(db)).id;
  const { storage, counts } = countingStorage();
  const view = new TenantView(storage, createLogger("test", "silent"), 60_000);
  await view.start();
  try {
    for (let i = 0; i < 5; i++) await view.refresh();
    expect({ placements: counts.get("list_placements"), limits: counts.get("list_tenant_limits") }).toEqual({ placements: 1, limits: 1 });
    expect(counts.get("read_control_plane_version")).toBeGreaterThanOrEqual(6);
    expect(view.limitsOf(tenant)).toBeUndefined();

    await db.storage.setTenantLimits(tenant, { claimCap: 2 });
    await view.refresh();
    expect({ placements: counts.get("list_placements"), limits: counts.get("list_tenant_limits") }).toEqual({ placements: 2, limits: 2 });
    expect(view.limitsOf(tenant)?.claimCap).toBe(2);
    expect(view.claimCaps()).toContainEqual([tenant, 2]);

    await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [tenant]);
    await view.refresh();
    expect(view.isQuiesced(tenant)).toBe(true);
    expect(view.claimable(db.config.BULKHEAD_DEFAULT_BACKEND)).not.toContain(tenant);
  } finally {
    view.stop();
  }
});

it("Storage.listPlacements serves its copy until the version moves", async () => {
  const tenant = (await makeTenant(db)).id;
  const { storage, counts } = countingStorage();
  const placed = async () => (await storage.listPlacements()).find((p) => p.tenantId === tenant);
  expect((await placed())?.quiescedAt).toBeNull();
  await behindTheVersion("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = $1", [tenant]);
  // The version did not move: the copy is served, the table is not read.
  expect((await placed())?.quiescedAt).toBeNull();
  expect(counts.get("list_placements")).toBe(1);

  await db.sql.query("UPDATE control_plane_version SET version = version + 1");
  expect((await placed())?.quiescedAt).toBeInstanceOf(Date);
  expect(counts.get("list_placements")).toBe(2);
});
