// GET /api/metrics: Prometheus text exposition (format 0.0.4) of the platform and of the tenants,
// for operator API keys only (a tenant key is refused like a missing one: tenant names are not
// for tenants to see).
//
// Platform series come from each registered backend: whether it answers and how fast, its
// instances by state, and the placements (tenants quiesced for a move). Tenant series come from
// the engines' per-minute rows (tenant_metrics), and the Open breaker rows.
//
// Why gauges over the last hour, not counters. tenant_metrics holds per-minute counts that the
// engines add to; there is no ever-growing total to expose, and a sum over a sliding window
// falls when old minutes leave it, which a Prometheus counter must never do (rate() would read
// every fall as a reset). Summing every row ever written would grow without bound per scrape and
// still not be monotonic per series, because the top-N cut below moves tenants in and out of
// `other`. So every tenant series is an honest gauge named for its window (`*_last_1h`): the
// total over the last 60 one-minute rows, the current (partial) minute included. One hour, not
// 24: it is the window the top-N ranking uses, so one read serves both, and a scrape reads 60
// rows per active tenant rather than 1,440. Rates: `bulkhead_tenant_claimed_last_1h / 3600`.
//
// The schedule lag histogram is exposed the same way: `bulkhead_tenant_schedule_lag_seconds_bucket`
// (cumulative, `le` in seconds up to "+Inf") and `_count`, each TYPE gauge, since window counts are
// not monotonic and format 0.0.4 has no gauge histogram. histogram_quantile() works on them as
// they are (no rate() needed): histogram_quantile(0.99, bulkhead_tenant_schedule_lag_seconds_bucket).
// There is no `_sum`: the engines keep bucket counts only.
//
// Tenant labels are bounded: the top N tenants by load (claims in the last hour plus the mean of
// their backlog samples in it; ties by tenant id), N = BULKHEAD_METRICS_TOP_TENANTS, get their
// own `tenant` label; every other tenant is summed into tenant="other" (histogram buckets too).
// A real tenant whose slug is "other" never gets its own label: it is always summed into `other`,
// so that label keeps one meaning. `other` appears only when some tenant was summed into it.
//
// A backend that does not answer within HEALTH_TIMEOUT_MS is reported down (backend_up 0, no
// latency, no instance counts) and is not read: its tenants' series are missing from that scrape
// instead of the whole endpoint failing. The others are read with storage's every-tenant reads,
// which count a tenant's rows only on the backend it is placed on now.
import { AppError, isAppError } from "../../engine/errors.ts";
import { createLogger, type Logger } from "../../engine/logger.ts";
import { COUNTED_DEFERRALS, LAG_BUCKETS_MS, type MetricRow } from "../../engine/metrics/tenant-metrics.ts";
import { INSTANCE_STATES, type InstanceState, type OpenBreakerRow, type Storage } from "../../engine/storage/index.ts";
import { authenticate } from "../rest/auth.ts";
import { errorResponse } from "../rest/http.ts";
import type { Services } from "../services.ts";

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The label every tenant outside the top N is summed into. */
export const OTHER_TENANT = "other";

const MINUTE_MS = 60_000;
/** The window of every tenant series and of the top-N ranking, in one-minute rows. */
const WINDOW_MINUTES = 60;
const HEALTH_TIMEOUT_MS = 2_000;
/**
 * A tenant's backlog is its latest sample if that was taken this minute or the one before;
 * otherwise 0. Engines sample every 15 s but record nothing for a tenant with nothing waiting,
 * so an older sample says only that the backlog has since drained.
 */
const BACKLOG_FRESH_MINUTES = 1;

// ---------------------------------------------------------------- text exposition format 0.0.4

export type MetricType = "gauge" | "counter" | "untyped";

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: { labels?: Record<string, string>; value: number }[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value as the format wants it: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** The families as text: each one's HELP and TYPE, then its samples, together. */
export function exposition(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (!METRIC_NAME.test(family.name)) throw new Error(`invalid metric name "${family.name}"`);
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels ?? {}).map(([name, value]) => {
        if (!LABEL_NAME.test(name) || name.startsWith("__")) throw new Error(`invalid label name "${name}"`);
        return `${name}="${escapeLabelValue(value)}"`;
      });
      lines.push(`${family.name}${labels.length > 0 ? `{${labels.join(",")}}` : ""} ${formatValue(sample.value)}`);
    }
  }
  return lines.join("\n") + "\n";
}

// ---------------------------------------------------------------- what a scrape reads

export interface BackendSnapshot {
  id: string;
  /** null: it did not answer within the timeout, and was not read. */
  latencyMs: number | null;
  instances: Record<InstanceState, number> | null;
}

