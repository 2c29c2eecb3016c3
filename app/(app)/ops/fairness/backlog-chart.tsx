"use client";

import { Area, AreaChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { clock, minuteGrid, minuteLabel, sumOf, topSeries, type FairnessData } from "./fairness-data";

/** The noisiest tenants' backlog (due instances not yet claimed: the minute's mean sample), stacked. */
export function BacklogChart({ data }: { data: FairnessData }) {
  const series = topSeries(data.tenants);
  const rows = minuteGrid(data).map(({ t, minute }) => {
    const row: Record<string, number> = { t };
    for (const s of series) row[s.key] = sumOf(minute, s, "backlog");
    return row;
  });
  const peak = Math.max(0, ...rows.map((r) => series.reduce((sum, s) => sum + (r[s.key] ?? 0), 0)));
  return (
    <figure className="chart-figure">
      <figcaption className="muted">Mean of the engine&apos;s backlog samples in each minute, stacked. Peak: {peak.toFixed(1)} waiting.</figcaption>
      <div className="chart" role="img" aria-label={`Backlog per tenant per minute, stacked, for ${series.map((s) => s.name).join(", ")}: peak ${peak.toFixed(1)} due instances waiting`}>
        <ResponsiveContainer width="100%" height="100%">
          <AreaChart data={rows} margin={{ top: 8, right: 16, bottom: 24, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
            <XAxis
              dataKey="t" tickFormatter={clock} minTickGap={32} stroke="var(--muted)"
              label={{ value: "Time (local, per minute)", position: "insideBottom", offset: -16, fill: "var(--muted)" }}
            />
            <YAxis
              allowDecimals={false} stroke="var(--muted)" width={64}
              label={{ value: "Due instances waiting", angle: -90, position: "insideLeft", offset: -2, fill: "var(--muted)", style: { textAnchor: "middle" } }}
            />
            <Tooltip labelFormatter={minuteLabel} formatter={(value, name) => [`${Number(value).toFixed(1)} waiting`, name]} />
            <Legend verticalAlign="top" height={28} />
            {series.map((s) => (
              <Area
                key={s.key} type="linear" dataKey={s.key} name={s.name} stackId="backlog"
                stroke={s.color} fill={s.color} fillOpacity={0.25} isAnimationActive={false}
              />
            ))}
          </AreaChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
