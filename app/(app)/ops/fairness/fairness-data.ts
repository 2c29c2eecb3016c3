// What the fairness pages share: the queries' output types, the time ranges, the minute grid
// (idle minutes are absent from the answer: they are filled in here, so lines drop to zero
// instead of joining the minutes either side), the series colours, and formats.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../../server/api/root.ts";

export type FairnessData = inferRouterOutputs<AppRouter>["ops"]["fairness"];
export type TenantFairnessData = inferRouterOutputs<AppRouter>["ops"]["fairnessTenant"];
export type FairnessMinute = FairnessData["minutes"][number];
export type TenantSummary = FairnessData["tenants"][number];
export type Reason = TenantSummary["reasons"][number];
export type Series = FairnessData["series"][number];
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

/** Every minute of [from, to] in order, with the answer's row where there was activity. */
export function minuteGrid<T extends { minute: string }>(data: { from: string; to: string }, minutes: readonly T[]): { t: number; minute: T | undefined }[] {
  const byTime = new Map(minutes.map((m) => [Date.parse(m.minute), m]));
  const start = Math.ceil(Date.parse(data.from) / MINUTE_MS) * MINUTE_MS;
  const end = Date.parse(data.to);
  const times = new Set<number>(byTime.keys());
  for (let t = start; t <= end; t += MINUTE_MS) times.add(t);
  return [...times].sort((a, b) => a - b).map((t) => ({ t, minute: byTime.get(t) }));
}

const PALETTE = ["#2f5bea", "#d97706", "#1d7f4e", "#8e44ad", "#0f8b8d", "#c2410c", "#be185d", "#4d7c0f"];
const OTHER_COLOR = "#8a919c";

/** A series' colour: the top tenants in turn, grey for the others summed. */
export const colorOf = (series: Series, index: number) => (series.tenantId === null ? OTHER_COLOR : PALETTE[index % PALETTE.length]!);

/** A tick on the time axis: local hours and minutes. */
export const clock = (t: unknown) => new Date(Number(t)).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
/** A tooltip's minute: local date and time. */
export const minuteLabel = (t: unknown) =>
  `Minute from ${new Date(Number(t)).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })}`;

export const percent = (fraction: number) => `${(fraction * 100).toFixed(1)} %`;

export const formatMs = (ms: number) => (ms < 1_000 ? `${ms} ms` : `${ms / 1_000} s`);

/** A lag percentile's bucket as the reader should see it: "≤ 250 ms", "> 60 s", or "–" without claims. */
export const lagLabel = (lag: LagBound | null) => (lag === null ? "–" : `${lag.over ? ">" : "≤"} ${formatMs(lag.ms)}`);

/** A tenant name cut for an axis: the full one is in the tooltip and the table. */
export const shortName = (name: string, max = 18) => (name.length > max ? `${name.slice(0, max - 1)}…` : name);

/** "1,204 steps waited for a step slot". */
export const reasonCount = (reason: Reason) => `${reason.count.toLocaleString("en-US")} ${reason.what}`;
