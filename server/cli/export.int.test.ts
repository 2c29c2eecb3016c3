// `tenants export <tenant> <dir>` against two real backends: the files and manifest of a tenant
// placed on eu-1, a progress line on standard error and a closing summary, the audit entries, an
// unknown tenant answered as every tenant command answers it, and a directory in use refused.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant } from "../../test/factories.ts";
import { runCli } from "./commands.ts";

let second: TestDatabase;
let db: TestDatabase;
let scratch: string;
beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), "bulkhead-cli-export-"));
});
afterAll(async () => {
  await db.drop();
  await second.drop();
  await fs.rm(scratch, { recursive: true, force: true });
});

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const progress: string[] = [];
  const status = await runCli(argv, { ...db, print: (line) => out.push(line), progress: (line) => progress.push(line) }, (line) => err.push(line));
  return { status, out, err, progress };
}

describe("tenants export", () => {
  it("writes the tenant's files from its placement, with a progress line and a summary, and audits it", async () => {
    const tenant = (await makeTenant(db)).id;
    await db.storage.advanceTenantPlacement(tenant, "eu-1", 2);
    const seq = await insertSequence(second, tenant, [{ type: "step", id: "x", handler: "noop" }]);
    await insertInstancesOf(second, tenant, seq, 1_200);
    const dir = path.join(scratch, "acme");

    const run = await cli("tenants", "export", tenant, dir);
    expect(run.err).toEqual([]);
    expect(run.status).toBe(0);
    expect(run.progress.length).toBeGreaterThan(0);
    expect(run.progress.at(-1)).toBe("exporting: sequences 1 · instances 1,200 · outputs 0 · signals 0 · schedules 0 · triggers 0 · credentials 0");
    const manifest = JSON.parse(await fs.readFile(path.join(dir, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ tenant: { id: tenant, slug: tenant }, backend: "eu-1" });
    expect(run.out).toEqual([
      ...manifest.files.map((f: { name: string; rows: number; bytes: number; sha256: string }) => `  ${f.name}\t${f.rows} rows\t${f.bytes} bytes\tsha256 ${f.sha256}`),
      `exported ${tenant} from eu-1 (snapshot ${manifest.snapshot_at}) to ${dir}`,
    ]);
    expect((await fs.readFile(path.join(dir, "instances.ndjson"), "utf8")).trim().split("\n")).toHaveLength(1_200);
    const audit = await db.sql.query("SELECT actor, action, details FROM audit_log WHERE tenant_id = $1 ORDER BY id", [tenant]);
    expect(audit.rows.map((r) => [r.actor, r.action])).toEqual([["cli", "tenant.export.start"], ["cli", "tenant.export.done"]]);
    expect(audit.rows[1].details.rows).toMatchObject({ "instances.ndjson": 1_200, "sequences.ndjson": 1 });
  });

  it("answers an unknown tenant as the other tenant commands do, and refuses a directory in use", async () => {
    const missing = await cli("tenants", "export", "no-such-tenant", path.join(scratch, "none"));
    expect(missing).toEqual({ status: 1, out: [], err: ["error: tenant not found"], progress: [] });
    expect((await cli("limits", "show", "no-such-tenant")).err).toEqual(missing.err);
    await expect(fs.stat(path.join(scratch, "none"))).rejects.toThrow();

    const tenant = (await makeTenant(db)).id;
    const used = path.join(scratch, "used");
    await fs.mkdir(used);
    await fs.writeFile(path.join(used, "notes.txt"), "mine");
    expect(await cli("tenants", "export", tenant, used)).toEqual({
      status: 1, out: [], err: [`error: ${used} is not empty: export into a new or empty directory`], progress: [],
    });
    expect(await fs.readdir(used)).toEqual(["notes.txt"]);
    expect((await cli("tenants", "export", tenant)).err).toEqual(["error: expected <tenant> <dir>"]);
  });
});
