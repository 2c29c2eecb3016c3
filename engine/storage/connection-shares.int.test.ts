// The connection share of the resource ledger, on a real pool: one tenant's statements hold at
// most its share of the pool, so another tenant's statement gets a connection at once however
// many the first has queued; and every statement ends at the statement timeout.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeTenant } from "../../test/factories.ts";
import { asTenantId, Storage, StorageBackends } from "./index.ts";

const POOL = 4;
const NOISY_STATEMENTS = 10;
const SLOW = "SELECT pg_sleep(0.4) /* noisy */";

let db: TestDatabase;
let noisy: string;
let quiet: string;

beforeAll(async () => {
  db = await freshDatabase();
  noisy = (await makeTenant(db)).id;
  quiet = (await makeTenant(db)).id;
  await insertSequence(db, quiet, [{ type: "step", id: "s", handler: "noop" }]);
});
afterAll(() => db.drop());

/** Runs the noisy tenant's slow statements and one quiet read on a pool of POOL with the given share. */
async function race(tenantSharePercent: number) {
  const storage = new Storage(new StorageBackends(db.config.backends, { poolSize: POOL, tenantSharePercent }));
  try {
    const noisyDb = storage.backends.primary.forTenant(asTenantId(noisy));
    const order: string[] = [];
    let peak = 0;
    const sampler = setInterval(() => {
      void db.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1 AND state = 'active'", [SLOW])
        .then(({ rows }) => (peak = Math.max(peak, rows[0]!.n)), () => {});
    }, 50);
    const flood = Array.from({ length: NOISY_STATEMENTS }, () => noisyDb.query(SLOW).then(() => order.push("noisy")));
    await new Promise((resolve) => setTimeout(resolve, 100)); // the flood has every connection it may take
    const quietRead = (await storage.tenant(quiet)).listSequences().then((sequences) => {
      order.push("quiet");
      return sequences;
    });
    const [sequences] = await Promise.all([quietRead, ...flood]);
    clearInterval(sampler);
    return { order, peak, sequences };
  } finally {
    await storage.close();
  }
}

describe("connection shares", () => {
  it("a tenant flooding the pool holds at most its share, and another tenant's read goes first", async () => {
    const { order, peak, sequences } = await race(50);
    expect(sequences).toHaveLength(1);
    expect(order.indexOf("quiet")).toBe(0);
    expect(peak).toBe(POOL / 2);
  });

  it("without the share (100% of the pool), the same flood makes the quiet tenant wait behind it", async () => {
    const { order, peak } = await race(100);
    expect(order.indexOf("quiet")).toBeGreaterThan(0);
    expect(peak).toBe(POOL);
  });

  it("a statement over the statement timeout ends with PostgreSQL's cancel (57014) and frees its connection", async () => {
    const storage = new Storage(new StorageBackends(db.config.backends, { poolSize: 1, statementTimeoutMs: 200 }));
    try {
      const tenantDb = storage.backends.primary.forTenant(asTenantId(noisy));
      await expect(tenantDb.query("SELECT pg_sleep(2)")).rejects.toMatchObject({ code: "57014" });
      await expect((await storage.tenant(quiet)).listSequences()).resolves.toHaveLength(1);
    } finally {
      await storage.close();
    }
  });

  it("a transaction of a tenant counts as one of its connections until it is released", async () => {
    const storage = new Storage(new StorageBackends(db.config.backends, { poolSize: 2, tenantSharePercent: 50 }));
    try {
      const tenantDb = storage.backends.primary.forTenant(asTenantId(noisy));
      const client = await tenantDb.connect();
      let second = false;
      const waiting = tenantDb.query("SELECT 1").then(() => (second = true));
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(second).toBe(false);
      client.release();
      await waiting;
      expect(second).toBe(true);
    } finally {
      await storage.close();
    }
  });
});
