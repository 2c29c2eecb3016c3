// The placement commands against two real backends: list, advance with the epoch rules (exit 1
// on a stale one, changing nothing), and a move that prints its phases and is idempotent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence, makeTenant } from "../../test/factories.ts";
import { createLogger } from "../../engine/logger.ts";
import { MoveRunner } from "../../engine/moves/move-runner.ts";
import { startMove } from "../../engine/moves/move-tenant.ts";
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
  return cliInto([], ...argv);
}

async function cliInto(out: string[], ...argv: string[]) {
  const err: string[] = [];
  const status = await runCli(argv, { ...db, print: (line) => out.push(line) }, (line) => err.push(line));
  return { status, out, err };
}

const auditActions = async (tenantId: string) =>
  (await db.sql.query("SELECT action FROM audit_log WHERE tenant_id = $1 ORDER BY id", [tenantId])).rows.map((r) => r.action);

describe("placements", () => {
  it("lists each tenant's backend and epoch, and the backends registered", async () => {
    const tenant = (await makeTenant(db)).id;
    const { status, out } = await cli("placements", "list");
    expect(status).toBe(0);
    expect(out[0]).toBe("backends registered here: primary, eu-1");
    expect(out).toContain(`${tenant}\tprimary\tepoch 1`);
  });

  it("advances only to a newer epoch; a stale or equal one exits 1 with the conflict and changes nothing", async () => {
    const tenant = (await makeTenant(db)).id;
    expect(await cli("placements", "advance", tenant, "eu-1", "3")).toEqual({ status: 0, out: [`${tenant} is placed on eu-1 at epoch 3`], err: [] });
    for (const epoch of ["3", "2"]) {
      expect(await cli("placements", "advance", tenant, "primary", epoch)).toEqual({
        status: 1, out: [], err: [`error: placement epoch ${epoch} is not newer than the current epoch 3`],
      });
    }
    expect(await cli("placements", "advance", tenant, "ap-9", "4")).toMatchObject({ status: 1, err: ['error: backend "ap-9" is not registered'] });
    expect(await cli("placements", "advance", tenant, "bad id!", "4")).toMatchObject({ status: 1 });
    expect(await db.storage.listPlacements()).toContainEqual({ tenantId: tenant, backendId: "eu-1", epoch: 3, quiescedAt: null });
    expect(await auditActions(tenant)).toEqual(["placement.advance"]);
  });
});

describe("tenants move", () => {
  it("moves the tenant's rows phase by phase, printing each, and a second run has nothing to do", async () => {
    const tenant = (await makeTenant(db)).id;
    const seq = await insertSequence(db, tenant, [{ type: "step", id: "x", handler: "noop" }]);
    await insertInstancesOf(db, tenant, seq, 25);

    const moved = await cli("tenants", "move", tenant, "eu-1");
    expect(moved.err).toEqual([]);
    expect(moved.status).toBe(0);
    expect(moved.out).toEqual([
      expect.stringMatching(new RegExp(`^moving ${tenant} from primary to eu-1 \\(move [0-9a-f-]{36}\\)$`)),
      "  1/7 quiesce", "  2/7 drain", "  3/7 copy", "  4/7 validate", "  5/7 cutover", "  6/7 resume", "  7/7 cleanup",
      `${tenant} is on eu-1 at epoch 2; its rows on primary are deleted`,
    ]);
    const count = async (on: TestDatabase) => (await on.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1", [tenant])).rows[0].n;
    expect([await count(db), await count(second)]).toEqual([0, 25]);
    expect(await auditActions(tenant)).toEqual(["tenant.move.start", "tenant.move.done"]);

    expect(await cli("tenants", "move", tenant, "eu-1")).toEqual({ status: 0, out: [`${tenant} is already on eu-1 (epoch 2); nothing to move`], err: [] });
    expect(await cli("tenants", "move", "no-such-tenant", "eu-1")).toEqual({ status: 1, out: [], err: ["error: tenant not found"] });
  }, 30_000);
});

describe("tenants move, when an engine already runs the move", () => {
  it("follows the engine's phases to the end instead of racing it", async () => {
    const tenant = (await makeTenant(db)).id;
    const started = await startMove(db.storage, tenant, "eu-1", "ops@example.test");
    expect(started.kind).toBe("started");
    // Another process holds the move (as an engine's runner would).
    const holder = await db.storage.backends.primary.pool.connect();
    await holder.query("SELECT pg_advisory_lock(hashtext('tenant_move'), hashtext($1))", [tenant]);
    const out: string[] = [];
    const following = cliInto(out, "tenants", "move", tenant, "eu-1");
    await expect.poll(() => out.includes("  an engine is running this move; following it"), { timeout: 10_000 }).toBe(true);
    await holder.query("SELECT pg_advisory_unlock(hashtext('tenant_move'), hashtext($1))", [tenant]);
    holder.release();
    const runner = new MoveRunner(db.storage, createLogger("test", "silent"), { intervalMs: 50, graceMs: 200 });
    runner.start();
    try {
      const result = await following;
      expect(result).toMatchObject({ status: 0, err: [] });
      expect(out.at(-1)).toBe(`${tenant} is on eu-1 at epoch 2; its rows on primary are deleted`);
      expect(out.filter((l) => /^ {2}\d\/7 /.test(l))).toEqual([
        "  1/7 quiesce", "  2/7 drain", "  3/7 copy", "  4/7 validate", "  5/7 cutover", "  6/7 resume", "  7/7 cleanup",
      ]);
    } finally {
      await runner.stop();
    }
  }, 30_000);
});
