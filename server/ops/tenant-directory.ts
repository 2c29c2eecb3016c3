// The operator console's tenants table: every tenant, a keyset page at a time, searchable and
// ordered by name, slug, claims or schedule lag over the last hour, each row with its placement,
// its figures of the hour (from the engines' per-minute tenant_metrics, never from instances),
// its Open breakers, its own limits and the ledger limits it reached.
//
// Name and slug orders are keyset pages of one indexed statement (engine/storage/tenant-directory.ts).
// Claims and lag are not columns of the tenants table: each backend keeps them per tenant for the
// last hour (tenant_activity_hour, engine/storage/tenant-activity.ts: one row per tenant, not its
// 60 minutes). Those orders list first the tenants with a figure (claims, or a lag, in the hour),
// highest first, from those rows (kept for RANKING_TTL_MS, so paging and typing do not read
// them again each time), then every other tenant in slug order, as a keyset page of the same
// statement that leaves the ranked ones out. Either way a cursor is a position (value, slug),
// never an offset.
import { z } from "zod";
import { LEDGER } from "../../engine/resources/ledger.ts";
import type { EngineConfig } from "../../engine/config.ts";
import { AppError } from "../../engine/errors.ts";
import type { MetricRow } from "../../engine/metrics/tenant-metrics.ts";
import { activityWindowFrom, type DirectoryRow, type Storage, type TenantActivity } from "../../engine/storage/index.ts";
import type { Services } from "../services.ts";
import { lagPercentile, type LagBound } from "./fairness.ts";

export const TENANT_ORDERS = ["name", "slug", "claims", "lag"] as const;
export type TenantOrder = (typeof TENANT_ORDERS)[number];

/** The figures' window: the current minute of tenant_metrics and the 59 before it. */
export const WINDOW_MINUTES = 60;
/**
 * How long one sum of every tenant's hour orders the claims and lag pages. After that a page is
 * still ordered by it while the next sum is read (a sum of 10,000 tenants takes about 200 ms),
 * until it is RANKING_MAX_AGE_MS old: then a page waits for the next.
 */
export const RANKING_TTL_MS = 10_000;
export const RANKING_MAX_AGE_MS = 30_000;
export const PAGE_SIZE = { default: 50, max: 100 };

const MINUTE_MS = 60_000;

/** The window of the figures, ending with the current minute. */
export function activityWindow(now = Date.now()): { from: Date; to: Date } {
  const minute = now - (now % MINUTE_MS);
  // To the end of the next minute: an engine whose clock runs a little ahead may have started it.
  return { from: activityWindowFrom(now), to: new Date(minute + 2 * MINUTE_MS) };
}

// ------------------------------------------------------------------ cursors

const cursorSchema = z.discriminatedUnion("o", [
  z.object({ o: z.literal("name"), k: z.string().max(1_000), id: z.string().max(64) }),
  z.object({ o: z.literal("slug"), id: z.string().max(64) }),
  // v: the figure of the last row shown; null once the page is past the ranked tenants.
  z.object({ o: z.enum(["claims", "lag"]), v: z.number().int().min(0).nullable(), id: z.string().max(64) }),
]);
type Cursor = z.infer<typeof cursorSchema>;

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString("base64url");

function decodeCursor(text: string | null | undefined, order: TenantOrder): Cursor | null {
  if (!text) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = null;
  }
  const cursor = cursorSchema.safeParse(parsed);
  if (!cursor.success) throw new AppError("invalid_argument", "cursor is not one this list gave", ["cursor"]);
  if (cursor.data.o !== order) throw new AppError("invalid_argument", `cursor is of the ${cursor.data.o} order, not ${order}`, ["cursor"]);
  return cursor.data;
}

// ------------------------------------------------------------------ the ranking of claims and lag

/** A lag percentile as one comparable number: its bucket's bound, one more past the last bound. */
const lagValue = (lag: LagBound | null) => (lag === null ? null : lag.over ? lag.ms + 1 : lag.ms);

/** Byte order, as the slug index compares (slugs are ASCII). */
const bySlug = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface Ranked {
  id: string;
  value: number;
}

interface Ranking {
  at: number;
  activity: Promise<TenantActivity[]>;
  /** The ranked tenants by order and search, from `activity`. */
  ranked: Map<string, Promise<Ranked[]>>;
}

