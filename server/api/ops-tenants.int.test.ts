// The operator console's tenants table over 10,000 tenants on two real backends: a two-character
// search finds exactly the tenants whose slug or name starts with it (anywhere, from three), in
// every order; keyset pages of 50 walk every tenant exactly once in each order (name, slug,
// claims and lag of the last hour), the hour's minutes counted only on the backend each tenant is
// placed on; the page statements read indexes; and a row's figures: breakers, own limits and
// the ledger limits its minutes show it reached.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LAG_BUCKETS_MS } from "../../engine/metrics/tenant-metrics.ts";
import { upsertOpenBreaker } from "../../engine/storage/breakers.ts";
import { directoryPageQuery, type DirectoryQuery } from "../../engine/storage/tenant-directory.ts";
import { explainAnalyze, scansOf } from "../../test/explain.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser } from "../../test/factories.ts";
import { forgetRanking, RANKING_MAX_AGE_MS, RANKING_TTL_MS, TENANT_ORDERS, tenantPage, type TenantOrder } from "../ops/tenant-directory.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

const TENANTS = 10_000;
const PAGE = 50;
const MINUTE_MS = 60_000;

let second: TestDatabase;
let db: TestDatabase;
let operator: { id: string };
beforeAll(async () => {
  second = await freshDatabase();
  // Walking every order is 800 calls: above the operator's request rate.
  db = await freshDatabase({ BULKHEAD_BACKENDS: `eu-1=${second.url}`, BULKHEAD_API_RATE_PER_SEC: "100000" });
  operator = await makeUser(db, { isOperator: true });
}, 60_000);
afterAll(async () => {
  await db?.drop();
  await second?.drop();
});

const ops = () => createCaller(createContext(db, operator.id)).ops;

/** Every tenant of the seed, as the oracle computes its figures. */
interface Seeded {
  id: string;
  name: string;
  claims: number;
  /** The p99 bucket's bound (one more for "over the last bound"), or null without claims in it. */
  lag: number | null;
}

const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * 10,000 tenants and their placements in two statements: slugs like "ab-27" (two letters from
 * g, so a two-letter prefix is shared by about 15), names like "Hlco Tenant 1" (two other
 * letters). Every 7th is on eu-1. Every 3rd has five minutes of the last hour on its backend:
 * claims 5 × (g mod 17), and (unless g is a multiple of 5) every lag in bucket g mod 12. Minutes
 * the hour must not count: a copy on the wrong backend and minutes of three hours ago.
 */
async function seed(): Promise<void> {
  const slug = `chr(97 + g % 26) || chr(97 + (g / 26) % 26) || '-' || g`;
  await db.sql.query(
    `INSERT INTO tenants (id, name, created_at)
     SELECT ${slug}, initcap(chr(97 + (g * 7) % 26) || chr(97 + (g / 7) % 26)) || 'co Tenant ' || g, now()
       FROM generate_series(1, $1::int) AS g`,
    [TENANTS],
  );
  await db.sql.query(
    `INSERT INTO tenant_storage_placements (tenant_id, backend_id, epoch)
     SELECT ${slug}, CASE WHEN g % 7 = 0 THEN 'eu-1' ELSE 'primary' END, 1 FROM generate_series(1, $1::int) AS g`,
    [TENANTS],
  );
  // LIKE's own characters are taken literally.
  await db.sql.query(`UPDATE tenants SET name = '%off Tenant' WHERE id = 'ba-1'`);
  await db.sql.query(`UPDATE tenants SET name = 'x_y Tenant' WHERE id = 'ca-2'`);
  await db.sql.query("ANALYZE tenants");

  const now = Date.now();
  const minute = now - (now % MINUTE_MS);
  const buckets = LAG_BUCKETS_MS.length + 1;
  const metrics = (backend: "primary" | "eu-1", where: string, claimed: string, lag: string, minutes: number[]) => ({
    backend,
    text: `INSERT INTO tenant_metrics (tenant_id, minute, claimed, completed, lag_buckets)
           SELECT ${slug}, to_timestamp(m / 1000.0), ${claimed}, 0, ${lag}
             FROM generate_series(1, $1::int) AS g, unnest($2::bigint[]) AS m WHERE ${where}`,
    values: [TENANTS, minutes.map((ago) => minute - ago * MINUTE_MS)],
  });
  const inBucket = `CASE WHEN g % 5 = 0 THEN '{}'::int[] ELSE array_fill(0, ARRAY[g % 12]) || 1 || array_fill(0, ARRAY[${buckets - 1} - g % 12]) END`;
  const hour = [0, 1, 2, 3, 4];
  for (const insert of [
    metrics("primary", "g % 3 = 0 AND g % 7 <> 0", "g % 17", inBucket, hour),
    metrics("eu-1", "g % 3 = 0 AND g % 7 = 0", "g % 17", inBucket, hour),
    // A copy left on the backend the tenant moved away from, and minutes long gone: not counted.
    metrics("primary", "g % 3 = 0 AND g % 7 = 0", "1000", `array_fill(0, ARRAY[${buckets - 1}]) || 7`, hour),
    metrics("primary", "g % 3 = 0 AND g % 7 <> 0", "5000", `array_fill(0, ARRAY[${buckets - 1}]) || 7`, [180]),
  ]) {
    await (insert.backend === "primary" ? db : second).sql.query(insert.text, insert.values);
  }
  forgetRanking(db.storage);
}

