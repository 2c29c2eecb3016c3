"use client";

import { formatMs, percent, type FairnessData } from "./fairness-data";
import styles from "./fairness.module.css";

/**
 * The three figures of the range, each with a line saying what it means: Jain's index is
 * demand-relative, so beside it stand two that are not (the largest tenant's share of the claims,
 * and the tenants whose lag p99 is over their objective).
 */
export function Headline({ data }: { data: FairnessData }) {
  const jains = data.minutes.map((m) => m.jain).filter((j): j is number => j !== null);
  const latest = jains.at(-1);
  const lowest = jains.length > 0 ? Math.min(...jains) : undefined;
  return (
    <section className={styles.headline} aria-label="Fairness at a glance">
      <div className={`card ${styles.figure}`}>
        <h2 className={styles.figureLabel}>Largest tenant&apos;s share of claims</h2>
        <p className={styles.figureValue} data-testid="largest-share">
          {data.largest ? <>{percent(data.largest.claimShare)} <span className={styles.figureName}>{data.largest.tenantId}</span></> : "–"}
        </p>
        <p className={`muted ${styles.explain}`}>Of all claims in the range, whatever each tenant asked for: near 100 % means one tenant holds the engines.</p>
      </div>
      <div className={`card ${styles.figure}`}>
        <h2 className={styles.figureLabel}>Over their lag objective</h2>
        <p className={styles.figureValue} data-testid="breaches">
          {data.totals.breaches.toLocaleString("en-US")} <span className={styles.figureWho}>of {data.totals.tenants.toLocaleString("en-US")} tenants</span>
        </p>
        <p className={`muted ${styles.explain}`}>
          Tenants whose schedule lag p99 (due to claimed) is above their objective (default {formatMs(data.defaultObjectiveMs)}): they waited too long, whatever their share.
        </p>
      </div>
      <div className={`card ${styles.figure}`}>
        <h2 className={styles.figureLabel}>Jain&apos;s index, latest minute</h2>
        <p className={styles.figureValue} data-testid="jain">
          {latest === undefined ? "–" : latest.toFixed(2)}
          {lowest !== undefined && <span className={styles.figureWho}>lowest {lowest.toFixed(2)}</span>}
        </p>
        <p className={`muted ${styles.explain}`}>
          Demand-relative: 1.00 when every tenant got the same fraction of what it asked for, even if one tenant asked for (and got) most of it.
        </p>
      </div>
    </section>
  );
}
