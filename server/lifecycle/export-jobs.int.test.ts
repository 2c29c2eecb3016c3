// The console's export jobs through tRPC (ops.exports.start / list), with real backends: a job
// runs in the background to done with the manifest's files, is audited, refuses a second start
// while one runs, and a job whose row stopped moving reads as interrupted and can be started again.
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { createCaller } from "../api/root.ts";
import { createContext } from "../api/trpc.ts";
import { finishedExport, STALE_MS } from "./export-jobs.ts";

let second: TestDatabase;
let db: TestDatabase;
let exportDir: string;
let operator: Awaited<ReturnType<typeof makeUser>>;

beforeAll(async () => {
  exportDir = await fs.mkdtemp(path.join(os.tmpdir(), "bulkhead-export-jobs-"));
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}`, BULKHEAD_EXPORT_DIR: exportDir });
  operator = await makeUser(db, { isOperator: true });
});
afterAll(async () => {
  await db.drop();
  await second.drop();
  await fs.rm(exportDir, { recursive: true, force: true });
});

const ops = () => createCaller(createContext(db, operator.id)).ops;

/** The tenant's latest export once it is no longer running. */
async function settled(tenantId: string) {
  for (;;) {
    const [latest] = await ops().exports.list({ tenantId, limit: 1 });
    if (latest && latest.status !== "running") return latest;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("ops.exports", () => {
  it("runs an export of a tenant on eu-1 in the background to done, with its files, downloads and audit entries", async () => {
    const tenant = (await makeTenant(db)).id;
    await db.storage.advanceTenantPlacement(tenant, "eu-1", 2);
    const seq = await insertSequence(second, tenant, [{ type: "step", id: "x", handler: "noop" }]);
    await insertInstancesOf(second, tenant, seq, 40);

    const started = await ops().exports.start({ tenantId: tenant });
    expect(started).toMatchObject({ tenantId: tenant, status: "running", requestedBy: operator.email, downloads: [] });
    const done = await settled(tenant);
    expect(done).toMatchObject({ id: started.id, status: "done", backend: "eu-1", error: null });
    expect(done.finishedAt).not.toBeNull();
    expect(done.files.map((f) => [f.name, f.rows])).toEqual([
      ["sequences.ndjson", 1], ["instances.ndjson", 40], ["outputs.ndjson", 0], ["signals.ndjson", 0],
      ["schedules.ndjson", 0], ["triggers.ndjson", 0], ["credentials.ndjson", 0],
    ]);
    expect(done.downloads.map((d) => d.href)).toEqual(
      [...done.files.map((f) => f.name), "manifest.json"].map((name) => `/api/ops/exports/${started.id}/${name}`),
    );
    const dir = path.join(exportDir, started.id);
    expect(await finishedExport(db, started.id)).toEqual({ tenantId: tenant, dir });
    const manifest = JSON.parse(await fs.readFile(path.join(dir, "manifest.json"), "utf8"));
    expect(manifest.files).toEqual(done.files);

    const audit = await db.sql.query("SELECT actor, action, details FROM audit_log WHERE tenant_id = $1 ORDER BY id", [tenant]);
    expect(audit.rows.map((r) => [r.actor, r.action, r.details.export_id])).toEqual([
      [operator.email, "tenant.export.start", started.id], [operator.email, "tenant.export.done", started.id],
    ]);
  });

  it("refuses a second start while one runs; a job whose row stopped moving is interrupted and can be started again", async () => {
    const tenant = (await makeTenant(db)).id;
    const stuck = randomUUID();
    await db.sql.query(
      "INSERT INTO tenant_exports (id, tenant_id, requested_by, status, dir) VALUES ($1, $2, 'someone@example.test', 'running', '/nowhere')",
      [stuck, tenant],
    );
    await expect(ops().exports.start({ tenantId: tenant })).rejects.toMatchObject({ code: "CONFLICT", message: "an export of this tenant is already running" });
    expect(await finishedExport(db, stuck)).toBeNull();

    // Its web process died: the row has not moved for longer than a live job ever leaves it.
    await db.sql.query("UPDATE tenant_exports SET updated_at = now() - $2 * interval '1 millisecond' WHERE id = $1", [stuck, STALE_MS + 1_000]);
    expect(await ops().exports.list({ tenantId: tenant })).toMatchObject([
      { id: stuck, status: "interrupted", error: "interrupted: the web process running it stopped", downloads: [] },
    ]);
    const again = await ops().exports.start({ tenantId: tenant });
    expect((await settled(tenant)).id).toBe(again.id);
    const [latest, before] = await ops().exports.list({ tenantId: tenant });
    expect([latest!.id, latest!.status, before!.id, before!.status]).toEqual([again.id, "done", stuck, "failed"]);
    expect(before!.finishedAt).not.toBeNull();
  });

  it("answers a tenant that does not exist as NOT_FOUND, and an id no export has with no directory", async () => {
    await expect(ops().exports.start({ tenantId: "no-such-tenant" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(ops().exports.list({ tenantId: "no-such-tenant" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await finishedExport(db, randomUUID())).toBeNull();
  });
});
