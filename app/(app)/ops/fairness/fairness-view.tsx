"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";
import { BacklogChart } from "./backlog-chart";
import { clock, RANGES } from "./fairness-data";
import styles from "./fairness.module.css";
import { Headline } from "./headline";
import { JainChart } from "./jain-chart";
import { LagChart } from "./lag-chart";
import { NoisyTable } from "./noisy-table";
import { RangeButtons, useRange } from "./range-buttons";
import { ShareChart } from "./share-chart";
import { useHydrated, utcTime } from "../../../_components/local-time";

const REFRESH_MS = 10_000;

/** The range buttons, the headline figures, the tenants over their objective and the top ones, and the charts; refreshed every 10 s. */
export function FairnessView() {
  const trpc = useTRPC();
  const [range, setRange] = useRange();
  const hydrated = useHydrated();
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
      <div className={`toolbar ${styles.toolbar}`}>
        <RangeButtons range={range} onChange={setRange} />
        {data && (
          <span className="muted" aria-live="polite">
            {fairness.isPlaceholderData
              ? "Loading…"
              : `${data.totals.tenants.toLocaleString("en-US")} tenant${data.totals.tenants === 1 ? "" : "s"} active in ${long} (since ${hydrated ? clock(Date.parse(data.from)) : utcTime(data.from, "time")}); refreshed every 10 s.`}
          </span>
        )}
      </div>
      {fairness.error ? (
        <QueryError error={fairness.error} />
      ) : !data ? (
        <Loading />
      ) : data.totals.tenants === 0 && data.minutes.length === 0 ? (
        <section className="card">
          <p className="empty">No engine activity in this range yet: metrics are written every few seconds while instances run.</p>
        </section>
      ) : (
        <div aria-busy={fairness.isPlaceholderData}>
          <Headline data={data} />
          <section className="card" aria-labelledby="fairness-noisy-heading">
            <h2 id="fairness-noisy-heading">Noisiest tenants</h2>
            <NoisyTable data={data} range={range} />
          </section>
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
              <h2 id="fairness-lag-heading">Schedule lag against the objective</h2>
              <LagChart data={data} />
            </section>
          </div>
          <section className="card" aria-labelledby="fairness-backlog-heading">
            <h2 id="fairness-backlog-heading">Backlog</h2>
            <BacklogChart data={data} />
          </section>
        </div>
      )}
    </>
  );
}

function Loading() {
  return (
    <div aria-busy="true" aria-label="Loading fairness">
      <div className={styles.headline}>
        {[0, 1, 2].map((i) => <div key={i} className="card"><div className="skeleton" /></div>)}
      </div>
      <div className="card"><div className="skeleton chart-skeleton" /></div>
      <div className="card"><div className="skeleton chart-skeleton" /></div>
    </div>
  );
}