export interface MetricsSnapshot {
  now: Date;
  backends: BackendSnapshot[];
  /** Tenant minutes of the window, each from the backend its tenant is placed on. */
  rows: MetricRow[];
  /** Open breakers, each from the backend its tenant is placed on. */
  openBreakers: OpenBreakerRow[];
  /** Tenants quiesced for a move. */
  quiesced: number;
}

/** The first minute of the window (start of the minute WINDOW_MINUTES - 1 before `now`'s). */
function windowStart(now: Date): number {
  const minute = now.getTime() - (now.getTime() % MINUTE_MS);
  return minute - (WINDOW_MINUTES - 1) * MINUTE_MS;
}

export async function collectSnapshot(storage: Storage, now = new Date()): Promise<MetricsSnapshot> {
  const from = new Date(windowStart(now));
  const to = new Date(now.getTime() - (now.getTime() % MINUTE_MS) + MINUTE_MS);
  const [placements, health] = await Promise.all([storage.listPlacements(), storage.backendHealth(HEALTH_TIMEOUT_MS)]);
  const up = health.filter((b) => b.latencyMs !== null).map((b) => b.id);
  const [rows, openBreakers, backends] = await Promise.all([
    storage.metricsOfEveryTenant(from, to, up),
    storage.breakersOfEveryTenant({ backends: up }).then((breakers) => breakers.open),
    // Instances on the backend by state: rows physically there, whatever their placement.
    Promise.all(health.map(async ({ id, latencyMs }) => ({ id, latencyMs, instances: latencyMs === null ? null : await storage.countInstancesByStateOn(id) }))),
  ]);
  return { now, backends, rows, openBreakers, quiesced: placements.filter((p) => p.quiescedAt !== null).length };
}

// ---------------------------------------------------------------- from a snapshot to series

interface TenantTotals {
  claimed: number;
  completed: number;
  failed: number;
  deferred: Map<string, number>;
  lag: number[];
  backlogSum: number;
  backlogSamples: number;
  /** The latest backlog sample and the minute (epoch ms) of its row. */
  latestBacklog: { minute: number; value: number } | null;
  openBreakers: number;
}

const LAG_BUCKET_COUNT = LAG_BUCKETS_MS.length + 1;

function emptyTotals(): TenantTotals {
  return {
    claimed: 0, completed: 0, failed: 0, deferred: new Map(), lag: new Array<number>(LAG_BUCKET_COUNT).fill(0),
    backlogSum: 0, backlogSamples: 0, latestBacklog: null, openBreakers: 0,
  };
}

function tenantTotals(snapshot: MetricsSnapshot): Map<string, TenantTotals> {
  const totals = new Map<string, TenantTotals>();
  const of = (tenantId: string) => {
    let t = totals.get(tenantId);
    if (!t) totals.set(tenantId, (t = emptyTotals()));
    return t;
  };
  for (const row of snapshot.rows) {
    const t = of(row.tenantId);
    t.claimed += row.claimed;
    t.completed += row.completed;
    t.failed += row.failed;
    for (const [reason, n] of Object.entries(row.deferred)) t.deferred.set(reason, (t.deferred.get(reason) ?? 0) + (n ?? 0));
    row.lagBuckets.forEach((n, i) => (t.lag[Math.min(i, LAG_BUCKET_COUNT - 1)]! += n));
    const samples = row.backlogSamples;
    if (samples.length > 0) {
      t.backlogSum += samples.reduce((a, b) => a + b, 0);
      t.backlogSamples += samples.length;
      const minute = row.minute.getTime();
      if (!t.latestBacklog || minute >= t.latestBacklog.minute) t.latestBacklog = { minute, value: samples[samples.length - 1]! };
    }
  }
  for (const breaker of snapshot.openBreakers) of(breaker.tenantId).openBreakers++;
  return totals;
}

/** Claims in the window plus the mean backlog sample in it: what the top-N cut ranks by. */
const loadOf = (t: TenantTotals) => t.claimed + (t.backlogSamples === 0 ? 0 : t.backlogSum / t.backlogSamples);

/** The tenants that keep their own label, by load then id; everyone else is `other`. */
export function topTenants(snapshot: MetricsSnapshot, n: number): string[] {
  return [...tenantTotals(snapshot).entries()]
    .filter(([tenantId]) => tenantId !== OTHER_TENANT)
    .map(([tenantId, t]) => ({ tenantId, load: loadOf(t) }))
    .sort((a, b) => b.load - a.load || (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : 0))
    .slice(0, Math.max(0, n))
    .map((t) => t.tenantId);
}

