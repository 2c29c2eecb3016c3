"use client";

import { Bar, BarChart, CartesianGrid, Cell, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatMs, lagLabel, shortName, type FairnessData, type LagBound } from "./fairness-data";
import styles from "./fairness.module.css";

const SHOWN = 10;
const TICKS = [10, 100, 1_000, 10_000, 60_000];
const ROW_PX = 34;
const P50 = "#2f5bea";
const P99 = "#d97706";
const OVER = "#c4302b";

/**
 * The listed tenants' p50 and p99 schedule lag (due → claimed), one row each (so no two tenant
 * labels share a place), on a log scale, p99 in red where it is over the tenant's objective. The
 * engine counts lag in buckets, so a bar is its bucket's upper bound; past the last it is 60 s.
 */
export function LagChart({ data }: { data: FairnessData }) {
  const tenants = data.tenants.filter((t) => t.lagP99 !== null).slice(0, SHOWN);
  if (tenants.length === 0) return <p className="empty">No instance was claimed in this range, so there is no schedule lag to show.</p>;
  const rows = tenants.map((t) => ({
    tenant: t.tenantId, p50: t.lagP50?.ms ?? null, p99: t.lagP99?.ms ?? null, lagP50: t.lagP50, lagP99: t.lagP99, objectiveMs: t.objectiveMs, breach: t.breach,
  }));
  const rowOf = new Map(rows.map((r) => [r.tenant, r]));
  const described = tenants.map((t) => `${t.tenantId} p50 ${lagLabel(t.lagP50)}, p99 ${lagLabel(t.lagP99)} against ${formatMs(t.objectiveMs)}${t.breach ? " (over)" : ""}`).join("; ");
  return (
    <figure className="chart-figure">
      <figcaption className="muted">
        Due to claimed, by bucket upper bound; log scale. Red: p99 over the tenant&apos;s objective.{data.tenants.length > tenants.length ? ` The first ${tenants.length} listed tenants.` : ""}
      </figcaption>
      <div className={styles.lagChart} style={{ height: 72 + rows.length * ROW_PX }} role="img" aria-label={`p50 and p99 schedule lag per tenant: ${described}`}>
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={rows} layout="vertical" margin={{ top: 8, right: 16, bottom: 24, left: 8 }} barCategoryGap="20%">
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" horizontal={false} />
            <YAxis type="category" dataKey="tenant" width={128} stroke="var(--muted)" interval={0} tickFormatter={(name: string) => shortName(name, 16)} />
            <XAxis
              type="number" scale="log" domain={[5, 100_000]} ticks={TICKS} allowDataOverflow tickFormatter={(v: number) => formatMs(v)} stroke="var(--muted)"
              label={{ value: "Schedule lag (log)", position: "insideBottom", offset: -16, fill: "var(--muted)" }}
            />
            <Tooltip
              content={({ active, label }) => {
                const row = active && label !== undefined ? rowOf.get(String(label)) : undefined;
                if (!row) return null;
                return (
                  <div className={styles.tooltip}>
                    <p className={styles.tooltipTitle}>{row.tenant}</p>
                    <p>p50 {lagLabel(row.lagP50 as LagBound | null)}, p99 {lagLabel(row.lagP99 as LagBound | null)}</p>
                    <p>Objective {formatMs(row.objectiveMs)}{row.breach ? ": over it" : ""}</p>
                  </div>
                );
              }}
            />
            <Legend verticalAlign="top" height={28} />
            <Bar dataKey="p50" name="p50" fill={P50} isAnimationActive={false} />
            <Bar dataKey="p99" name="p99" fill={P99} isAnimationActive={false}>
              {rows.map((r) => <Cell key={r.tenant} fill={r.breach ? OVER : P99} />)}
            </Bar>
          </BarChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
