// GET /api/metrics against real PostgreSQL: three backends (primary, eu-1, and one that is down),
// tenant minutes written as the engines write them, and the exposition checked value by value:
// sliding-window totals, cumulative lag buckets, the latest fresh backlog sample, the top-N cut
// with everyone else summed into tenant="other", platform series, and operator-only access.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TenantMetrics } from "../../engine/metrics/tenant-metrics.ts";
import { upsertOpenBreaker } from "../../engine/storage/breakers.ts";
import { writeTenantMetrics } from "../../engine/storage/metrics.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertDueInstances, makeTenant } from "../../test/factories.ts";
import { createApiKey } from "../control/api-keys.ts";
import { collectSnapshot, exposition, handleMetrics, METRICS_CONTENT_TYPE, topTenants } from "./prometheus.ts";

let second: TestDatabase;
let db: TestDatabase;
let operatorKey: string;
let tenantKey: string;
const now = new Date();
const ago = (minutes: number) => now.getTime() - minutes * 60_000;

beforeAll(async () => {
  second = await freshDatabase();
  db = await freshDatabase({
    // A backend nothing listens on: reported down, the rest of the scrape unaffected.
    BULKHEAD_BACKENDS: `eu-1=${second.url},down-1=postgresql://bulkhead:x@127.0.0.1:1/none`,
    BULKHEAD_METRICS_TOP_TENANTS: "2",
  });
  for (const slug of ["alpha", "beta", "gamma", "delta", "other"]) await makeTenant(db, slug);
  await db.storage.advanceTenantPlacement("beta", "eu-1", 2);

  const primary = new TenantMetrics();
  // alpha: 10 claims (8 within 10 ms, 2 at 3 s), 7 completed, 2 failed, 4 counted deferrals;
  // backlog samples 4 then 6 this minute. Two hours ago: outside the window.
  for (let i = 0; i < 8; i++) primary.claimed("alpha", 5, ago(5));
  for (let i = 0; i < 2; i++) primary.claimed("alpha", 3_000, ago(5));
  for (let i = 0; i < 7; i++) primary.ended("alpha", "completed", ago(5));
  for (let i = 0; i < 2; i++) primary.ended("alpha", "failed", ago(5));
  for (let i = 0; i < 3; i++) primary.deferred("alpha", "breaker", ago(5));
  primary.deferred("alpha", "rate_limit", ago(5));
  primary.deferred("alpha", "delay", ago(5)); // the workflow's own delay: not counted
  primary.backlog("alpha", 4, ago(0));
  primary.backlog("alpha", 6, ago(0));
  for (let i = 0; i < 500; i++) primary.claimed("alpha", 1, ago(120));
  // gamma: 3 claims at exactly 100 ms, all failed, 2 budget deferrals.
  for (let i = 0; i < 3; i++) primary.claimed("gamma", 100, ago(10));
  for (let i = 0; i < 3; i++) primary.ended("gamma", "failed", ago(10));
  for (let i = 0; i < 2; i++) primary.deferred("gamma", "budget", ago(10));
  // delta: 1 claim at 250 ms, 1 cap deferral, a fresh backlog of 2 (load 3, as gamma's).
  primary.claimed("delta", 250, ago(1));
  primary.deferred("delta", "cap", ago(1));
  primary.backlog("delta", 2, ago(0));
  // A real tenant named "other": the busiest, yet always summed into tenant="other".
  for (let i = 0; i < 100; i++) primary.claimed("other", 1, ago(5));
  for (let i = 0; i < 100; i++) primary.ended("other", "completed", ago(5));
  // A copy of beta left on primary by its move: beta is placed on eu-1, so this never counts.
  for (let i = 0; i < 1_000; i++) primary.claimed("beta", 1, ago(3));
  await writeTenantMetrics(db.sql, primary.drain());

  // beta on eu-1: 5 claims over a minute late, all completed; its only backlog sample is 30 min old.
  const eu = new TenantMetrics();
  for (let i = 0; i < 5; i++) eu.claimed("beta", 70_000, ago(2));
  for (let i = 0; i < 5; i++) eu.ended("beta", "completed", ago(2));
  eu.backlog("beta", 20, ago(30));
  await writeTenantMetrics(second.sql, eu.drain());

  const openedAt = new Date();
  await upsertOpenBreaker(db.sql, { tenantId: "alpha", handler: "http_request", failureCount: 5, openedAt });
  await upsertOpenBreaker(db.sql, { tenantId: "gamma", handler: "llm_call", failureCount: 5, openedAt });
  await upsertOpenBreaker(db.sql, { tenantId: "beta", handler: "stale_copy", failureCount: 5, openedAt });
  await db.sql.query("UPDATE tenant_storage_placements SET quiesced_at = now() WHERE tenant_id = 'gamma'");

  await insertDueInstances(db, "alpha", 3);
  await db.sql.query("UPDATE task_instances SET state = 'failed' WHERE id = (SELECT id FROM task_instances LIMIT 1)");
  await insertDueInstances(second, "beta", 2);

  operatorKey = (await createApiKey(db.prisma, { tenantId: null })).secret;
  tenantKey = (await createApiKey(db.prisma, { tenantId: "alpha" })).secret;
});

