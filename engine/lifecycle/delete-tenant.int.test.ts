// Deleting a tenant placed on eu-1, with rows left on the primary too: nothing of it remains on
// any backend (every table with a tenant_id scanned, and every row's text searched for its slug),
// no other tenant's row changes, a deleter killed in any phase is resumed by running it again,
// and afterwards the slug answers every REST route exactly as a slug that never existed.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeUser, seedInstancesWithRows } from "../../test/factories.ts";
import { createApiKey } from "../../server/control/api-keys.ts";
import { createInvitation } from "../../server/control/invitations.ts";
import { createTenant } from "../../server/control/tenants.ts";
import { call, operatorKey } from "../../server/rest/testing.ts";
import { UUID_PARAMETERS } from "../../server/rest/index.ts";
import { ROUTES } from "../../server/rest/routes.ts";
import { asTenantId, DELETION_PHASES, Storage, StorageBackends, type DeletionPhase } from "../storage/index.ts";
import { setTenantLimits } from "../storage/tenant-limits.ts";
import { insertTrigger as insertTriggerRow } from "../storage/triggers.ts";
import { CONTROL_PLANE_TABLES, summarizeTenantRows } from "../storage/tenant-rows.ts";
import { deleteTenant } from "./delete-tenant.ts";

let second: TestDatabase;
let db: TestDatabase;
let storage: Storage;
beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  storage = new Storage(new StorageBackends(db.config.backends, { poolSize: 6 }));
});
afterAll(async () => {
  await storage.close();
  await db.drop();
  await second.drop();
});

const pool = (backendId: string) => storage.backends.get(backendId).pool;
const slugOf = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;
const options = { graceMs: 50, drainTimeoutMs: 10_000 };

/** A tenant on eu-1 with rows in the tables a tenant fills, some left on the primary, and its control-plane rows. */
async function populatedTenant(prefix: string): Promise<string> {
  const slug = slugOf(prefix);
  await createTenant(db.prisma, { slug, name: `${prefix} Inc`, backendId: "eu-1" });
  const admin = await makeUser(db, { memberOf: [[slug, "admin"]] });
  await createApiKey(db.prisma, { tenantId: slug, name: "ci" });
  await createInvitation(db.prisma, { tenantId: slug, email: `${slug}@invitee.test`, role: "member", invitedByUserId: admin.id });
  await setTenantLimits(db.sql, slug, { retentionDays: 9 });
  await db.sql.query("INSERT INTO audit_log (actor, tenant_id, action) VALUES ('test', $1, 'sequence.create')", [slug]);
  // A console export of it, with its files on disk.
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `export-${slug}-`));
  await fs.writeFile(path.join(dir, "instances.ndjson"), "{}\n");
  await db.sql.query("INSERT INTO tenant_exports (id, tenant_id, requested_by, status, dir) VALUES (gen_random_uuid(), $1, 'test', 'done', $2)", [slug, dir]);
  await insertSequence({ ...db, sql: pool("eu-1") } as TestDatabase, slug, [{ type: "step", id: "one", handler: "noop" }], `${slug}-seq`);
  // The slug's registry row is on the primary, the trigger where the tenant is placed.
  await db.sql.query("INSERT INTO trigger_slugs (slug, tenant_id) VALUES ($1, $2)", [`${slug}-hook`, slug]);
  await insertTriggerRow(pool("eu-1"), asTenantId(slug), {
    slug: `${slug}-hook`, namespace: "default", sequenceName: `${slug}-seq`, sequenceVersion: null, triggerType: "event", config: null, secret: null,
  });
  for (const state of ["completed", "waiting", "failed"]) await seedInstancesWithRows(pool("eu-1"), slug, 30, state, 1);
  await pool("eu-1").query("INSERT INTO tenant_metrics (tenant_id, minute, claimed) VALUES ($1, date_trunc('minute', now()), 5)", [slug]);
  // Left on the primary by an earlier placement: deletion goes to every backend.
  await seedInstancesWithRows(pool("primary"), slug, 3, "completed", 1);
  return slug;
}

