// `tenants delete <tenant> --confirm <tenant>` against two real backends: refused without the
// typed confirmation (nothing changes), then every phase printed, a progress line of rows deleted,
// and the tenant gone from both; an unknown tenant answered as every tenant command answers it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, seedInstancesWithRows } from "../../test/factories.ts";
import { runCli } from "./commands.ts";

let second: TestDatabase;
let db: TestDatabase;
beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}` });
});
afterAll(async () => {
  await db.drop();
  await second.drop();
});

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const progress: string[] = [];
  const status = await runCli(argv, { ...db, print: (line) => out.push(line), progress: (line) => progress.push(line) }, (line) => err.push(line));
  return { status, out, err, progress };
}

const count = async (db: TestDatabase, sql: string, tenant: string) => (await db.sql.query(sql, [tenant])).rows[0].n as number;

describe("tenants delete", () => {
  it("needs the tenant typed twice, then deletes it everywhere, phase by phase", async () => {
    const tenant = (await makeTenant(db)).id;
    await db.storage.advanceTenantPlacement(tenant, "eu-1", 2);
    await seedInstancesWithRows(second.sql, tenant, 20, "completed", 0);

    for (const confirm of [[], ["--confirm", "someone-else"]]) {
      expect(await cli("tenants", "delete", tenant, ...confirm)).toMatchObject({ status: 1, err: [`error: deleting ${tenant} needs --confirm ${tenant}`] });
    }
    expect(await count(db, "SELECT count(*)::int AS n FROM tenants WHERE id = $1", tenant)).toBe(1);

    const deleted = await cli("tenants", "delete", tenant, "--confirm", tenant);
    expect(deleted.status).toBe(0);
    expect(deleted.out[0]).toMatch(new RegExp(`^deleting ${tenant} \\(deletion [0-9a-f-]{36}\\)$`));
    expect(deleted.out.slice(1)).toEqual(["  1/4 quiesce", "  2/4 drain", "  3/4 delete_rows", "  4/4 control_plane", expect.stringMatching(new RegExp(`^${tenant} is deleted: \\d+ rows`))]);
    expect(deleted.progress.at(-1)).toMatch(/rows deleted/);
    expect(await count(db, "SELECT count(*)::int AS n FROM tenants WHERE id = $1", tenant)).toBe(0);
    expect(await count(second, "SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1", tenant)).toBe(0);
    expect(await count(second, "SELECT count(*)::int AS n FROM block_outputs WHERE tenant_id = $1", tenant)).toBe(0);
  });

  it("answers an unknown tenant as the other tenant commands do", async () => {
    const unknown = await cli("tenants", "delete", "no-such-tenant", "--confirm", "no-such-tenant");
    const other = await cli("limits", "show", "no-such-tenant");
    expect(unknown).toMatchObject({ status: 1, err: other.err });
  });
});
