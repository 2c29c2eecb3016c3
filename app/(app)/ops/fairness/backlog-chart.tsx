"use client";

import { Area, AreaChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { clock, colorOf, minuteGrid, minuteLabel, type FairnessData } from "./fairness-data";
import styles from "./fairness.module.css";
import { SeriesLegend } from "./series-legend";

/** What the top tenants (and the others, summed) left waiting at the end of each minute, stacked. */
export function BacklogChart({ data }: { data: FairnessData }) {
  const { series } = data;
  const rows = minuteGrid(data, data.minutes).map(({ t, minute }) => {
    const row: Record<string, number> = { t };
    for (const s of series) row[s.key] = minute?.series[s.key]?.backlog ?? 0;
    return row;
  });
  const rowAt = new Map(rows.map((r) => [r.t, r]));
  const peak = Math.max(0, ...rows.map((r) => series.reduce((sum, s) => sum + (r[s.key] ?? 0), 0)));
  return (
    <figure className="chart-figure">
      <figcaption className="muted">Due instances left waiting at the end of each minute, stacked. Peak: {peak.toLocaleString("en-US")} waiting.</figcaption>
      <SeriesLegend series={series} />
      <div className="chart" role="img" aria-label={`Backlog per tenant per minute, stacked, for ${series.map((s) => s.name).join(", ")}: peak ${peak} due instances waiting`}>
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
            <Tooltip
              content={({ active, label }) => {
                const row = active && label !== undefined ? rowAt.get(Number(label)) : undefined;
                if (!row) return null;
                return (
                  <div className={styles.tooltip}>
                    <p className={styles.tooltipTitle}>{minuteLabel(label)}</p>
                    <table>
                      <tbody>
                        {series.map((s, i) => (
                          <tr key={s.key}>
                            <th scope="row"><span className={styles.swatch} style={{ background: colorOf(s, i) }} />{s.name}</th>
                            <td>{row[s.key]!.toLocaleString("en-US")} waiting</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                );
              }}
            />
            {series.map((s, i) => (
              <Area
                key={s.key} type="linear" dataKey={s.key} name={s.name} stackId="backlog"
                stroke={colorOf(s, i)} fill={colorOf(s, i)} fillOpacity={0.25} isAnimationActive={false}
              />
            ))}
          </AreaChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