/** Upper bounds of the lag buckets in seconds, as `le` values. */
const LE = [...LAG_BUCKETS_MS.map((ms) => formatValue(ms / 1000)), "+Inf"];

export function metricFamilies(snapshot: MetricsSnapshot, topN: number): MetricFamily[] {
  const totals = tenantTotals(snapshot);
  const top = new Set(topTenants(snapshot, topN));
  const freshFrom = snapshot.now.getTime() - (snapshot.now.getTime() % MINUTE_MS) - BACKLOG_FRESH_MINUTES * MINUTE_MS;

  // Labelled totals: each top tenant on its own, the rest summed into `other`.
  const labelled = new Map<string, TenantTotals & { backlog: number }>();
  for (const [tenantId, t] of totals) {
    const label = top.has(tenantId) ? tenantId : OTHER_TENANT;
    let sum = labelled.get(label);
    if (!sum) labelled.set(label, (sum = { ...emptyTotals(), backlog: 0 }));
    sum.claimed += t.claimed;
    sum.completed += t.completed;
    sum.failed += t.failed;
    for (const [reason, n] of t.deferred) sum.deferred.set(reason, (sum.deferred.get(reason) ?? 0) + n);
    t.lag.forEach((n, i) => (sum.lag[i]! += n));
    sum.openBreakers += t.openBreakers;
    if (t.latestBacklog && t.latestBacklog.minute >= freshFrom) sum.backlog += t.latestBacklog.value;
  }
  const labels = [...labelled.keys()].sort((a, b) =>
    a === OTHER_TENANT ? 1 : b === OTHER_TENANT ? -1 : a < b ? -1 : a > b ? 1 : 0,
  );
  const perTenant = (value: (t: TenantTotals & { backlog: number }) => number) =>
    labels.map((tenant) => ({ labels: { tenant }, value: value(labelled.get(tenant)!) }));

  const up = snapshot.backends.filter((b) => b.latencyMs !== null);
  const overWindow = "over the last hour (the last 60 one-minute rows, the current minute included): a sliding-window total, not a counter";
  return [
    {
      name: "bulkhead_backend_up", type: "gauge",
      help: `1 if the storage backend answered SELECT 1 within ${HEALTH_TIMEOUT_MS / 1000} s, else 0.`,
      samples: snapshot.backends.map((b) => ({ labels: { backend: b.id }, value: b.latencyMs === null ? 0 : 1 })),
    },
    {
      name: "bulkhead_backend_latency_seconds", type: "gauge",
      help: "Round trip of SELECT 1 to the storage backend; absent while it is down.",
      samples: up.map((b) => ({ labels: { backend: b.id }, value: b.latencyMs! / 1000 })),
    },
    {
      name: "bulkhead_instances", type: "gauge",
      help: "Instances stored on the backend, by state (rows there, including a moved tenant's rows not yet cleaned up).",
      samples: up.flatMap((b) => INSTANCE_STATES.map((state) => ({ labels: { backend: b.id, state }, value: b.instances![state] }))),
    },
    {
      name: "bulkhead_tenants_quiesced", type: "gauge",
      help: "Tenants quiesced for a move between backends (writes and claims paused).",
      samples: [{ value: snapshot.quiesced }],
    },
    {
      name: "bulkhead_breakers_open", type: "gauge",
      help: 'Open circuit breakers (tenant, handler) per tenant; tenants outside the top N are summed as tenant="other".',
      samples: perTenant((t) => t.openBreakers),
    },
    { name: "bulkhead_tenant_claimed_last_1h", type: "gauge", help: `Instances claimed by the engines, ${overWindow}.`, samples: perTenant((t) => t.claimed) },
    { name: "bulkhead_tenant_completed_last_1h", type: "gauge", help: `Instances completed, ${overWindow}.`, samples: perTenant((t) => t.completed) },
    { name: "bulkhead_tenant_failed_last_1h", type: "gauge", help: `Instances failed, ${overWindow}.`, samples: perTenant((t) => t.failed) },
    {
      name: "bulkhead_tenant_deferred_last_1h", type: "gauge",
      help: `Claims deferred, by reason (breaker, rate_limit, budget, send_window, cap), ${overWindow}.`,
      samples: labels.flatMap((tenant) =>
        COUNTED_DEFERRALS.map((reason) => ({ labels: { tenant, reason }, value: labelled.get(tenant)!.deferred.get(reason) ?? 0 })),
      ),
    },
    {
      name: "bulkhead_tenant_schedule_lag_seconds_bucket", type: "gauge",
      help: `Claims whose schedule lag (due to claimed) was at most le seconds, cumulative, ${overWindow}; use histogram_quantile() without rate().`,
      samples: labels.flatMap((tenant) => {
        let cumulative = 0;
        return labelled.get(tenant)!.lag.map((n, i) => ({ labels: { tenant, le: LE[i]! }, value: (cumulative += n) }));
      }),
    },
    {
      name: "bulkhead_tenant_schedule_lag_seconds_count", type: "gauge",
      help: `Claims with a measured schedule lag, ${overWindow}.`,
      samples: perTenant((t) => t.lag.reduce((a, b) => a + b, 0)),
    },
    {
      name: "bulkhead_tenant_backlog", type: "gauge",
      help: "Instances due but not claimed: the latest sample (engines sample every 15 s), 0 when none was taken this minute or the last.",
      samples: perTenant((t) => t.backlog),
    },
  ];
}

