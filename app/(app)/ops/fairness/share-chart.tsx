"use client";

import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { clock, colorOf, minuteGrid, minuteLabel, type FairnessData } from "./fairness-data";
import styles from "./fairness.module.css";
import { SeriesLegend } from "./series-legend";

/**
 * The top tenants' share of the claims (solid) against their share of the demand (dashed) per
 * minute, every other tenant summed as "others": a fair scheduler keeps each pair together. The
 * tooltip is one compact table (a row per series), so it fits inside the chart.
 */
export function ShareChart({ data }: { data: FairnessData }) {
  const { series } = data;
  const rows = minuteGrid(data, data.minutes).map(({ t, minute }) => {
    const row: Record<string, number> = { t };
    for (const s of series) {
      row[`claim_${s.key}`] = (minute?.series[s.key]?.claimShare ?? 0) * 100;
      row[`demand_${s.key}`] = (minute?.series[s.key]?.demandShare ?? 0) * 100;
    }
    return row;
  });
  const rowAt = new Map(rows.map((r) => [r.t, r]));
  const top = series.filter((s) => s.tenantId !== null).length;
  return (
    <figure className="chart-figure">
      <figcaption className="muted">
        Solid: share of the claims. Dashed: share of the demand (claimed plus waiting). The top {top} tenants by claims{series.some((s) => s.tenantId === null) ? ", the rest summed as others" : ""}.
      </figcaption>
      <SeriesLegend series={series} />
      <div className={`chart ${styles.chartTall}`} role="img" aria-label={`Share of claims against share of demand per minute, for ${series.map((s) => s.name).join(", ")}`}>
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 24, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
            <XAxis
              dataKey="t" tickFormatter={clock} minTickGap={32} stroke="var(--muted)"
              label={{ value: "Time (local, per minute)", position: "insideBottom", offset: -16, fill: "var(--muted)" }}
            />
            <YAxis
              domain={[0, 100]} ticks={[0, 25, 50, 75, 100]} tickFormatter={(v: number) => `${v}%`} stroke="var(--muted)" width={56}
              label={{ value: "Share (%)", angle: -90, position: "insideLeft", offset: 4, fill: "var(--muted)", style: { textAnchor: "middle" } }}
            />
            <Tooltip
              allowEscapeViewBox={{ x: false, y: false }}
              content={({ active, label }) => {
                const row = active && label !== undefined ? rowAt.get(Number(label)) : undefined;
                if (!row) return null;
                return (
                  <div className={styles.tooltip} data-testid="share-tooltip">
                    <p className={styles.tooltipTitle}>{minuteLabel(label)}</p>
                    <table>
                      <thead><tr><th scope="col">Tenant</th><th scope="col">Claims</th><th scope="col">Demand</th></tr></thead>
                      <tbody>
                        {series.map((s, i) => (
                          <tr key={s.key}>
                            <th scope="row"><span className={styles.swatch} style={{ background: colorOf(s, i) }} />{s.name}</th>
                            <td>{row[`claim_${s.key}`]!.toFixed(1)} %</td>
                            <td>{row[`demand_${s.key}`]!.toFixed(1)} %</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                );
              }}
            />
            {series.flatMap((s, i) => [
              <Line
                key={`claim_${s.key}`} type="linear" dataKey={`claim_${s.key}`} name={s.name}
                stroke={colorOf(s, i)} strokeWidth={2} dot={false} legendType="plainline" isAnimationActive={false}
              />,
              <Line
                key={`demand_${s.key}`} type="linear" dataKey={`demand_${s.key}`} name={`${s.name}: demand`}
                stroke={colorOf(s, i)} strokeWidth={1.5} strokeDasharray="6 4" dot={false} legendType="none" isAnimationActive={false}
              />,
            ])}
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
