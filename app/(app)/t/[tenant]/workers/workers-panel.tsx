"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { ShortId, Time } from "../instances/instance-ui";
import { PAGE_SIZE } from "./page-size";
import { Pager } from "./pager";
import { WorkerCells } from "./worker-cells";
import styles from "./workers.module.css";

/** Workers report by polling, not through the change feed: the page polls too. */
const REFRESH_MS = 5_000;

const STATE_LABELS = { pending: "Pending", claimed: "Claimed", completed: "Completed", failed: "Failed" } as const;

export function WorkersPanel({ tenantId }: { tenantId: string }) {
  return (
    <>
      <TaskStats tenantId={tenantId} />
      <WorkerList tenantId={tenantId} />
      <ClaimedTasks tenantId={tenantId} />
    </>
  );
}

/** Task counts by state and by handler, and how many claims have gone quiet. */
function TaskStats({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const stats = useQuery({ ...trpc.workers.stats.queryOptions({ tenantId }), refetchInterval: REFRESH_MS });
  let body;
  if (!stats.data && stats.error) body = <QueryError error={stats.error} />;
  else if (!stats.data) body = <div className="skeleton" aria-busy="true" aria-label="Loading task counts" />;
  else {
    const { states, byState, byHandler, stale, staleAfterSecs } = stats.data;
    body = (
      <>
        <div className="stat-grid" role="list" aria-label="Tasks by state">
          {states.map((state) => (
            <div key={state} className="stat" role="listitem" aria-label={`${STATE_LABELS[state]}: ${byState[state]}`}>
              <div className="stat-label">{STATE_LABELS[state]}</div>
              <div className="stat-value">{byState[state].toLocaleString("en-US")}</div>
            </div>
          ))}
          <div className="stat" role="listitem" aria-label={`Stale claims: ${stale}`}>
            <div className="stat-label">Stale claims</div>
            <div className="stat-value">{stale > 0 ? <span className="badge badge-warn">{stale.toLocaleString("en-US")}</span> : 0}</div>
          </div>
        </div>
        <p className={`muted ${styles.note}`}>A claim is stale after {staleAfterSecs} s without a heartbeat; the engine hands it to another worker after {staleAfterSecs * 2} s.</p>
        {byHandler.length === 0 ? (
          <p className="empty">No worker tasks yet: a step whose handler is not built in becomes one, for a worker to poll.</p>
        ) : (
          <div className="table-wrap">
            <table className="table" aria-label="Tasks by handler">
              <thead>
                <tr>
                  <th scope="col">Handler</th>
                  {states.map((state) => <th key={state} scope="col" className={styles.num}>{STATE_LABELS[state]}</th>)}
                </tr>
              </thead>
              <tbody>
                {byHandler.map((row) => (
                  <tr key={row.handler}>
                    <td><code>{row.handler}</code></td>
                    {states.map((state) => <td key={state} className={styles.num}>{row.counts[state].toLocaleString("en-US")}</td>)}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {stats.error && <QueryError error={stats.error} />}
      </>
    );
  }
  return (
    <section className="card" aria-labelledby="task-stats-heading">
      <h2 id="task-stats-heading">Tasks</h2>
      {body}
    </section>
  );
}

/** The tenant's workers by their polls, most recently seen first. */
function WorkerList({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const [aliveOnly, setAliveOnly] = useState(false);
  const [offset, setOffset] = useState(0);
  const workers = useQuery({
    ...trpc.workers.list.queryOptions({ tenantId, aliveOnly, offset, limit: PAGE_SIZE }),
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  });
  let body;
  if (!workers.data && workers.error) body = <QueryError error={workers.error} />;
  else if (!workers.data) body = <div className="skeleton" aria-busy="true" aria-label="Loading workers" />;
  else if (workers.data.workers.length === 0 && offset === 0) {
    body = (
      <p className="empty">
        {aliveOnly
          ? `No worker has polled in the last ${workers.data.aliveWithinSecs} s.`
          : "No worker has polled yet. A worker appears here after its first POST /api/v1/workers/tasks/poll with one of the tenant's API keys."}
      </p>
    );
  } else {
    const { aliveWithinSecs } = workers.data;
    body = (
      <>
        <div className="table-wrap">
          <table className="table" aria-label="Workers" aria-busy={workers.isPlaceholderData}>
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">Handlers</th>
                <th scope="col">Queues</th>
                <th scope="col">Version</th>
                <th scope="col">Last seen</th>
                <th scope="col">Status</th>
                <th scope="col" className={styles.num}>In flight</th>
                <th scope="col" className={styles.num}>Stale</th>
              </tr>
            </thead>
            <tbody>
              {workers.data.workers.map((worker) => (
                <tr key={worker.workerId}>
                  <WorkerCells worker={worker} aliveWithinSecs={aliveWithinSecs} />
                  <td className={styles.num}>{worker.inFlight.toLocaleString("en-US")}</td>
                  <td className={styles.num}>{worker.stale > 0 ? <span className="badge badge-warn">{worker.stale.toLocaleString("en-US")}</span> : 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <Pager label="Workers" offset={offset} pageSize={PAGE_SIZE} shown={workers.data.workers.length} hasMore={workers.data.hasMore} busy={workers.isPlaceholderData} onOffset={setOffset} />
        {workers.error && <QueryError error={workers.error} />}
      </>
    );
  }
  return (
    <section className="card" aria-labelledby="workers-heading">
      <h2 id="workers-heading">Workers</h2>
      <div className={`checks-row ${styles.toggle}`}>
        <label>
          <input type="checkbox" checked={aliveOnly} onChange={(event) => { setAliveOnly(event.target.checked); setOffset(0); }} />
          Only workers seen in the last minute
        </label>
      </div>
      {body}
    </section>
  );
}

/** Tasks a worker holds now, newest first; a stale one's worker has stopped sending heartbeats. */
function ClaimedTasks({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const [staleOnly, setStaleOnly] = useState(false);
  const [offset, setOffset] = useState(0);
  const claimed = useQuery({
    ...trpc.workers.claimed.queryOptions({ tenantId, staleOnly, offset, limit: PAGE_SIZE }),
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  });
  let body;
  if (!claimed.data && claimed.error) body = <QueryError error={claimed.error} />;
  else if (!claimed.data) body = <div className="skeleton" aria-busy="true" aria-label="Loading claimed tasks" />;
  else if (claimed.data.tasks.length === 0 && offset === 0) {
    body = <p className="empty">{staleOnly ? `No stale claims: every claimed task had a heartbeat in the last ${claimed.data.staleAfterSecs} s.` : "No task is claimed right now."}</p>;
  } else {
    body = (
      <>
        <div className="table-wrap">
          <table className="table" aria-label="Claimed tasks" aria-busy={claimed.isPlaceholderData}>
            <thead>
              <tr>
                <th scope="col">Instance · step</th>
                <th scope="col">Handler</th>
                <th scope="col">Worker</th>
                <th scope="col">Claimed</th>
                <th scope="col">Last heartbeat</th>
              </tr>
            </thead>
            <tbody>
              {claimed.data.tasks.map((task) => (
                <tr key={task.id}>
                  <td title={`task ${task.id}`}>
                    <Link prefetch={false} href={`/t/${tenantId}/instances/${task.instanceId}`} title={task.instanceId}>
                      <ShortId id={task.instanceId} />
                      <span className="visually-hidden"> (open instance)</span>
                    </Link>
                    {" · "}<code>{task.blockId}</code>{task.attempt > 0 && <span className="muted"> · attempt {task.attempt + 1}</span>}
                  </td>
                  <td><code>{task.handlerName}</code>{task.queueName && <span className="muted"> · queue <code>{task.queueName}</code></span>}</td>
                  <td>{task.workerId ? <code>{task.workerId}</code> : <span className="muted">—</span>}</td>
                  <td><Time iso={task.claimedAt} /></td>
                  <td>
                    <Time iso={task.heartbeatAt} />{" "}
                    {task.stale ? <span className="badge badge-warn">stale</span> : <span className="badge badge-ok">ok</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <Pager label="Claimed tasks" offset={offset} pageSize={PAGE_SIZE} shown={claimed.data.tasks.length} hasMore={claimed.data.hasMore} busy={claimed.isPlaceholderData} onOffset={setOffset} />
        {claimed.error && <QueryError error={claimed.error} />}
      </>
    );
  }
  return (
    <section className="card" aria-labelledby="claimed-heading">
      <h2 id="claimed-heading">Claimed tasks</h2>
      <div className={`checks-row ${styles.toggle}`}>
        <label>
          <input type="checkbox" checked={staleOnly} onChange={(event) => { setStaleOnly(event.target.checked); setOffset(0); }} />
          Only stale claims
        </label>
      </div>
      {body}
    </section>
  );
}