/** Every row that names the tenant, on every backend: by a tenant_id column, or its slug anywhere in the row. */
async function rowsNaming(slug: string): Promise<string[]> {
  const found: string[] = [];
  for (const backendId of storage.backends.ids()) {
    const { rows: tables } = await pool(backendId).query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'",
    );
    for (const { table_name: table } of tables) {
      // The deletion's own record, and its two audit lines, are what is kept of it.
      const kept = table === "tenant_deletions" ? "false" : table === "audit_log" ? "t.action NOT LIKE 'tenant.delete.%'" : "true";
      const { rows } = await pool(backendId).query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${table}" t WHERE ${kept} AND strpos(to_jsonb(t)::text, $1) > 0`, [slug],
      );
      if (rows[0]!.n > 0) found.push(`${backendId}.${table}: ${rows[0]!.n}`);
    }
  }
  return found;
}

/** Everything of a tenant, for a before/after comparison: its rows per backend and its control-plane rows. */
async function fingerprint(slug: string) {
  const control: Record<string, unknown[]> = {};
  for (const table of CONTROL_PLANE_TABLES) {
    control[table] = (await db.sql.query(`SELECT to_jsonb(t) AS row FROM ${table} t WHERE tenant_id = $1 ORDER BY 1`, [slug])).rows;
  }
  return {
    primary: await summarizeTenantRows(pool("primary"), asTenantId(slug)),
    eu: await summarizeTenantRows(pool("eu-1"), asTenantId(slug)),
    control,
    tenant: (await db.sql.query("SELECT to_jsonb(t) AS row FROM tenants t WHERE id = $1", [slug])).rows,
  };
}