afterAll(async () => {
  await db.drop();
  await second.drop();
});

function get(headers: Record<string, string> = {}) {
  return handleMetrics(new Request("http://bulkhead.test/api/metrics", { headers }), db, now);
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\})? (NaN|[+-]Inf|-?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"/g;
const key = (name: string, labels: Record<string, string> = {}) =>
  `${name}${JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))))}`;

/** Parses the exposition strictly (format, families together, TYPE first, no duplicates) into series → value. */
function parse(text: string): { values: Map<string, number>; types: Map<string, string> } {
  expect(text.endsWith("\n")).toBe(true);
  const values = new Map<string, number>();
  const types = new Map<string, string>();
  let family: string | null = null;
  for (const line of text.slice(0, -1).split("\n")) {
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment) {
      if (comment[1] === "TYPE") {
        expect(types.has(comment[2]!), `TYPE of ${comment[2]} twice`).toBe(false);
        expect(["counter", "gauge", "histogram", "summary", "untyped"]).toContain(comment[3]);
        types.set(comment[2]!, comment[3]!);
        family = comment[2]!;
      }
      continue;
    }
    const sample = SAMPLE.exec(line);
    expect(sample, `not a sample line: ${line}`).not.toBeNull();
    expect(sample![1], `${line} outside its family`).toBe(family);
    const labels = Object.fromEntries([...(sample![2] ?? "").matchAll(LABEL)].map((m) => [m[1]!, m[2]!]));
    const series = key(sample![1]!, labels);
    expect(values.has(series), `${series} twice`).toBe(false);
    values.set(series, sample![3] === "+Inf" ? Infinity : Number(sample![3]));
  }
  return { values, types };
}

async function scrape() {
  const response = await get({ authorization: `Bearer ${operatorKey}` });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe(METRICS_CONTENT_TYPE);
  return parse(await response.text());
}

const LE = ["0.01", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "+Inf"];
const REASONS = ["breaker", "rate_limit", "budget", "send_window", "cap"];

function tenantSeries(values: Map<string, number>, tenant: string) {
  const v = (name: string, labels: Record<string, string> = {}) => values.get(key(name, { tenant, ...labels }));
  return {
    claimed: v("bulkhead_tenant_claimed_last_1h"),
    completed: v("bulkhead_tenant_completed_last_1h"),
    failed: v("bulkhead_tenant_failed_last_1h"),
    deferred: Object.fromEntries(REASONS.map((reason) => [reason, v("bulkhead_tenant_deferred_last_1h", { reason })])),
    lag: LE.map((le) => v("bulkhead_tenant_schedule_lag_seconds_bucket", { le })),
    lagCount: v("bulkhead_tenant_schedule_lag_seconds_count"),
    backlog: v("bulkhead_tenant_backlog"),
    breakersOpen: v("bulkhead_breakers_open"),
  };
}

