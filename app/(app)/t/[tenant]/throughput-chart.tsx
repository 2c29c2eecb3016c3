"use client";

import { useQuery } from "@tanstack/react-query";
import { Area, AreaChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";

const minute = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

/** Completed and failed instances per minute over the last hour, refreshed every 15 s. */
export function ThroughputChart({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const throughput = useQuery({ ...trpc.overview.throughput.queryOptions({ tenantId }), refetchInterval: 15_000 });
  if (throughput.error) return <QueryError error={throughput.error} />;
  if (!throughput.data) return <div className="skeleton chart-skeleton" aria-busy="true" aria-label="Loading throughput" />;
  const { buckets } = throughput.data;
  const completed = buckets.reduce((sum, b) => sum + b.completed, 0);
  const failed = buckets.reduce((sum, b) => sum + b.failed, 0);
  if (completed + failed === 0) return <p className="empty">No instance finished in the last hour.</p>;
  return (
    <figure className="chart-figure">
      <figcaption className="muted" data-testid="throughput-summary">
        Last 60 minutes: {completed.toLocaleString("en-US")} completed, {failed.toLocaleString("en-US")} failed.
      </figcaption>
      <div className="chart" role="img" aria-label={`Instances finished per minute: ${completed} completed and ${failed} failed in the last hour`}>
        <ResponsiveContainer width="100%" height="100%">
          <AreaChart data={buckets} margin={{ top: 8, right: 16, bottom: 24, left: 8 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
            <XAxis
              dataKey="start" tickFormatter={minute} minTickGap={24} stroke="var(--muted)"
              label={{ value: "Time (local, per minute)", position: "insideBottom", offset: -16, fill: "var(--muted)" }}
            />
            <YAxis
              allowDecimals={false} stroke="var(--muted)" width={56}
              label={{ value: "Instances / min", angle: -90, position: "insideLeft", fill: "var(--muted)" }}
            />
            <Tooltip labelFormatter={(label) => `Minute from ${minute(String(label))}`} formatter={(value, name) => [`${String(value)} / min`, name]} />
            <Legend verticalAlign="top" height={28} />
            {/* Not stacked: each line is its own count, so a failed line never traces the completed peak. */}
            <Area type="monotone" dataKey="completed" name="Completed" stroke="var(--ok)" fill="var(--ok)" fillOpacity={0.25} isAnimationActive={false} />
            <Area type="monotone" dataKey="failed" name="Failed" stroke="var(--danger)" fill="var(--danger)" fillOpacity={0.25} isAnimationActive={false} />
          </AreaChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