const rankings = new WeakMap<Storage, Ranking>();

const rankingKey = (order: "claims" | "lag", search: string) => `${order} ${search}`;

/** A sum of every tenant's hour as of `now`, its orders ranked when first asked for. */
const newRanking = (storage: Storage, now: number): Ranking => ({
  at: now, activity: storage.directory.activityOfEveryTenant(activityWindow(now).from), ranked: new Map(),
});

/** The next sum, read while the last one is still served. */
const reading = new WeakMap<Storage, Ranking>();

/** Every tenant's claims and lag of the hour, from every backend's per-tenant row, read at most every RANKING_TTL_MS. */
function hourOfEveryTenant(storage: Storage, now: number): Ranking {
  const cached = rankings.get(storage);
  if (cached && now - cached.at < RANKING_TTL_MS) return cached;
  if (cached && now - cached.at < RANKING_MAX_AGE_MS) {
    if (!reading.has(storage)) readNext(storage, cached, now);
    return cached;
  }
  const ranking = newRanking(storage, now);
  rankings.set(storage, ranking);
  // A failed sum is not kept: the next page asks again.
  ranking.activity.catch(() => rankings.get(storage) === ranking && rankings.delete(storage));
  return ranking;
}

/**
 * Reads the next sum, and the unsearched orders `last` was asked for, then serves it in place of
 * `last` (unless it was forgotten or replaced meanwhile); a search is ranked again when asked. A
 * failed read leaves `last` served.
 */
function readNext(storage: Storage, last: Ranking, now: number): void {
  const next = newRanking(storage, now);
  reading.set(storage, next);
  const orders = (["claims", "lag"] as const).filter((order) => last.ranked.has(rankingKey(order, ""))).map((order) => {
    const ranked = rank(storage, next.activity, order, "");
    next.ranked.set(rankingKey(order, ""), ranked);
    return ranked;
  });
  Promise.all([next.activity, ...orders]).then(
    () => rankings.get(storage) === last && rankings.set(storage, next),
    () => {},
  ).finally(() => reading.get(storage) === next && reading.delete(storage));
}

/** Forgets the sum (a test that writes minutes, then pages). */
export function forgetRanking(storage: Storage): void {
  rankings.delete(storage);
  reading.delete(storage);
}

/**
 * The tenants matching `search` with a figure in the hour on the backend they are placed on,
 * highest first; kept with the sum, so the next pages and the same search again do not ask the
 * placements of every ranked tenant again.
 */
function rankedTenants(storage: Storage, order: "claims" | "lag", search: string, now: number): Promise<Ranked[]> {
  const ranking = hourOfEveryTenant(storage, now);
  const key = rankingKey(order, search);
  let ranked = ranking.ranked.get(key);
  if (!ranked) {
    ranked = rank(storage, ranking.activity, order, search);
    ranking.ranked.set(key, ranked);
    ranked.catch(() => ranking.ranked.get(key) === ranked && ranking.ranked.delete(key));
  }
  return ranked;
}

async function rank(storage: Storage, hour: Promise<TenantActivity[]>, order: "claims" | "lag", search: string): Promise<Ranked[]> {
  const activity = await hour;
  const candidates: (Ranked & { backendId: string })[] = [];
  for (const a of activity) {
    const value = order === "claims" ? (a.claimed > 0 ? a.claimed : null) : lagValue(lagPercentile(a.lagBuckets, 0.99));
    if (value !== null) candidates.push({ id: a.tenantId, value, backendId: a.backendId });
  }
  const placed = await storage.directory.placementsMatching([...new Set(candidates.map((c) => c.id))], search);
  // A tenant's minutes count only on the backend it is placed on now (a move leaves a copy behind).
  const ranked = candidates.filter((c) => placed.get(c.id) === c.backendId).map(({ id, value }) => ({ id, value }));
  return ranked.sort((a, b) => b.value - a.value || bySlug(a.id, b.id));
}

// ------------------------------------------------------------------ a page

export interface LimitAt {
  /** The ledger row (engine/resources/ledger.ts). */
  resource: string;
  /** Its name, short. */
  label: string;
  /** The ledger's words for it. */
  title: string;
  /** What the hour's minutes say, e.g. "peak 32 of 32". */
  detail: string;
}

