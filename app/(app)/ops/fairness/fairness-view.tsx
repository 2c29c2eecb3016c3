"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { usePathname, useSearchParams } from "next/navigation";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";
import { BacklogChart } from "./backlog-chart";
import { RANGES, readRange, type FairnessRange } from "./fairness-data";
import { JainChart } from "./jain-chart";
import { LagChart } from "./lag-chart";
import { NoisyTable } from "./noisy-table";
import { ShareChart } from "./share-chart";

const REFRESH_MS = 10_000;

/** The range buttons, the four charts and the noisiest tenants, refreshed every 10 s. */
export function FairnessView() {
  const trpc = useTRPC();
  const pathname = usePathname();
  const range = readRange(useSearchParams().get("range"));
  // replaceState keeps the range in the address without a server round trip; Next.js follows it in useSearchParams.
  const setRange = (next: FairnessRange) => window.history.replaceState(null, "", `${pathname}?range=${next}`);
  const fairness = useQuery({
    ...trpc.ops.fairness.queryOptions({ range }),
    refetchInterval: REFRESH_MS,
    // Keep the last range on screen while the next one loads.
    placeholderData: keepPreviousData,
  });
  const data = fairness.data;
  const long = RANGES.find((r) => r.value === range)!.long;

  return (
    <>
      <div className="toolbar fairness-toolbar">
        <div className="segmented" role="group" aria-label="Time range">
          {RANGES.map((r) => (
            <button
              key={r.value} type="button" className="btn btn-small" aria-pressed={r.value === range}
              onClick={() => setRange(r.value)}
            >
              {r.label}
            </button>
          ))}
        </div>
        {data && (
          <span className="muted" aria-live="polite">
            {fairness.isPlaceholderData ? "Loading…" : `${data.tenants.length} tenant${data.tenants.length === 1 ? "" : "s"} active in ${long}; refreshed every 10 s.`}
          </span>
        )}
      </div>
      {fairness.error ? (
        <QueryError error={fairness.error} />
      ) : !data ? (
        <Loading />
      ) : data.minutes.length === 0 ? (
        <section className="card">
          <p className="empty">No engine activity in this range yet: metrics are written every few seconds while instances run.</p>
        </section>
      ) : (
        <div aria-busy={fairness.isPlaceholderData}>
          <section className="card" aria-labelledby="fairness-share-heading">
            <h2 id="fairness-share-heading">Share of claims against share of demand</h2>
            <ShareChart data={data} />
          </section>
          <div className="overview-grid">
            <section className="card" aria-labelledby="fairness-jain-heading">
              <h2 id="fairness-jain-heading">Jain&apos;s fairness index</h2>
              <JainChart data={data} />
            </section>
            <section className="card" aria-labelledby="fairness-lag-heading">
              <h2 id="fairness-lag-heading">Schedule lag</h2>
              <LagChart data={data} />
            </section>
          </div>
          <section className="card" aria-labelledby="fairness-backlog-heading">
            <h2 id="fairness-backlog-heading">Backlog</h2>
            <BacklogChart data={data} />
          </section>
          <section className="card" aria-labelledby="fairness-noisy-heading">
            <h2 id="fairness-noisy-heading">Noisiest tenants</h2>
            <NoisyTable tenants={data.tenants} />
          </section>
        </div>
      )}
    </>
  );
}

function Loading() {
  return (
    <div aria-busy="true" aria-label="Loading fairness">
      <div className="card"><div className="skeleton chart-skeleton" /></div>
      <div className="overview-grid">
        <div className="card"><div className="skeleton chart-skeleton" /></div>
        <div className="card"><div className="skeleton chart-skeleton" /></div>
      </div>
      <div className="card"><div className="skeleton chart-skeleton" /></div>
      <div className="card"><div className="skeleton" /></div>
    </div>
  );
}
