// The partition router fails closed: no placement, no access; an unregistered backend is
// Unsupported; placements only ever move forward in epoch.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import { AppError } from "../errors.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

async function appError(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

const sequence = () => ({
  id: randomUUID(),
  namespace: "default",
  name: "s",
  version: 1,
  definition: { blocks: [] },
  createdAt: new Date(),
});

describe("TenantPartitionRouter", () => {
  it("routes a placed tenant to its backend and epoch", async () => {
    const tenant = await makeTenant(db);
    const store = await db.storage.tenant(tenant.id);
    expect(store.backendId).toBe("primary");
    expect(store.epoch).toBe(1);
    await store.insertSequence(sequence());
    expect(await store.listSequences()).toHaveLength(1);
  });

  it("gives a tenant without placement no access at all, with the answer a missing tenant gets", async () => {
    await db.prisma.tenant.create({ data: { id: "unplaced", name: "Unplaced" } });
    // Rows that would be the tenant's, had it been placed: nothing may read them either.
    await db.sql.query(
      "INSERT INTO sequences (id, tenant_id, namespace, name, version, definition, created_at) VALUES ($1, 'unplaced', 'default', 'x', 1, '{}', now())",
      [randomUUID()],
    );

    const unplaced = await appError(db.storage.tenant("unplaced"));
    const missing = await appError(db.storage.tenant("never-existed"));
    expect(unplaced.code).toBe("not_found");
    expect({ code: unplaced.code, message: unplaced.message }).toEqual({ code: missing.code, message: missing.message });

    // Writes have no other way in than storage.tenant(): nothing was written.
    await appError(db.storage.tenant("unplaced").then((store) => store.insertSequence(sequence())));
    const { rows } = await db.sql.query("SELECT count(*)::int AS n FROM sequences WHERE tenant_id = 'unplaced'");
    expect(rows[0].n).toBe(1);
  });

  it("refuses a placement on a backend this process did not register, never falling back", async () => {
    const tenant = await makeTenant(db);
    await db.sql.query("UPDATE tenant_storage_placements SET backend_id = 'eu-9', epoch = 2 WHERE tenant_id = $1", [tenant.id]);
    const error = await appError(db.storage.tenant(tenant.id));
    expect(error.code).toBe("unsupported");
  });
});

describe("advanceTenantPlacement", () => {
  it("inserts when absent, then replaces only with a strictly greater epoch", async () => {
    await db.prisma.tenant.create({ data: { id: "moving", name: "Moving" } });
    await expect(db.storage.advanceTenantPlacement("moving", "primary", 1)).resolves.toEqual({ tenantId: "moving", backendId: "primary", epoch: 1, quiescedAt: null });
    await expect(db.storage.advanceTenantPlacement("moving", "primary", 3)).resolves.toMatchObject({ epoch: 3 });

    for (const stale of [3, 2]) {
      const conflict = await appError(db.storage.advanceTenantPlacement("moving", "primary", stale));
      expect(conflict.code).toBe("conflict");
    }
    const { rows } = await db.sql.query("SELECT backend_id, epoch FROM tenant_storage_placements WHERE tenant_id = 'moving'");
    expect(rows).toEqual([{ backend_id: "primary", epoch: 3 }]);
  });

  it("rejects invalid and unregistered backend ids and non-positive epochs, changing nothing", async () => {
    const tenant = await makeTenant(db);
    for (const [backend, epoch] of [["bad id!", 5], ["x".repeat(129), 5], ["", 5], ["eu-9", 5], ["primary", 0], ["primary", -1]] as const) {
      const error = await appError(db.storage.advanceTenantPlacement(tenant.id, backend, epoch));
      expect(error.code).toBe("invalid_argument");
    }
    expect((await db.storage.tenant(tenant.id)).epoch).toBe(1);
  });

  it("keeps epochs positive in the table itself", async () => {
    const tenant = await makeTenant(db);
    await expect(db.sql.query("UPDATE tenant_storage_placements SET epoch = 0 WHERE tenant_id = $1", [tenant.id])).rejects.toThrow(/epoch_check/);
  });
});
