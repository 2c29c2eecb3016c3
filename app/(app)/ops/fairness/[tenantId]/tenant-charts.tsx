"use client";

import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { clock, formatMs, lagLabel, minuteGrid, minuteLabel, type TenantFairnessData } from "../fairness-data";

const TICKS = [10, 100, 1_000, 10_000, 60_000];
const timeAxis = (
  <XAxis
    dataKey="t" tickFormatter={clock} minTickGap={32} stroke="var(--muted)"
    label={{ value: "Time (local, per minute)", position: "insideBottom", offset: -16, fill: "var(--muted)" }}
  />
);

/** p50 and p99 per minute (bucket upper bounds, log scale) against the tenant's objective. */
export function TenantLagChart({ data }: { data: TenantFairnessData }) {
  const rows = minuteGrid(data, data.minutes).map(({ t, minute }) => ({ t, p50: minute?.lagP50?.ms ?? null, p99: minute?.lagP99?.ms ?? null, over: minute?.lagP99?.over ?? false }));
  const over = data.minutes.filter((m) => m.lagP99 !== null && (m.lagP99.over || m.lagP99.ms > data.objectiveMs)).length;
  return (
    <figure className="chart-figure">
      <figcaption className="muted">Per minute, by bucket upper bound, log scale. Dashed: its objective, {formatMs(data.objectiveMs)}. {over} minute{over === 1 ? "" : "s"} with p99 over it.</figcaption>
      <div className="chart" role="img" aria-label={`Schedule lag p50 and p99 per minute against the objective ${formatMs(data.objectiveMs)}: p99 over it in ${over} minutes`}>
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 24, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
            {timeAxis}
            <YAxis
              scale="log" domain={[5, 100_000]} ticks={TICKS} allowDataOverflow tickFormatter={(v: number) => formatMs(v)} stroke="var(--muted)" width={64}
              label={{ value: "Schedule lag (log)", angle: -90, position: "insideLeft", offset: -2, fill: "var(--muted)", style: { textAnchor: "middle" } }}
            />
            <Tooltip labelFormatter={minuteLabel} formatter={(value, name) => [value == null ? "no claims" : lagLabel({ ms: Number(value), over: false }), name]} />
            <Legend verticalAlign="top" height={28} />
            <ReferenceLine y={data.objectiveMs} stroke="var(--danger)" strokeDasharray="6 4" label={{ value: "objective", position: "insideTopRight", fill: "var(--danger)" }} />
            <Line type="linear" dataKey="p50" name="p50" stroke="#2f5bea" strokeWidth={2} dot={false} connectNulls={false} isAnimationActive={false} />
            <Line type="linear" dataKey="p99" name="p99" stroke="#d97706" strokeWidth={2} dot={false} connectNulls={false} isAnimationActive={false} />
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

const REASONS = [
  { key: "breaker", label: "Breaker", color: "#c4302b" },
  { key: "rate_limit", label: "Rate limit", color: "#d97706" },
  { key: "budget", label: "Budget", color: "#8e44ad" },
  { key: "cap", label: "In-flight limit (cap)", color: "#0f8b8d" },
  { key: "send_window", label: "Send window", color: "#8a919c" },
  { key: "step_slots", label: "Step slot waits", color: "#2f5bea" },
] as const;

/** Its deferrals per minute by reason, and its steps that waited for a step slot, stacked. */
export function TenantDeferralChart({ data }: { data: TenantFairnessData }) {
  const rows = minuteGrid(data, data.minutes).map(({ t, minute }) => {
    const row: Record<string, number> = { t, step_slots: minute?.stepsWaited ?? 0 };
    for (const r of REASONS) if (r.key !== "step_slots") row[r.key] = minute?.deferred[r.key] ?? 0;
    return row;
  });
  const total = rows.reduce((n, r) => n + REASONS.reduce((m, reason) => m + (r[reason.key] ?? 0), 0), 0);
  return (
    <figure className="chart-figure">
      <figcaption className="muted">Steps deferred per minute by the reason the engine recorded, and steps that waited for a step slot. {total.toLocaleString("en-US")} in the range.</figcaption>
      <div className="chart" role="img" aria-label={`Deferrals by reason per minute: ${total} in the range`}>
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={rows} margin={{ top: 8, right: 16, bottom: 24, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
            {timeAxis}
            <YAxis allowDecimals={false} stroke="var(--muted)" width={56} />
            <Tooltip labelFormatter={minuteLabel} />
            <Legend verticalAlign="top" height={48} />
            {REASONS.map((r) => <Bar key={r.key} dataKey={r.key} name={r.label} stackId="deferred" fill={r.color} isAnimationActive={false} />)}
          </BarChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

/** Its share of all claims and of all demand per minute. */
export function TenantShareChart({ data }: { data: TenantFairnessData }) {
  const rows = minuteGrid(data, data.minutes).map(({ t, minute }) => ({ t, claims: (minute?.claimShare ?? 0) * 100, demand: (minute?.demandShare ?? 0) * 100 }));
  return (
    <figure className="chart-figure">
      <figcaption className="muted">Solid: its share of the claims. Dashed: its share of the demand (claimed plus waiting).</figcaption>
      <div className="chart" role="img" aria-label="Share of claims and of demand per minute">
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 24, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
            {timeAxis}
            <YAxis domain={[0, 100]} ticks={[0, 25, 50, 75, 100]} tickFormatter={(v: number) => `${v}%`} stroke="var(--muted)" width={56} />
            <Tooltip labelFormatter={minuteLabel} formatter={(value, name) => [`${Number(value).toFixed(1)} %`, name]} />
            <Legend verticalAlign="top" height={28} />
            <Line type="linear" dataKey="claims" name="Share of claims" stroke="#2f5bea" strokeWidth={2} dot={false} isAnimationActive={false} />
            <Line type="linear" dataKey="demand" name="Share of demand" stroke="#2f5bea" strokeWidth={1.5} strokeDasharray="6 4" dot={false} isAnimationActive={false} />
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
