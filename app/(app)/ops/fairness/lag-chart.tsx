"use client";

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatMs, lagLabel, type FairnessData, type LagBound } from "./fairness-data";

const SHOWN = 10;
const TICKS = [10, 100, 1_000, 10_000, 60_000];

/**
 * Each of the noisiest tenants' p50 and p99 schedule lag (due → claimed), on a log scale. The
 * engine counts lag in buckets, so a bar is its bucket's upper bound ("≤ 250 ms"); past the last
 * bound it is drawn at 60 s and reads "> 60 s".
 */
export function LagChart({ data }: { data: FairnessData }) {
  const tenants = data.tenants.filter((t) => t.lagP50 !== null || t.lagP99 !== null).slice(0, SHOWN);
  if (tenants.length === 0) return <p className="empty">No instance was claimed in this range, so there is no schedule lag to show.</p>;
  const rows = tenants.map((t) => ({ tenant: t.tenantId, p50: t.lagP50?.ms ?? null, p99: t.lagP99?.ms ?? null, lagP50: t.lagP50, lagP99: t.lagP99 }));
  const described = tenants.map((t) => `${t.tenantId} p50 ${lagLabel(t.lagP50)}, p99 ${lagLabel(t.lagP99)}`).join("; ");
  return (
    <figure className="chart-figure">
      <figcaption className="muted">
        Due to claimed, by bucket upper bound; log scale.{data.tenants.length > tenants.length ? ` The ${tenants.length} noisiest tenants with claims.` : ""}
      </figcaption>
      <div className="chart" role="img" aria-label={`p50 and p99 schedule lag per tenant: ${described}`}>
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={rows} margin={{ top: 8, right: 16, bottom: 24, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
            <XAxis
              dataKey="tenant" stroke="var(--muted)" interval={0}
              label={{ value: "Tenant", position: "insideBottom", offset: -16, fill: "var(--muted)" }}
            />
            <YAxis
              scale="log" domain={[5, 100_000]} ticks={TICKS} allowDataOverflow tickFormatter={(v: number) => formatMs(v)} stroke="var(--muted)" width={64}
              label={{ value: "Schedule lag (ms, log)", angle: -90, position: "insideLeft", offset: -2, fill: "var(--muted)", style: { textAnchor: "middle" } }}
            />
            <Tooltip
              formatter={(_value, name, item) => {
                const row = item.payload as { lagP50: LagBound | null; lagP99: LagBound | null };
                return [lagLabel(name === "p99" ? row.lagP99 : row.lagP50), name];
              }}
            />
            <Legend verticalAlign="top" height={28} />
            <Bar dataKey="p50" name="p50" fill="#2f5bea" isAnimationActive={false} />
            <Bar dataKey="p99" name="p99" fill="#d97706" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
