"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { QueryError } from "../../../_components/query-error";
import { useTRPC } from "../../../_components/trpc";
import styles from "./resources.module.css";
import { LocalTime } from "../../../_components/local-time";

/** The pruner counts again at most once a minute: the card need not read more often. */
const RETENTION_REFRESH_MS = 15_000;

/**
 * Retention: the tenants with the most finished instances past their retention, as the engines'
 * pruner last counted them, and how many it has deleted. Each pass deletes one batch per tenant,
 * so a large count drains steadily without holding up anyone else's.
 */
export function RetentionCard() {
  const trpc = useTRPC();
  const retention = useQuery({ ...trpc.resources.retention.queryOptions(), refetchInterval: RETENTION_REFRESH_MS });
  const data = retention.data;
  return (
    <section className="card" aria-labelledby="retention-heading">
      <h2 id="retention-heading">Rows pending pruning</h2>
      <p className="muted">
        Finished (completed, failed or cancelled) instances older than their tenant&apos;s retention are deleted with their
        outputs, signals, tasks and audit rows, one batch per tenant per pass.
        {data && <> The default retention is {data.defaultDays.toLocaleString("en-US")} days; a tenant&apos;s own is set on its page.</>}
      </p>
      {retention.error ? (
        <QueryError error={retention.error} />
      ) : !data ? (
        <div className="skeleton" aria-busy="true" aria-label="Loading retention" />
      ) : data.tenants.length === 0 ? (
        <p className="empty">Nothing has been pruned yet, and no finished instance is past its retention.</p>
      ) : (
        <div className="table-wrap">
          <table className={`table ${styles.liveTable}`} aria-label="Rows pending pruning">
            <thead>
              <tr>
                <th scope="col">Tenant</th>
                <th scope="col">Retention</th>
                <th scope="col">Pending</th>
                <th scope="col">Pruned</th>
                <th scope="col">Last pruned</th>
              </tr>
            </thead>
            <tbody>
              {data.tenants.map((t) => (
                <tr key={t.tenantId}>
                  <td>
                    <Link href={`/ops/tenants/${t.tenantId}`} prefetch={false}><code>{t.tenantId}</code></Link>
                  </td>
                  <td>{t.retentionDays === null ? `${data.defaultDays.toLocaleString("en-US")} days (default)` : `${t.retentionDays.toLocaleString("en-US")} days`}</td>
                  <td><strong>{t.pending.toLocaleString("en-US")}{t.pendingCapped ? " or more" : ""}</strong></td>
                  <td>{t.prunedTotal.toLocaleString("en-US")}</td>
                  <td>{t.lastPrunedAt ? <LocalTime iso={t.lastPrunedAt} /> : "never"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
