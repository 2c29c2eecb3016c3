"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../../../_components/trpc";
import { QueryError } from "../../../../_components/query-error";
import { formatMs, lagLabel, percent, RANGES } from "../fairness-data";
import styles from "../fairness.module.css";
import { RangeButtons, useRange } from "../range-buttons";
import { ReasonList } from "../reason-list";
import { TenantDeferralChart, TenantLagChart, TenantShareChart } from "./tenant-charts";
import { LocalTime } from "../../../../_components/local-time";

const REFRESH_MS = 10_000;

const LIMIT_NAMES = {
  lagObjectiveMs: "Lag p99 objective", claimCap: "Claim cap", maxConcurrency: "In-flight limit", maxSteps: "Step limit",
  outboundPerHost: "Outbound requests per host", apiRatePerSec: "API requests per second",
} as const;

/** One tenant over the range: its figures, three charts, its Open breakers and its limits; refreshed every 10 s. */
export function TenantFairnessView({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const [range, setRange] = useRange();
  const query = useQuery({ ...trpc.ops.fairnessTenant.queryOptions({ tenantId, range }), refetchInterval: REFRESH_MS, placeholderData: keepPreviousData });
  const data = query.data;
  const long = RANGES.find((r) => r.value === range)!.long;
  return (
    <>
      <div className={`toolbar ${styles.toolbar}`}>
        <RangeButtons range={range} onChange={setRange} />
        {data && <span className="muted" aria-live="polite">{query.isPlaceholderData ? "Loading…" : `On ${data.backendId}; ${long}; refreshed every 10 s.`}</span>}
      </div>
      {query.error ? (
        <QueryError error={query.error} />
      ) : !data ? (
        <div aria-busy="true" aria-label="Loading the tenant's fairness">
          <div className="card"><div className="skeleton chart-skeleton" /></div>
          <div className="card"><div className="skeleton chart-skeleton" /></div>
        </div>
      ) : (
        <div aria-busy={query.isPlaceholderData}>
          <section className={styles.headline} aria-label="This tenant at a glance">
            <div className={`card ${styles.figure}`}>
              <h2 className={styles.figureLabel}>Lag p99 against its objective</h2>
              <p className={styles.figureValue} data-testid="tenant-p99">
                {lagLabel(data.summary.lagP99)} <span className={styles.figureWho}>/ {formatMs(data.objectiveMs)}{data.ownObjective ? " (its own)" : " (default)"}</span>
              </p>
              <p>{data.summary.breach ? <span className="badge badge-danger">over objective</span> : <span className="badge badge-ok">within objective</span>}</p>
              <p className={`muted ${styles.explain}`}>Due to claimed, the slowest 1 % of its claims: over the objective means it waited too long, whatever its share.</p>
            </div>
            <div className={`card ${styles.figure}`}>
              <h2 className={styles.figureLabel}>Share of claims</h2>
              <p className={styles.figureValue}>{percent(data.summary.claimShare)} <span className={styles.figureWho}>of demand {percent(data.summary.demandShare)}</span></p>
              <p className={`muted ${styles.explain}`}>Its claims of all tenants&apos; claims in the range, against its part of what all tenants asked for.</p>
            </div>
            <div className={`card ${styles.figure}`}>
              <h2 className={styles.figureLabel}>Why it waited</h2>
              <ReasonList reasons={data.summary.reasons} shown={4} />
              <p className={`muted ${styles.explain}`}>What the engines counted against it, in the resource ledger&apos;s words, largest first.</p>
            </div>
          </section>
          {data.minutes.length === 0 ? (
            <section className="card"><p className="empty">This tenant had no engine activity in this range.</p></section>
          ) : (
            <>
              <section className="card" aria-labelledby="tenant-lag-heading">
                <h2 id="tenant-lag-heading">Schedule lag over time</h2>
                <TenantLagChart data={data} />
              </section>
              <div className="overview-grid">
                <section className="card" aria-labelledby="tenant-deferrals-heading">
                  <h2 id="tenant-deferrals-heading">Deferrals by reason</h2>
                  <TenantDeferralChart data={data} />
                </section>
                <section className="card" aria-labelledby="tenant-share-heading">
                  <h2 id="tenant-share-heading">Share over time</h2>
                  <TenantShareChart data={data} />
                </section>
              </div>
            </>
          )}
          <div className="overview-grid">
            <section className="card" aria-labelledby="tenant-breakers-heading">
              <h2 id="tenant-breakers-heading">Open breakers</h2>
              {data.openBreakers.length === 0 ? <p className="muted">None open.</p> : (
                <div className="table-wrap">
                  <table className="table" aria-label="Open breakers">
                    <thead><tr><th scope="col">Handler</th><th scope="col">Failures</th><th scope="col">Opened</th></tr></thead>
                    <tbody>
                      {data.openBreakers.map((b) => (
                        <tr key={b.handler}><th scope="row"><code>{b.handler}</code></th><td>{b.failureCount}</td><td><LocalTime iso={b.openedAt} /></td></tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
            <section className="card" aria-labelledby="tenant-limits-heading">
              <h2 id="tenant-limits-heading">Limits</h2>
              <dl className={styles.limits}>
                {(Object.keys(LIMIT_NAMES) as (keyof typeof LIMIT_NAMES)[]).map((key) => {
                  const own = data.limits.own[key];
                  const value = own ?? data.limits.defaults[key];
                  return (
                    <div key={key} style={{ display: "contents" }}>
                      <dt>{LIMIT_NAMES[key]}</dt>
                      <dd>{key === "lagObjectiveMs" ? formatMs(value) : value.toLocaleString("en-US")} <span className="muted">{own === null ? "(default)" : "(its own)"}</span></dd>
                    </div>
                  );
                })}
              </dl>
            </section>
          </div>
        </div>
      )}
    </>
  );
}