describe("GET /api/metrics", () => {
  it("gives the top 2 tenants their own series with exact window totals, cumulative buckets and backlog", async () => {
    const { values } = await scrape();
    expect(tenantSeries(values, "beta")).toEqual({
      claimed: 5, completed: 5, failed: 0,
      deferred: { breaker: 0, rate_limit: 0, budget: 0, send_window: 0, cap: 0 },
      lag: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5], lagCount: 5,
      backlog: 0, // its only sample is 30 minutes old
      breakersOpen: 0, // the breaker row left on primary is not beta's any more
    });
    expect(tenantSeries(values, "alpha")).toEqual({
      claimed: 10, completed: 7, failed: 2,
      deferred: { breaker: 3, rate_limit: 1, budget: 0, send_window: 0, cap: 0 },
      lag: [8, 8, 8, 8, 8, 8, 8, 10, 10, 10, 10, 10], lagCount: 10,
      backlog: 6,
      breakersOpen: 1,
    });
  });

  it("sums every other tenant, the one named \"other\" included, into tenant=\"other\"", async () => {
    const { values } = await scrape();
    expect(tenantSeries(values, "other")).toEqual({
      claimed: 104, completed: 100, failed: 3,
      deferred: { breaker: 0, rate_limit: 0, budget: 2, send_window: 0, cap: 1 },
      lag: [100, 100, 103, 104, 104, 104, 104, 104, 104, 104, 104, 104], lagCount: 104,
      backlog: 2,
      breakersOpen: 1,
    });
    const tenants = new Set([...values.keys()].flatMap((series) => [.../"tenant":"([^"]*)"/.exec(series)?.slice(1) ?? []]));
    expect([...tenants].sort()).toEqual(["alpha", "beta", "other"]);
  });

  it("ranks by claims plus mean backlog over the hour, ties by id, never the tenant named \"other\"", async () => {
    const snapshot = await collectSnapshot(db.storage, now);
    // beta 5 + 20, alpha 10 + 5, delta 1 + 2 and gamma 3 + 0 (a tie), "other" 100 but excluded.
    expect(topTenants(snapshot, 10)).toEqual(["beta", "alpha", "delta", "gamma"]);
    expect(topTenants(snapshot, 0)).toEqual([]);
  });

  it("reports every backend, its instances by state, and the quiesced tenants", async () => {
    const { values, types } = await scrape();
    expect(values.get(key("bulkhead_backend_up", { backend: "primary" }))).toBe(1);
    expect(values.get(key("bulkhead_backend_up", { backend: "eu-1" }))).toBe(1);
    expect(values.get(key("bulkhead_backend_up", { backend: "down-1" }))).toBe(0);
    for (const backend of ["primary", "eu-1"]) {
      const latency = values.get(key("bulkhead_backend_latency_seconds", { backend }));
      expect(latency).toBeGreaterThanOrEqual(0);
      expect(latency).toBeLessThan(2);
    }
    expect(values.has(key("bulkhead_backend_latency_seconds", { backend: "down-1" }))).toBe(false);
    const instances = (backend: string) =>
      Object.fromEntries(["scheduled", "running", "waiting", "paused", "completed", "failed", "cancelled"].map((state) => [
        state, values.get(key("bulkhead_instances", { backend, state })),
      ]));
    expect(instances("primary")).toEqual({ scheduled: 2, running: 0, waiting: 0, paused: 0, completed: 0, failed: 1, cancelled: 0 });
    expect(instances("eu-1")).toEqual({ scheduled: 2, running: 0, waiting: 0, paused: 0, completed: 0, failed: 0, cancelled: 0 });
    expect([...values.keys()].some((series) => series.includes("down-1") && !series.startsWith("bulkhead_backend_up"))).toBe(false);
    expect(values.get(key("bulkhead_tenants_quiesced"))).toBe(1);
    // Window totals fall as minutes leave the window: every family is a gauge, none a counter.
    expect(new Set(types.values())).toEqual(new Set(["gauge"]));
    expect([...types.keys()].every((name) => name.startsWith("bulkhead_"))).toBe(true);
  });

  it("answers an operator key sent as x-api-key too", async () => {
    const response = await get({ "x-api-key": operatorKey });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('bulkhead_tenant_claimed_last_1h{tenant="alpha"} 10\n');
  });

  it("refuses a tenant key exactly as no key and an unknown key: 401, nothing about any tenant", async () => {
    const replies = await Promise.all(
      ([{}, { "x-api-key": tenantKey }, { authorization: `Bearer ${tenantKey}` }, { "x-api-key": "bh_not-a-key" }] as Record<string, string>[]).map(async (headers) => {
        const response = await get(headers);
        return { status: response.status, headers: [...response.headers], text: await response.text() };
      }),
    );
    for (const reply of replies) {
      expect(reply).toEqual(replies[0]);
      expect(reply.status).toBe(401);
      expect(reply.text).not.toMatch(/alpha|beta|gamma|delta|bulkhead_/);
    }
    expect(replies[0]!.headers).toContainEqual(["www-authenticate", "Bearer"]);
  });
});

describe("exposition", () => {
  it("escapes label values and help text", () => {
    const text = exposition([
      { name: "x_total", help: 'back\\slash\nline "quoted"', type: "counter", samples: [{ labels: { a: 'q"b\\s\nn', b: "" }, value: 1.5 }, { value: Infinity }] },
    ]);
    expect(text).toBe(
      '# HELP x_total back\\\\slash\\nline "quoted"\n# TYPE x_total counter\nx_total{a="q\\"b\\\\s\\nn",b=""} 1.5\nx_total +Inf\n',
    );
    expect(() => exposition([{ name: "bad-name", help: "", type: "gauge", samples: [] }])).toThrow(/invalid metric name/);
  });
});