const letter = (n: number) => String.fromCharCode(97 + (n % 26));
/** The seed's slug of tenant g. */
const slugOf = (g: number) => `${letter(g)}${letter(Math.floor(g / 26))}-${g}`;

/** The seed's tenants with the figures the oracle gives them (from g, not from the database). */
function oracle(): Seeded[] {
  return Array.from({ length: TENANTS }, (_, i) => {
    const g = i + 1;
    const id = slugOf(g);
    const initials = `${letter(g * 7).toUpperCase()}${letter(Math.floor(g / 7))}`;
    const name = id === "ba-1" ? "%off Tenant" : id === "ca-2" ? "x_y Tenant" : `${initials}co Tenant ${g}`;
    const active = g % 3 === 0;
    const bucket = g % 12;
    const lag = active && g % 5 !== 0 ? (bucket < LAG_BUCKETS_MS.length ? LAG_BUCKETS_MS[bucket]! : LAG_BUCKETS_MS.at(-1)! + 1) : null;
    return { id, name, claims: active ? 5 * (g % 17) : 0, lag };
  });
}

/** The order each sort should give, from the oracle alone. */
function expectedOrder(tenants: Seeded[], order: TenantOrder): string[] {
  const sorted = [...tenants];
  const ranked = (value: (t: Seeded) => number | null) => {
    const withValue = sorted.filter((t) => value(t) !== null).sort((a, b) => value(b)! - value(a)! || byBytes(a.id, b.id));
    const rest = sorted.filter((t) => value(t) === null).sort((a, b) => byBytes(a.id, b.id));
    return [...withValue, ...rest];
  };
  switch (order) {
    case "name": return sorted.sort((a, b) => byBytes(a.name.toLowerCase(), b.name.toLowerCase()) || byBytes(a.id, b.id)).map((t) => t.id);
    case "slug": return sorted.sort((a, b) => byBytes(a.id, b.id)).map((t) => t.id);
    case "claims": return ranked((t) => (t.claims > 0 ? t.claims : null)).map((t) => t.id);
    case "lag": return ranked((t) => t.lag).map((t) => t.id);
  }
}

/** Every page of one order and search, following `next`: the ids in the order served. */
async function walk(order: TenantOrder, search = ""): Promise<{ ids: string[]; pages: number; totals: Set<number> }> {
  const ids: string[] = [];
  const totals = new Set<number>();
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Awaited<ReturnType<ReturnType<typeof ops>["tenantPage"]>> = await ops().tenantPage({ search, order, cursor, limit: PAGE });
    expect(page.items.length).toBeLessThanOrEqual(PAGE);
    if (page.next !== null) expect(page.items).toHaveLength(PAGE);
    ids.push(...page.items.map((t) => t.id));
    totals.add(page.total);
    cursor = page.next;
    pages++;
  } while (cursor !== null);
  return { ids, pages, totals };
}

