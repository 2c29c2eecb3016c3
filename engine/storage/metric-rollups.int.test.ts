// The rollups of tenant_metrics on a real PostgreSQL: through batches that add to the same
// minutes, cross 5-minute and hourly spans and race each other, tenant_metric_spans and
// backend_metric_minutes stay equal to a roll-up computed here from the stored minutes, and
// rebuilding them from the minutes gives the same rows; pruning takes them with the minutes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, testPool, type TestDatabase } from "../../test/db.ts";
import { TenantMetrics, type MetricRow } from "../metrics/tenant-metrics.ts";
import { rebuildMetricRollups, SPAN_MINUTES, spanStartOf } from "./metric-rollups.ts";
import { pruneTenantMetrics, readTenantMetrics, writeTenantMetrics } from "./metrics.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db.drop();
});

const MINUTE = 60_000;
/** 23:57 UTC: the minutes written run across a 5-minute span, an hour and a day. */
const BASE = Date.UTC(2026, 10, 30, 23, 57);

interface Span {
  tenant_id: string; span_minutes: number; start: string; claimed: number; completed: number; failed: number; deferred: Record<string, number>;
  lag_buckets: number[]; demand: number; backlog_sum: number; backlog_samples: number; steps_peak: number; steps_waited: number; resource_waits: Record<string, number>;
}

const addKeyed = (into: Record<string, number>, from: Record<string, number | undefined>) => {
  for (const [k, n] of Object.entries(from)) if (n) into[k] = (into[k] ?? 0) + n;
};

/** The spans as a roll-up of the minutes, computed here. */
function expectedSpans(rows: readonly MetricRow[]): Span[] {
  const spans = new Map<string, Span>();
  for (const row of rows) {
    for (const span of SPAN_MINUTES) {
      const start = spanStartOf(row.minute, span).toISOString();
      const key = `${row.tenantId}|${span}|${start}`;
      const s = spans.get(key) ?? {
        tenant_id: row.tenantId, span_minutes: span, start, claimed: 0, completed: 0, failed: 0, deferred: {}, lag_buckets: new Array(12).fill(0),
        demand: 0, backlog_sum: 0, backlog_samples: 0, steps_peak: 0, steps_waited: 0, resource_waits: {},
      };
      s.claimed += row.claimed;
      s.completed += row.completed;
      s.failed += row.failed;
      addKeyed(s.deferred, row.deferred);
      row.lagBuckets.forEach((n, i) => (s.lag_buckets[i]! += n));
      s.demand += row.claimed + (row.backlogSamples.at(-1) ?? 0);
      s.backlog_sum += row.backlogSamples.reduce((a, b) => a + b, 0);
      s.backlog_samples += row.backlogSamples.length;
      s.steps_peak = Math.max(s.steps_peak, row.stepsPeak);
      s.steps_waited += row.stepsWaited;
      addKeyed(s.resource_waits, row.resourceWaits);
      spans.set(key, s);
    }
  }
  return [...spans.values()].sort((a, b) => (a.tenant_id + a.span_minutes + a.start < b.tenant_id + b.span_minutes + b.start ? -1 : 1));
}

/** The backend minutes as a roll-up of the minutes: totals and the service ratios' sums. */
function expectedMinutes(rows: readonly MetricRow[]) {
  const minutes = new Map<string, { minute: string; claimed: number; demand: number; backlog: number; served_tenants: number; served_sum: number; served_squares: number }>();
  for (const row of rows) {
    const minute = row.minute.toISOString();
    const m = minutes.get(minute) ?? { minute, claimed: 0, demand: 0, backlog: 0, served_tenants: 0, served_sum: 0, served_squares: 0 };
    const left = row.backlogSamples.at(-1) ?? 0;
    const demand = row.claimed + left;
    m.claimed += row.claimed;
    m.demand += demand;
    m.backlog += left;
    if (demand > 0) {
      m.served_tenants++;
      m.served_sum += row.claimed / demand;
      m.served_squares += (row.claimed / demand) ** 2;
    }
    minutes.set(minute, m);
  }
  return [...minutes.values()].sort((a, b) => (a.minute < b.minute ? -1 : 1));
}

