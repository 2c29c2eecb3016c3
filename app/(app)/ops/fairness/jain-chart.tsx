"use client";

import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis, type DotItemDotProps } from "recharts";
import { clock, minuteGrid, minuteLabel, type FairnessData } from "./fairness-data";

const COLOR = "#2f5bea";

/**
 * Jain's fairness index per minute: 1 when every tenant with demand got the same fraction of it.
 * A minute without demand has no index: the line breaks there rather than inventing one.
 */
export function JainChart({ data }: { data: FairnessData }) {
  const rows = minuteGrid(data, data.minutes).map(({ t, minute }) => ({ t, jain: minute?.jain ?? null }));
  const known = rows.filter((r) => r.jain !== null).map((r) => r.jain!);
  const latest = known.at(-1);
  const lowest = known.length > 0 ? Math.min(...known) : undefined;
  // A minute between two without an index is a line of one point: draw it as a dot.
  const alone = (i: number) => rows[i]?.jain != null && rows[i - 1]?.jain == null && rows[i + 1]?.jain == null;
  const dot = (props: DotItemDotProps) =>
    alone(props.index) && props.cx !== undefined && props.cy !== undefined ? (
      <circle key={`dot-${props.index}`} className="recharts-dot" cx={props.cx} cy={props.cy} r={3} fill={COLOR} />
    ) : (
      <g key={`dot-${props.index}`} />
    );
  const summary = latest === undefined ? "no minute with demand" : `latest ${latest.toFixed(2)}, lowest ${lowest!.toFixed(2)}`;
  return (
    <figure className="chart-figure">
      <figcaption className="muted">
        1 is every tenant served the same fraction of its demand; 1/n is one tenant of n served while the rest wait. It says nothing of who holds the most. {summary[0]!.toUpperCase() + summary.slice(1)}.
      </figcaption>
      <div className="chart" role="img" aria-label={`Jain's fairness index per minute: ${summary}`}>
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 24, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
            <XAxis
              dataKey="t" tickFormatter={clock} minTickGap={32} stroke="var(--muted)"
              label={{ value: "Time (local, per minute)", position: "insideBottom", offset: -16, fill: "var(--muted)" }}
            />
            <YAxis
              domain={[0, 1]} ticks={[0, 0.25, 0.5, 0.75, 1]} stroke="var(--muted)" width={56}
              label={{ value: "Jain's index (0–1)", angle: -90, position: "insideLeft", fill: "var(--muted)", style: { textAnchor: "middle" } }}
            />
            <Tooltip labelFormatter={minuteLabel} formatter={(value, name) => [value == null ? "no demand" : Number(value).toFixed(3), name]} />
            <Legend verticalAlign="top" height={28} />
            <ReferenceLine y={1} stroke="var(--ok)" strokeDasharray="4 4" label={{ value: "fair", position: "insideTopLeft", fill: "var(--ok)" }} />
            <Line type="linear" dataKey="jain" name="Jain's index" stroke={COLOR} strokeWidth={2} dot={dot} isAnimationActive={false} />
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