export function renderMetrics(snapshot: MetricsSnapshot, topN: number, options: { orch8?: boolean } = {}): string {
  return exposition([...metricFamilies(snapshot, topN), ...(options.orch8 ? orch8Families(snapshot) : [])]);
}

/**
 * The names Orch8's clients look for (wire-format V), at /api/v1/metrics only. Bulkhead keeps
 * per-minute rows shared by every engine rather than per-process counters, so these are the
 * fleet's totals over the last hour, and the queue depth is the scheduled instances stored.
 */
function orch8Families(snapshot: MetricsSnapshot): MetricFamily[] {
  const sum = (pick: (row: MetricRow) => number) => snapshot.rows.reduce((total, row) => total + pick(row), 0);
  const lastHour = "over the last hour, every engine and tenant together (a sliding-window total; Orch8 counts per process since start)";
  return [
    { name: "orch8_instances_claimed_total", type: "counter", help: `Instances claimed, ${lastHour}.`, samples: [{ value: sum((r) => r.claimed) }] },
    { name: "orch8_instances_completed_total", type: "counter", help: `Instances completed, ${lastHour}.`, samples: [{ value: sum((r) => r.completed) }] },
    { name: "orch8_instances_failed_total", type: "counter", help: `Instances failed, ${lastHour}.`, samples: [{ value: sum((r) => r.failed) }] },
    {
      name: "orch8_queue_depth", type: "gauge", help: "Scheduled instances stored on the backends that answered.",
      samples: [{ value: snapshot.backends.reduce((total, b) => total + (b.instances?.scheduled ?? 0), 0) }],
    },
  ];
}

// ---------------------------------------------------------------- the endpoint

const loggers = new WeakMap<Services, Logger>();
function loggerFor(services: Services): Logger {
  let log = loggers.get(services);
  if (!log) loggers.set(services, (log = createLogger("metrics", services.config.BULKHEAD_LOG_LEVEL)));
  return log;
}

/** No key, an unknown or revoked key and a tenant's key all get this same 401. */
const operatorKeyRequired = () =>
  new AppError("unauthorized", "an operator API key is required (send it in x-api-key or Authorization: Bearer)");

async function requireOperatorKey(services: Services, request: Request): Promise<void> {
  const principal = await authenticate(services.prisma, request).catch((error: unknown) => {
    throw isAppError(error, "unauthorized") ? operatorKeyRequired() : error;
  });
  if (principal.tenantId !== null) throw operatorKeyRequired();
}

/** GET /api/metrics. */
export async function handleMetrics(request: Request, services: Services, now = new Date()): Promise<Response> {
  try {
    await requireOperatorKey(services, request);
    return await metricsResponse(services, now, {});
  } catch (error) {
    return errorResponse(error, loggerFor(services));
  }
}

/**
 * GET /api/v1/metrics (wire-format V): an operator key; a tenant key is refused with 403, since
 * every series is process- or fleet-wide. Adds the orch8_* names Orch8's clients read.
 */
export async function handleRestMetrics(request: Request, services: Services, now = new Date()): Promise<Response> {
  try {
    const principal = await authenticate(services.prisma, request);
    if (principal.tenantId !== null) throw new AppError("forbidden", "metrics span every tenant: an operator API key is required");
    return await metricsResponse(services, now, { orch8: true });
  } catch (error) {
    return errorResponse(error, loggerFor(services));
  }
}

async function metricsResponse(services: Services, now: Date, options: { orch8?: boolean }): Promise<Response> {
  const body = renderMetrics(await collectSnapshot(services.storage, now), services.config.BULKHEAD_METRICS_TOP_TENANTS, options);
  return new Response(body, { status: 200, headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" } });
}
