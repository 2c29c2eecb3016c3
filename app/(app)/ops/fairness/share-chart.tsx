"use client";

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { clock, minuteGrid, minuteLabel, sumOf, topSeries, type FairnessData } from "./fairness-data";

/**
 * Each of the noisiest tenants' share of the claims (solid) against its share of the demand
 * (dashed) per minute: a fair scheduler keeps each pair together.
 */
export function ShareChart({ data }: { data: FairnessData }) {
  const series = topSeries(data.tenants);
  const rows = minuteGrid(data).map(({ t, minute }) => {
    const row: Record<string, number> = { t };
    for (const s of series) {
      row[`claim_${s.key}`] = sumOf(minute, s, "claimShare") * 100;
      row[`demand_${s.key}`] = sumOf(minute, s, "demandShare") * 100;
    }
    return row;
  });
  const names = series.map((s) => s.name).join(", ");
  return (
    <figure className="chart-figure">
      <figcaption className="muted">Solid: share of the claims. Dashed: share of the demand (claimed plus waiting). Top {Math.min(5, data.tenants.length)} tenants by demand.</figcaption>
      <div className="chart chart-tall" role="img" aria-label={`Share of claims against share of demand per minute, for ${names}`}>
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 24, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
            <XAxis
              dataKey="t" tickFormatter={clock} minTickGap={32} stroke="var(--muted)"
              label={{ value: "Time (local, per minute)", position: "insideBottom", offset: -16, fill: "var(--muted)" }}
            />
            <YAxis
              domain={[0, 100]} ticks={[0, 25, 50, 75, 100]} tickFormatter={(v: number) => `${v}%`} stroke="var(--muted)" width={64}
              label={{ value: "Share of claims / demand (%)", angle: -90, position: "insideLeft", offset: -2, fill: "var(--muted)", style: { textAnchor: "middle" } }}
            />
            <Tooltip labelFormatter={minuteLabel} formatter={(value, name) => [`${Number(value).toFixed(1)} %`, name]} />
            <Legend verticalAlign="top" height={48} />
            {series.flatMap((s) => [
              <Line
                key={`claim_${s.key}`} type="linear" dataKey={`claim_${s.key}`} name={`${s.name}: claims`}
                stroke={s.color} strokeWidth={2} dot={false} legendType="plainline" isAnimationActive={false}
              />,
              <Line
                key={`demand_${s.key}`} type="linear" dataKey={`demand_${s.key}`} name={`${s.name}: demand`}
                stroke={s.color} strokeWidth={1.5} strokeDasharray="6 4" dot={false} legendType="plainline" isAnimationActive={false}
              />,
            ])}
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