const matches = (t: Seeded, search: string) => {
  const q = search.toLowerCase();
  return [...q].length >= 3 ? `${t.id} ${t.name}`.toLowerCase().includes(q) : t.id.startsWith(q) || t.name.toLowerCase().startsWith(q);
};

describe("the tenants table over 10,000 tenants", () => {
  let tenants: Seeded[];
  beforeAll(async () => {
    await seed();
    tenants = oracle();
    const { rows } = await db.sql.query<{ id: string; name: string }>("SELECT id, name FROM tenants");
    // The oracle and the seed agree on every tenant.
    expect(new Map(rows.map((r) => [r.id, r.name]))).toEqual(new Map(tenants.map((t) => [t.id, t.name])));
  }, 60_000);

  it("finds the tenants whose slug or name starts with two characters, whatever their case, and only them", async () => {
    for (const search of ["ab", "Hl", "hl", "zz", "%o", "x_"]) {
      const expected = tenants.filter((t) => matches(t, search));
      const page = await ops().tenantPage({ search, order: "name", limit: 100 });
      expect(page.total, search).toBe(expected.length);
      expect(page.items.map((t) => t.id).sort(), search).toEqual(expected.map((t) => t.id).sort());
    }
    // Slug prefixes and name prefixes both count: "ab" is a slug prefix, "hl" a name prefix here.
    expect(tenants.filter((t) => t.id.startsWith("ab")).length).toBeGreaterThan(10);
    expect(tenants.filter((t) => t.name.toLowerCase().startsWith("hl") && !t.id.startsWith("hl")).length).toBeGreaterThan(10);
    // LIKE's wildcards are literal: "%o" is the one name starting with "%o", not every name with an o.
    expect((await ops().tenantPage({ search: "%o", order: "name" })).items.map((t) => t.id)).toEqual(["ba-1"]);
    expect((await ops().tenantPage({ search: "x_", order: "name" })).items.map((t) => t.id)).toEqual(["ca-2"]);
  });

  it("matches anywhere in the slug or the name from three characters", async () => {
    for (const search of ["co tenant 12", "-99", "TENANT 4321"]) {
      const expected = tenants.filter((t) => matches(t, search));
      expect(expected.length, search).toBeGreaterThan(0);
      const { ids, totals } = await walk("slug", search);
      expect(ids, search).toEqual(expectedOrder(expected, "slug"));
      expect([...totals], search).toEqual([expected.length]);
    }
  });

  for (const order of TENANT_ORDERS) {
    it(`walks every tenant exactly once by ${order}, 50 a page`, async () => {
      const { ids, pages, totals } = await walk(order);
      expect(new Set(ids).size).toBe(TENANTS);
      expect(ids).toEqual(expectedOrder(tenants, order));
      expect(pages).toBe(TENANTS / PAGE);
      expect([...totals]).toEqual([TENANTS]);
    }, 120_000);
  }

  it("walks a one-character search's matches in every order", async () => {
    const expected = tenants.filter((t) => matches(t, "q"));
    expect(expected.length).toBeGreaterThan(PAGE * 4);
    for (const order of TENANT_ORDERS) {
      const { ids } = await walk(order, "q");
      expect(ids, order).toEqual(expectedOrder(expected, order));
    }
  }, 60_000);

  it("shows each tenant's claims and lag of the hour from the backend it is placed on", async () => {
    const page = await ops().tenantPage({ order: "claims", limit: 5 });
    for (const row of page.items) {
      const seeded = tenants.find((t) => t.id === row.id)!;
      expect(row.claims, row.id).toBe(seeded.claims);
      expect(row.figures).toBe(true);
    }
    // A tenant on eu-1 (189 = 27 × 7): its own minutes there, not the copy left on the primary.
    const onEu = (await ops().tenantPage({ search: slugOf(189), order: "slug" })).items.find((t) => t.id === slugOf(189))!;
    expect(onEu).toMatchObject({ backendId: "eu-1", claims: 5 * (189 % 17), lagP99: { ms: LAG_BUCKETS_MS[189 % 12]!, over: false } });
  });

  it("pages a ranked order without asking the placements of every ranked tenant again, until the sum is read again", async () => {
    forgetRanking(db.storage);
    const directory = db.storage.directory;
    const asked = directory.placementsMatching.bind(directory);
    let asks = 0;
    directory.placementsMatching = (ids, search) => {
      asks++;
      return asked(ids, search);
    };
    try {
      const first = await ops().tenantPage({ order: "lag", limit: PAGE });
      const second = await ops().tenantPage({ order: "lag", cursor: first.next, limit: PAGE });
      expect(second.items[0]!.id).not.toBe(first.items[0]!.id);
      expect(asks).toBe(1);
      await ops().tenantPage({ order: "claims", search: "q", limit: PAGE });
      expect(asks).toBe(2);
      forgetRanking(db.storage);
      await ops().tenantPage({ order: "lag", limit: PAGE });
      expect(asks).toBe(3);
    } finally {
      directory.placementsMatching = asked;
    }
  });

  it("after the TTL orders pages by the last sum while the next is read, then by the next; past its max age a page waits for a new one", async () => {
    const topByClaims = async (now: number) => (await tenantPage(db, { search: "", order: "claims", limit: 1 }, now)).items[0]!.id;
    // A tenant of its own that takes the most claims once its minute is written.
    const climb = async (id: string) => {
      await db.sql.query("INSERT INTO tenants (id, name, created_at) VALUES ($1, $1, now())", [id]);
      await db.sql.query("INSERT INTO tenant_storage_placements (tenant_id, backend_id, epoch) VALUES ($1, 'primary', 1)", [id]);
      const minute = Date.now() - (Date.now() % MINUTE_MS);
      await db.sql.query("INSERT INTO tenant_metrics (tenant_id, minute, claimed, completed, lag_buckets) VALUES ($1, $2, 1000000, 0, '{}')", [id, new Date(minute)]);
    };
    try {
      forgetRanking(db.storage);
      const t0 = Date.now();
      const before = await topByClaims(t0);
      await climb("zz-climber");
      expect(await topByClaims(t0 + RANKING_TTL_MS - 1)).toBe(before);
      // Stale: served as it is, while the next sum is read.
      expect(await topByClaims(t0 + RANKING_TTL_MS)).toBe(before);
      await expect.poll(() => topByClaims(t0 + RANKING_TTL_MS + 1), { timeout: 10_000, interval: 20 }).toBe("zz-climber");

      await climb("zz-climber-2");
      await db.sql.query("UPDATE tenant_metrics SET claimed = 2000000 WHERE tenant_id = 'zz-climber-2'");
      // The sum served was read at t0 + RANKING_TTL_MS. Past its max age it is not served: this page waits for the next.
      expect(await topByClaims(t0 + RANKING_TTL_MS + RANKING_MAX_AGE_MS)).toBe("zz-climber-2");
    } finally {
      await db.sql.query("DELETE FROM tenants WHERE id LIKE 'zz-climber%'");
      forgetRanking(db.storage);
    }
  });

  it("refuses a cursor of another order, and one it did not give", async () => {
    const first = await ops().tenantPage({ order: "name", limit: 2 });
    await expect(ops().tenantPage({ order: "claims", cursor: first.next })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(ops().tenantPage({ order: "name", cursor: "not-a-cursor" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  describe("the page statement reads an index", () => {
    const plan = async (query: DirectoryQuery) => {
      const { text, values } = directoryPageQuery(query);
      const explained = await explainAnalyze(db.sql, text, values);
      // The tenants table's own scans (bitmap index scans name no relation: their index says whose they are).
      const indexes = explained.nodes.map((n) => n["Index Name"]).filter((name) => name?.startsWith("tenants_"));
      return { indexes, types: scansOf(explained, "tenants").map((s) => s["Node Type"]), ms: explained.executionMs };
    };

    it("for a two-character search: the prefix ranges of the name and slug indexes", async () => {
      const { indexes, types } = await plan({ search: "ab", order: "name", after: null, limit: PAGE + 1 });
      expect(types).not.toContain("Seq Scan");
      expect(indexes).toEqual(expect.arrayContaining(["tenants_name_order_idx", "tenants_slug_order_idx"]));
    });

    it("for a search of three characters or more: the trigram index", async () => {
      const { indexes, types } = await plan({ search: "tenant 432", order: "name", after: null, limit: PAGE + 1 });
      expect(types).not.toContain("Seq Scan");
      expect(indexes).toContain("tenants_search_trgm_idx");
    });

    it("for a page deep in either order: the order's index from the cursor on", async () => {
      const byName = await plan({ search: "", order: "name", after: { nameKey: "mm", id: "" }, limit: PAGE + 1 });
      expect(byName.types).toEqual(["Index Scan"]);
      expect(byName.indexes).toEqual(["tenants_name_order_idx"]);
      const bySlug = await plan({ search: "", order: "slug", after: { id: "mm-9000" }, limit: PAGE + 1, exclude: ["aa-676"] });
      expect(bySlug.types).toEqual(["Index Scan"]);
      expect(bySlug.indexes).toEqual(["tenants_slug_order_idx"]);
    });
  });
});

describe("a tenant's row", () => {
  it("has its open breakers, own limits and the ledger limits its hour reached", async () => {
    const tenant = (await makeTenant(db, "zz-limits")).id;
    await db.storage.setTenantLimits(tenant, { maxSteps: 4, claimCap: 3 });
    await upsertOpenBreaker(db.sql, { tenantId: tenant, handler: "smtp", failureCount: 5, openedAt: new Date() });
    await upsertOpenBreaker(db.sql, { tenantId: tenant, handler: "crm", failureCount: 5, openedAt: new Date() });
    const minute = Date.now() - (Date.now() % MINUTE_MS);
    await db.sql.query(
      `INSERT INTO tenant_metrics (tenant_id, minute, claimed, completed, failed, deferred, lag_buckets, steps_peak, steps_waited, resource_waits)
       VALUES ($1, $2, 7, 5, 1, '{"cap": 2, "rate_limit": 3, "breaker": 4}', '{7}', 4, 9, '{"outbound_per_host": 6}'),
              ($1, $3, 1, 0, 0, '{}', '{0,1}', 1, 0, '{}')`,
      [tenant, new Date(minute), new Date(minute - 2 * MINUTE_MS)],
    );
    const row = await ops().tenant({ tenantId: tenant });
    expect(row).toMatchObject({
      id: tenant, backendId: "primary", epoch: 1, quiesced: false, figures: true, memberCount: 0,
      claims: 8, completed: 5, failed: 1, openBreakers: 2,
      limits: { claimCap: 3, maxSteps: 4, maxConcurrency: null },
      defaults: { maxSteps: db.config.BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT },
    });
    expect(row.atLimit.map((l) => [l.resource, l.detail])).toEqual([
      ["step_slots", "peak 4 of 4"],
      ["instances_in_flight", `2 claims handed back at ${db.config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT}`],
      ["rate_limits_budgets", "3 steps deferred"],
      ["outbound_per_host", "6 waits"],
    ]);
    // The search finds it too, with the same figures.
    expect((await ops().tenantPage({ search: "zz-l" })).items).toEqual([expect.objectContaining({ id: tenant, openBreakers: 2, claims: 8 })]);
  });

  it("cannot be called \"new\": /ops/tenants/new is the page that creates one", async () => {
    await expect(ops().createTenant({ slug: "new", adminEmail: "new-admin@example.test" })).rejects.toMatchObject({
      code: "BAD_REQUEST", message: 'tenant slug "new" is reserved: choose another',
    });
  });

  it("is NOT_FOUND for a tenant that does not exist", async () => {
    await expect(ops().tenant({ tenantId: "no-such-tenant" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
