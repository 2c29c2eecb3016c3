"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { QueryError } from "../../../_components/query-error";
import { useTRPC } from "../../../_components/trpc";
import { WorkerCells } from "../../t/[tenant]/workers/worker-cells";
import styles from "./fleet.module.css";

/** How many rows the view asks for; the server caps it. */
/** `limits`: the list lengths offered, the first one shown first. */
export function FleetWorkers({ limits }: { limits: readonly number[] }) {
  const trpc = useTRPC();
  const [limit, setLimit] = useState<number>(limits[0]!);
  const fleet = useQuery({ ...trpc.workers.ops.fleet.queryOptions({ limit }), refetchInterval: 5_000, placeholderData: keepPreviousData });

  let body;
  if (!fleet.data && fleet.error) body = <QueryError error={fleet.error} />;
  else if (!fleet.data) body = <div className="skeleton" aria-busy="true" aria-label="Loading workers" />;
  else if (fleet.data.workers.length === 0) body = <p className="empty">No worker has polled yet, for any tenant.</p>;
  else {
    const { workers, staleAfterSecs, aliveWithinSecs } = fleet.data;
    body = (
      <>
        <div className="table-wrap">
          <table className="table" aria-label="Fleet workers" aria-busy={fleet.isPlaceholderData}>
            <thead>
              <tr>
                <th scope="col">Tenant</th>
                <th scope="col">Worker</th>
                <th scope="col">Handlers</th>
                <th scope="col">Queues</th>
                <th scope="col">Version</th>
                <th scope="col">Last seen</th>
                <th scope="col">Status</th>
                <th scope="col" className={styles.num}>Claimed</th>
                <th scope="col" className={styles.num}>Stale</th>
              </tr>
            </thead>
            <tbody>
              {workers.map((worker) => (
                <tr key={`${worker.tenantId}\u0000${worker.workerId}`}>
                  <td>
                    {worker.tenantId === "" ? (
                      <span className="badge badge-accent" title="an operator key polling for no tenant: every tenant's tasks">fleet</span>
                    ) : (
                      <Link prefetch={false} href={`/ops/tenants/${encodeURIComponent(worker.tenantId)}`}><code>{worker.tenantId}</code></Link>
                    )}
                  </td>
                  <WorkerCells worker={worker} aliveWithinSecs={aliveWithinSecs} />
                  <td className={styles.num}>{worker.claimed.toLocaleString("en-US")}</td>
                  <td className={styles.num}>{worker.stale > 0 ? <span className="badge badge-warn">{worker.stale.toLocaleString("en-US")}</span> : 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className={`muted ${styles.note}`}>
          Showing the {workers.length.toLocaleString("en-US")} most recently seen{workers.length === fleet.data.limit ? ` (at most ${fleet.data.limit})` : ""}.
          A claim is stale after {staleAfterSecs} s without a heartbeat. A fleet worker&apos;s claims are its tasks of every tenant.
        </p>
        {fleet.error && <QueryError error={fleet.error} />}
      </>
    );
  }

  return (
    <section className="card" aria-labelledby="fleet-heading">
      <h2 id="fleet-heading">Registered workers</h2>
      <form className="filters" aria-label="How many workers" onSubmit={(event) => event.preventDefault()}>
        <label htmlFor="fleet-limit">
          Show
          <select id="fleet-limit" className="input" value={limit} onChange={(event) => setLimit(Number(event.target.value))}>
            {limits.map((n) => <option key={n} value={n}>newest {n}</option>)}
          </select>
        </label>
      </form>
      {body}
    </section>
  );
}
