// What the fairness page's charts share: the query's output type, the time ranges, the minute
// grid (idle minutes are absent from the answer: they are filled in here, so lines drop to zero
// instead of joining the minutes either side), the series of the noisiest tenants, and formats.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../../server/api/root.ts";

export type FairnessData = inferRouterOutputs<AppRouter>["ops"]["fairness"];
export type FairnessMinute = FairnessData["minutes"][number];
export type TenantMinute = FairnessMinute["tenants"][number];
export type TenantSummary = FairnessData["tenants"][number];
export type LagBound = NonNullable<TenantSummary["lagP50"]>;

export const RANGES = [
  { value: "15m", label: "15 min", long: "the last 15 minutes" },
  { value: "1h", label: "1 h", long: "the last hour" },
  { value: "6h", label: "6 h", long: "the last 6 hours" },
  { value: "24h", label: "24 h", long: "the last 24 hours" },
] as const;
export type FairnessRange = (typeof RANGES)[number]["value"];
export const DEFAULT_RANGE: FairnessRange = "1h";

export const readRange = (value: string | null): FairnessRange =>
  RANGES.find((r) => r.value === value)?.value ?? DEFAULT_RANGE;

const MINUTE_MS = 60_000;

/** Every minute of [from, to) in order, with the answer's minute where there was activity. */
export function minuteGrid(data: FairnessData): { t: number; minute: FairnessMinute | undefined }[] {
  const byTime = new Map(data.minutes.map((m) => [Date.parse(m.minute), m]));
  const start = Math.ceil(Date.parse(data.from) / MINUTE_MS) * MINUTE_MS;
  const end = Date.parse(data.to);
  const times = new Set<number>(byTime.keys());
  for (let t = start; t < end; t += MINUTE_MS) times.add(t);
  return [...times].sort((a, b) => a - b).map((t) => ({ t, minute: byTime.get(t) }));
}

/** A line (or area) of the charts: one tenant, or every tenant past the top few together. */
export interface Series {
  key: string;
  name: string;
  color: string;
  tenantIds: ReadonlySet<string>;
}

const PALETTE = ["#2f5bea", "#d97706", "#1d7f4e", "#8e44ad", "#0f8b8d"];
const OTHER_COLOR = "#8a919c";

/** The `top` tenants with the most demand (the answer lists them first), and "other" for the rest. */
export function topSeries(tenants: readonly TenantSummary[], top = 5): Series[] {
  const series: Series[] = tenants.slice(0, top).map((t, i) => ({
    key: `s${i}`, name: t.tenantId, color: PALETTE[i % PALETTE.length]!, tenantIds: new Set([t.tenantId]),
  }));
  const rest = tenants.slice(top);
  if (rest.length > 0) series.push({ key: "other", name: `other (${rest.length})`, color: OTHER_COLOR, tenantIds: new Set(rest.map((t) => t.tenantId)) });
  return series;
}

/** The sum of `field` over the series' tenants in a minute (0 for an idle one). */
export function sumOf(minute: FairnessMinute | undefined, series: Series, field: "claimShare" | "demandShare" | "backlog"): number {
  return (minute?.tenants ?? []).reduce((sum, t) => (series.tenantIds.has(t.tenantId) ? sum + t[field] : sum), 0);
}

/** A tick on the time axis: local hours and minutes. */
export const clock = (t: unknown) => new Date(Number(t)).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
/** A tooltip's minute: local date and time. */
export const minuteLabel = (t: unknown) =>
  `Minute from ${new Date(Number(t)).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })}`;

export const percent = (fraction: number) => `${(fraction * 100).toFixed(1)} %`;

export const formatMs = (ms: number) => (ms < 1_000 ? `${ms} ms` : `${ms / 1_000} s`);

/** A lag percentile's bucket as the reader should see it: "≤ 250 ms", "> 60 s", or "–" without claims. */
export const lagLabel = (lag: LagBound | null) => (lag === null ? "–" : `${lag.over ? ">" : "≤"} ${formatMs(lag.ms)}`);