async function storedSpans(): Promise<Span[]> {
  const { rows } = await db.sql.query(
    `SELECT tenant_id, span_minutes, to_char(start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS start, claimed, completed, failed, deferred,
            lag_buckets, demand::float8 AS demand, backlog_sum::float8 AS backlog_sum, backlog_samples, steps_peak, steps_waited, resource_waits
       FROM tenant_metric_spans ORDER BY tenant_id || span_minutes || to_char(start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') COLLATE "C"`,
  );
  // Keyed counts a write left at 0 are absent from the roll-up: compare the counts that are there.
  return rows.map((r) => ({ ...r, deferred: nonZero(r.deferred), resource_waits: nonZero(r.resource_waits), lag_buckets: [...r.lag_buckets, ...new Array(12 - r.lag_buckets.length).fill(0)] }));
}
const nonZero = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0));

async function storedMinutes() {
  const { rows } = await db.sql.query(
    `SELECT to_char(minute AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS minute, claimed::float8 AS claimed, demand::float8 AS demand,
            backlog::float8 AS backlog, served_tenants, served_sum, served_squares FROM backend_metric_minutes ORDER BY minute`,
  );
  return rows;
}

function expectMinutesClose(actual: Awaited<ReturnType<typeof storedMinutes>>, expected: ReturnType<typeof expectedMinutes>) {
  expect(actual.map((m) => ({ ...m, served_sum: 0, served_squares: 0 }))).toEqual(expected.map((m) => ({ ...m, served_sum: 0, served_squares: 0 })));
  actual.forEach((m, i) => {
    expect(m.served_sum).toBeCloseTo(expected[i]!.served_sum, 9);
    expect(m.served_squares).toBeCloseTo(expected[i]!.served_squares, 9);
  });
}

describe("the tenant_metrics rollups", () => {
  it("stay equal to a roll-up of the stored minutes through adding, racing batches, and rebuild to the same rows", async () => {
    const tenants = ["alpha", "beta", "gamma"];
    const other = testPool(db.url, 2);
    try {
      for (let round = 0; round < 6; round++) {
        // Two engines' batches at once, each over every tenant and four minutes (23:57 to 00:00).
        const batches = [0, 1].map((engine) => {
          const metrics = new TenantMetrics();
          for (const [t, tenantId] of tenants.entries()) {
            for (let m = 0; m < 4; m++) {
              const at = BASE + m * MINUTE + 1_000 * (round + engine);
              for (let i = 0; i < (t + 1) * (round + 1) + engine; i++) metrics.claimed(tenantId, 40 * i * (m + 1), at);
              if ((round + m) % 2 === 0) metrics.backlog(tenantId, (t * 13 + round * 7 + m + engine) % 9, at);
              if (round % 3 === t) metrics.deferred(tenantId, (["breaker", "cap", "rate_limit"] as const)[m % 3]!, at);
              metrics.step(tenantId, round + t + engine, round % 2 === 0, at);
              if (m === 1 && engine === 1) metrics.waited(tenantId, "db_connections", at);
              if (round === 2) metrics.ended(tenantId, m % 2 === 0 ? "completed" : "failed", at);
            }
          }
          return metrics.drain();
        });
        await Promise.all([writeTenantMetrics(db.sql, batches[0]!), writeTenantMetrics(other, batches[1]!)]);
      }
    } finally {
      await other.end();
    }

    const minutes = await readTenantMetrics(db.sql, new Date(BASE - MINUTE), new Date(BASE + 10 * MINUTE));
    expect(minutes).toHaveLength(12);
    const spans = expectedSpans(minutes);
    // 3 tenants: 5-minute spans 23:55 and 00:00, hourly 23:00 and 00:00.
    expect(spans).toHaveLength(12);
    expect(await storedSpans()).toEqual(spans);
    expectMinutesClose(await storedMinutes(), expectedMinutes(minutes));

    await rebuildMetricRollups(db.sql, new Date(BASE - MINUTE), new Date(BASE + 10 * MINUTE));
    expect(await storedSpans()).toEqual(spans);
    expectMinutesClose(await storedMinutes(), expectedMinutes(minutes));
  });

  it("go with the minutes when they are pruned", async () => {
    const before = new Date(BASE + 2 * 3_600_000);
    expect(await pruneTenantMetrics(db.sql, before)).toBeGreaterThan(0);
    const { rows } = await db.sql.query(
      "SELECT (SELECT count(*) FROM tenant_metrics)::int AS minutes, (SELECT count(*) FROM tenant_metric_spans)::int AS spans, (SELECT count(*) FROM backend_metric_minutes)::int AS totals",
    );
    expect(rows[0]).toEqual({ minutes: 0, spans: 0, totals: 0 });
  });
});
