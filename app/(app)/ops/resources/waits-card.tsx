"use client";

import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { QueryError } from "../../../_components/query-error";
import { useTRPC } from "../../../_components/trpc";
import type { AppRouter } from "../../../../server/api/root.ts";
import styles from "./resources.module.css";
import { REFRESH_MS } from "./step-slots-card";

/** One (resource, tenant) row, as resources.waits answers it. */
type Wait = inferRouterOutputs<AppRouter>["resources"]["waits"]["waits"][number];

/**
 * The other bounded resources a tenant may have to wait for: a database connection (its share of
 * a backend pool), an outbound slot to a host, its event fan-out of the minute. Per resource, the
 * tenants that waited in the engines' last two minutes of metrics, most waits first, refreshed
 * every 2 s. A tenant that waited was at its bound.
 */
export function WaitsCard() {
  const trpc = useTRPC();
  const waits = useQuery({ ...trpc.resources.waits.queryOptions(), refetchInterval: REFRESH_MS });
  const data = waits.data;
  // A resource more tenants waited for than its rows show (the top 20 of each).
  const shown = new Map<string, number>();
  for (const w of data?.waits ?? []) shown.set(w.resourceId, (shown.get(w.resourceId) ?? 0) + 1);
  const more = data?.resources.filter((r) => r.waitingTenants > (shown.get(r.resourceId) ?? 0)) ?? [];

  return (
    <section className="card" aria-labelledby="waits-heading">
      <h2 id="waits-heading">Waits for other bounded resources</h2>
      <p className="muted">
        A tenant over its share of a backend&apos;s connections, its outbound requests open to one host or its event fan-out
        of the clock minute waits rather than take more: a wait means it hit its bound. Waits are over the last 2 minutes,
        every engine process&apos;s counted; a tenant&apos;s own outbound limit is set on its page. Refreshed every 2 s.
      </p>
      {waits.error ? (
        <QueryError error={waits.error} />
      ) : !data ? (
        <div className="skeleton" aria-busy="true" aria-label="Loading resource waits" />
      ) : data.waits.length === 0 ? (
        <p className="empty">No tenant waited for a connection, an outbound slot or its event minute in the last 2 minutes.</p>
      ) : (
        <>
          {more.map((r) => (
            <p key={r.resourceId} className="muted">
              {r.resource}: the {shown.get(r.resourceId) ?? 0} tenants that waited most of {r.waitingTenants.toLocaleString("en-US")}.
            </p>
          ))}
          <div className="table-wrap">
            <table className={`table ${styles.liveTable}`} aria-label="Waits for other bounded resources">
              <thead>
                <tr>
                  <th scope="col">Resource</th>
                  <th scope="col">Tenant</th>
                  <th scope="col">Waits</th>
                  <th scope="col">Limit</th>
                </tr>
              </thead>
              <tbody>
                {data.waits.map((w) => <WaitRow key={`${w.resourceId} ${w.tenantId}`} wait={w} />)}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

function WaitRow({ wait }: { wait: Wait }) {
  return (
    <tr data-resource={wait.resourceId} data-at-limit={wait.atLimit}>
      <th scope="row" className={styles.resourceName}>{wait.resource}</th>
      <td>
        <Link prefetch={false} href={`/ops/tenants/${wait.tenantId}`} title={`Limits and activity of ${wait.tenantId}`}><code>{wait.tenantId}</code></Link>
      </td>
      <td><strong>{wait.waits.toLocaleString("en-US")}</strong></td>
      <td className={styles.wrap}>
        {wait.limit}
        {wait.atLimit && <> <span className="badge badge-warn">at its limit</span></>}
      </td>
    </tr>
  );
}