describe("tenant deletion", () => {
  it("leaves no row of the tenant on any backend, and changes no row of another tenant", async () => {
    const doomed = await populatedTenant("doomed");
    const bystander = await populatedTenant("bystander");
    expect((await rowsNaming(doomed)).length).toBeGreaterThan(10);
    const before = await fingerprint(bystander);

    const phases: DeletionPhase[] = [];
    const done = await deleteTenant(storage, doomed, "test", { ...options, beforePhase: (_d, phase) => void phases.push(phase) });
    expect(phases).toEqual(DELETION_PHASES.filter((p) => p !== "done"));
    expect(done).toMatchObject({ phase: "done", error: null });
    expect(done.detail.rows).toMatchObject({ "eu-1": { task_instances: 90 }, primary: { task_instances: 3 } });
    expect(await rowsNaming(doomed)).toEqual([]);
    expect(await fingerprint(bystander)).toEqual(before);
    // Its export's files went with it; the bystander's are still there.
    const exportDirs = async (slug: string) => {
      const { rows } = await db.sql.query<{ dir: string }>("SELECT dir FROM tenant_exports WHERE tenant_id = $1", [slug]);
      return rows.map((r) => r.dir);
    };
    expect(await exportDirs(doomed)).toEqual([]);
    const kept = await exportDirs(bystander);
    expect(kept).toHaveLength(1);
    await expect(fs.stat(kept[0]!)).resolves.toBeTruthy();
    expect(await fs.readdir(os.tmpdir())).not.toContainEqual(expect.stringMatching(new RegExp(`^export-${doomed}-`)));

    // What is kept: the deletion's record and its two audit lines, naming the tenant in their details.
    const audit = await db.sql.query("SELECT action, tenant_id, details->>'tenant' AS tenant FROM audit_log WHERE details->>'deletion_id' = $1 ORDER BY id", [done.id]);
    expect(audit.rows).toEqual([
      { action: "tenant.delete.start", tenant_id: null, tenant: doomed },
      { action: "tenant.delete.done", tenant_id: null, tenant: doomed },
    ]);
  });

  for (const phase of DELETION_PHASES.filter((p) => p !== "done")) {
    it(`is resumed after the deleter dies before ${phase}, and leaves nothing`, async () => {
      const doomed = await populatedTenant("killed");
      const bystander = await populatedTenant("bystander");
      const before = await fingerprint(bystander);
      await expect(deleteTenant(storage, doomed, "test", {
        ...options, beforePhase: (_d, p) => { if (p === phase) throw new Error(`killed before ${phase}`); },
      })).rejects.toThrow(`killed before ${phase}`);
      expect((await storage.deletions.active(doomed))?.phase).toBe(phase);
      expect(await deleteTenant(storage, doomed, "test", options)).toMatchObject({ phase: "done" });
      expect(await rowsNaming(doomed)).toEqual([]);
      expect(await fingerprint(bystander)).toEqual(before);
    });
  }

  it("is resumed after the deleter dies between batches of the rows", async () => {
    const doomed = await populatedTenant("midway");
    let batches = 0;
    await expect(deleteTenant(storage, doomed, "test", {
      ...options, onBatch: () => { if (++batches === 3) throw new Error("killed mid-batch"); },
    })).rejects.toThrow("killed mid-batch");
    expect((await rowsNaming(doomed)).length).toBeGreaterThan(0);
    expect(await deleteTenant(storage, doomed, "test", options)).toMatchObject({ phase: "done" });
    expect(await rowsNaming(doomed)).toEqual([]);
  });

  it("is run by an engine once the console records it", async () => {
    const doomed = await populatedTenant("recorded");
    const { startDeletion } = await import("./delete-tenant.ts");
    const { DeletionRunner } = await import("./deletion-runner.ts");
    const { createLogger } = await import("../logger.ts");
    const recorded = await startDeletion(storage, doomed, "ops@example.test");
    const runner = new DeletionRunner(storage, createLogger("test", "silent"), { intervalMs: 20, graceMs: 50 });
    runner.start();
    try {
      while ((await storage.deletions.get(recorded.id))?.phase !== "done") await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await runner.stop();
    }
    expect(await rowsNaming(doomed)).toEqual([]);
  });

  it("refuses to start while the tenant is being moved, and a move while it is being deleted", async () => {
    const slug = slugOf("busy");
    await createTenant(db.prisma, { slug, backendId: "primary" });
    await storage.moves.insert({ tenantId: slug, fromBackend: "primary", toBackend: "eu-1", fromEpoch: 1, requestedBy: "test" });
    await expect(deleteTenant(storage, slug, "test", options)).rejects.toMatchObject({ code: "conflict" });
    await db.sql.query("UPDATE tenant_moves SET phase = 'done' WHERE tenant_id = $1", [slug]);
    const { startDeletion } = await import("./delete-tenant.ts");
    await startDeletion(storage, slug, "test");
    const { startMove } = await import("../moves/move-tenant.ts");
    await expect(startMove(storage, slug, "eu-1", "test")).rejects.toMatchObject({ code: "conflict", message: "the tenant is being deleted" });
  });

  it("afterwards, the slug answers every REST route byte for byte as a slug that never existed", async () => {
    const doomed = await populatedTenant("gone");
    const { secret: oldKey } = await createApiKey(db.prisma, { tenantId: doomed });
    await deleteTenant(storage, doomed, "test", options);
    const never = slugOf("never");
    const opKey = await operatorKey(db);
    const sample: Record<string, string> = {};
    const answer = async (route: (typeof ROUTES)[number], slug: string) => {
      const path = route.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
        if (name === "tenant_id") return slug;
        sample[name] ??= UUID_PARAMETERS.has(name) ? crypto.randomUUID() : "x";
        return sample[name];
      });
      const reply = await call({ ...db } as TestDatabase, route.method, path, {
        key: opKey, headers: route.access === "tenant" ? { "x-tenant-id": slug } : {}, ...(route.method === "GET" || route.method === "DELETE" ? {} : { body: {} }),
      });
      return { status: reply.status, text: reply.text.replaceAll(slug, "<slug>") };
    };
    for (const route of ROUTES.filter((r) => r.access !== "public")) {
      expect({ route: `${route.method} ${route.path}`, ...(await answer(route, doomed)) }).toEqual({ route: `${route.method} ${route.path}`, ...(await answer(route, never)) });
    }
    // The tenant's own key is as good as a made-up one.
    const withOld = await call(db, "GET", "/sequences", { key: oldKey });
    const withMadeUp = await call(db, "GET", "/sequences", { key: `bk_${randomBytes(24).toString("hex")}` });
    expect({ status: withOld.status, text: withOld.text }).toEqual({ status: withMadeUp.status, text: withMadeUp.text });
  });
});
