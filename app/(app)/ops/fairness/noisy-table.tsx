"use client";

import Link from "next/link";
import { formatMs, lagLabel, percent, type FairnessData, type FairnessRange } from "./fairness-data";
import styles from "./fairness.module.css";
import { ReasonList } from "./reason-list";

/**
 * The tenants over their lag objective first (the largest fraction of claims over it first, with
 * the ledger's reasons), then those with the most claims; each links to its drill-down.
 */
export function NoisyTable({ data, range }: { data: FairnessData; range: FairnessRange }) {
  const { tenants, totals } = data;
  const breaches = tenants.filter((t) => t.breach).length;
  return (
    <>
      <p className="muted">
        {breaches > 0
          ? `Over their lag objective first (${breaches.toLocaleString("en-US")}${totals.breaches > breaches ? ` of ${totals.breaches.toLocaleString("en-US")}` : ""}), with why the ledger says they waited; then the most claims.`
          : "No tenant is over its lag objective. The tenants with the most claims:"}
      </p>
      <div className={`table-wrap ${styles.tableWrap}`}>
        <table className={`table ${styles.table}`} aria-label="Noisiest tenants">
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <th scope="col">Lag against objective</th>
              <th scope="col">Why it waited (ledger)</th>
              <th scope="col">Claims share</th>
              <th scope="col">Demand share</th>
              <th scope="col">Claimed</th>
              <th scope="col">Failed</th>
              <th scope="col">Mean backlog</th>
            </tr>
          </thead>
          <tbody>
            {tenants.map((t) => (
              <tr key={t.tenantId} data-breach={t.breach || undefined} className={t.breach ? styles.breachRow : undefined}>
                <th scope="row" className={styles.tenantCell}>
                  <Link href={`/ops/fairness/${encodeURIComponent(t.tenantId)}?range=${range}`} prefetch={false}><code>{t.tenantId}</code></Link>
                </th>
                <td>
                  <span className={styles.lagLine}>p99 <span data-lag="p99">{lagLabel(t.lagP99)}</span> / {formatMs(t.objectiveMs)}{t.ownObjective && <span className="muted"> (own)</span>}</span>
                  <span className={`muted ${styles.lagLine}`}>p50 <span data-lag="p50">{lagLabel(t.lagP50)}</span></span>
                  {t.breach && <span className="badge badge-danger">over objective</span>}
                </td>
                <td className={styles.reasonCell}><ReasonList reasons={t.reasons} /></td>
                <td>{percent(t.claimShare)}</td>
                <td>{percent(t.demandShare)}</td>
                <td>{t.claimed.toLocaleString("en-US")}</td>
                <td>{t.failed > 0 ? <span className="badge badge-danger">{t.failed.toLocaleString("en-US")}</span> : "0"}</td>
                <td>{t.backlog.toFixed(1)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