export interface TenantRow {
  id: string;
  name: string;
  createdAt: string;
  backendId: string | null;
  epoch: number | null;
  quiesced: boolean;
  /** false: its backend is not served by this process, so the figures below are unknown (0, null). */
  figures: boolean;
  claims: number;
  completed: number;
  failed: number;
  lagP50: LagBound | null;
  lagP99: LagBound | null;
  /** null when the figures are unknown. */
  openBreakers: number | null;
  /** Its own limits; null where it keeps the default (the page's `defaults`). */
  limits: DirectoryRow["limits"];
  /** The ledger limits its minutes of the hour show it reached. */
  atLimit: LimitAt[];
}

/** The engine defaults of the tenant's own limits (null in `limits`). */
export function limitDefaults(config: EngineConfig): Record<keyof DirectoryRow["limits"], number> {
  return {
    claimCap: config.BULKHEAD_MAX_INSTANCES_PER_TENANT, maxConcurrency: config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT,
    maxSteps: config.BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT, outboundPerHost: config.BULKHEAD_OUTBOUND_PER_HOST,
    apiRatePerSec: config.BULKHEAD_API_RATE_PER_SEC, cronSchedules: config.BULKHEAD_CRON_SCHEDULES_PER_TENANT,
    webhookRatePerSec: config.BULKHEAD_WEBHOOK_RATE_PER_SEC, lagObjectiveMs: config.BULKHEAD_LAG_OBJECTIVE_MS,
    retentionDays: config.BULKHEAD_RETENTION_DAYS,
  };
}

const LABELS: Record<string, string> = {
  step_slots: "step slots", instances_in_flight: "in flight", rate_limits_budgets: "rate limit or budget",
  outbound_per_host: "outbound per host", db_connections: "DB connections", event_fan_out: "event fan-out",
};
const limitAt = (resource: string, detail: string): LimitAt => ({
  resource, label: LABELS[resource] ?? resource, title: LEDGER.find((e) => e.id === resource)?.resource ?? resource, detail,
});
const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/**
 * One tenant's figures from its minutes of the hour. At a limit, as the Resources page counts it:
 * a step-slot peak at its step limit; claims handed back at its in-flight limit (deferred "cap");
 * steps deferred by a rate limit or its budget; any wait for a connection share, an outbound slot
 * or its event fan-out minute.
 */
function figuresOf(row: DirectoryRow, minutes: readonly MetricRow[], defaults: ReturnType<typeof limitDefaults>) {
  let claims = 0, completed = 0, failed = 0, stepsPeak = 0;
  const lag: number[] = [];
  const deferred: Record<string, number> = {};
  const waits: Record<string, number> = {};
  for (const m of minutes) {
    claims += m.claimed;
    completed += m.completed;
    failed += m.failed;
    stepsPeak = Math.max(stepsPeak, m.stepsPeak);
    m.lagBuckets.forEach((n, i) => (lag[i] = (lag[i] ?? 0) + n));
    for (const [reason, n] of Object.entries(m.deferred)) deferred[reason] = (deferred[reason] ?? 0) + (n ?? 0);
    for (const [resource, n] of Object.entries(m.resourceWaits ?? {})) if (typeof n === "number") waits[resource] = (waits[resource] ?? 0) + n;
  }
  const atLimit: LimitAt[] = [];
  const stepLimit = row.limits.maxSteps ?? defaults.maxSteps;
  if (stepsPeak > 0 && stepsPeak >= stepLimit) atLimit.push(limitAt("step_slots", `peak ${stepsPeak.toLocaleString("en-US")} of ${stepLimit.toLocaleString("en-US")}`));
  if ((deferred.cap ?? 0) > 0) {
    atLimit.push(limitAt("instances_in_flight", `${count(deferred.cap!, "claim")} handed back at ${(row.limits.maxConcurrency ?? defaults.maxConcurrency).toLocaleString("en-US")}`));
  }
  const limited = (deferred.rate_limit ?? 0) + (deferred.budget ?? 0);
  if (limited > 0) atLimit.push(limitAt("rate_limits_budgets", `${count(limited, "step")} deferred`));
  for (const [resource, n] of Object.entries(waits).sort(([a], [b]) => bySlug(a, b))) if (n > 0) atLimit.push(limitAt(resource, count(n, "wait")));
  return { claims, completed, failed, lagP50: lagPercentile(lag, 0.5), lagP99: lagPercentile(lag, 0.99), atLimit };
}

/** The rows with their figures of the hour, each read from the backend its tenant is placed on. */
export async function withFigures(services: Services, rows: readonly DirectoryRow[], now = Date.now()): Promise<TenantRow[]> {
  const { from, to } = activityWindow(now);
  const byBackend = new Map<string, string[]>();
  for (const row of rows) if (row.backendId !== null) byBackend.set(row.backendId, [...(byBackend.get(row.backendId) ?? []), row.id]);
  const { metrics, openBreakers, served } = await services.storage.directory.figuresOf(byBackend, from, to);
  const minutesOf = new Map<string, MetricRow[]>();
  for (const m of metrics) minutesOf.set(m.tenantId, [...(minutesOf.get(m.tenantId) ?? []), m]);
  const defaults = limitDefaults(services.config);
  return rows.map((row) => {
    const known = served.has(row.id);
    return {
      id: row.id, name: row.name, createdAt: row.createdAt.toISOString(), backendId: row.backendId, epoch: row.epoch, quiesced: row.quiesced,
      figures: known, ...figuresOf(row, minutesOf.get(row.id) ?? [], defaults), openBreakers: known ? (openBreakers.get(row.id) ?? 0) : null,
      limits: row.limits,
    };
  });
}

export interface TenantPageInput {
  search: string;
  order: TenantOrder;
  cursor?: string | null;
  limit: number;
}

/** One page of the tenants table, the cursor of the next (null: the last page) and how many match. */
export async function tenantPage(services: Services, input: TenantPageInput, now = Date.now()) {
  const { directory } = services.storage;
  const search = input.search.trim();
  const { order, limit } = input;
  const cursor = decodeCursor(input.cursor, order);

  const pageRows = async (): Promise<{ rows: DirectoryRow[]; next: Cursor | null }> => {
    if (order === "name" || order === "slug") {
      const after = cursor ? { nameKey: cursor.o === "name" ? cursor.k : undefined, id: cursor.id } : null;
      const page = await directory.page({ search, order, after, limit: limit + 1 });
      const rows = page.slice(0, limit);
      const last = rows.at(-1);
      if (page.length <= limit || !last) return { rows, next: null };
      return { rows, next: order === "name" ? { o: "name", k: last.nameKey, id: last.id } : { o: "slug", id: last.id } };
    }
    const ranked = await rankedTenants(services.storage, order, search, now);
    const at = cursor && "v" in cursor ? cursor : null;
    // The first ranked tenant after the cursor; none once the cursor is past them (v null).
    const found = !at ? 0 : at.v === null ? -1 : ranked.findIndex((r) => r.value < at.v! || (r.value === at.v && bySlug(r.id, at.id) > 0));
    const start = found === -1 ? ranked.length : found;
    const shown = ranked.slice(start, start + limit + 1);
    const valueOf = new Map(shown.map((r) => [r.id, r.value]));
    const details = new Map((await directory.rowsOf(shown.map((r) => r.id))).map((r) => [r.id, r]));
    const head = shown.flatMap((r) => details.get(r.id) ?? []);
    // Then every tenant without a figure, in slug order, the ranked ones left out.
    const rest = head.length > limit ? [] : await directory.page({
      search, order: "slug", after: at?.v === null ? { id: at.id } : null, limit: limit + 1 - head.length, exclude: ranked.map((r) => r.id),
    });
    const page = [...head, ...rest];
    const rows = page.slice(0, limit);
    const last = rows.at(-1);
    if (page.length <= limit || !last) return { rows, next: null };
    return { rows, next: { o: order, v: valueOf.get(last.id) ?? null, id: last.id } };
  };

  const [total, { rows, next }] = await Promise.all([directory.count(search), pageRows()]);
  return {
    items: await withFigures(services, rows, now),
    next: next && encodeCursor(next),
    total,
    from: activityWindow(now).from.toISOString(),
    windowMinutes: WINDOW_MINUTES,
    defaults: limitDefaults(services.config),
  };
}
