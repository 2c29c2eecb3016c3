"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useRef } from "react";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";
import styles from "./moves.module.css";
import { LocalTime } from "../../../_components/local-time";

// A move's phases, in order, before "done" (engine/moves/move-tenant.ts).
const STEPS = ["quiesce", "drain", "copy", "validate", "cutover", "resume", "cleanup"];

/**
 * The latest tenant moves (of every tenant, or of `tenantId`) and their phases: polled every
 * second while one is under way, so its progress shows phase by phase.
 */
export function MovesCard({ tenantId, heading = "Tenant moves", limit = 20 }: { tenantId?: string; heading?: string; limit?: number }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const moves = useQuery({
    ...trpc.ops.moves.queryOptions({ tenantId, limit }),
    refetchInterval: (query) => (query.state.data?.some((m) => m.phase !== "done") ? 1_000 : 10_000),
  });

  // A phase change moves the tenant (quiesced, a new backend and epoch, writes again): the
  // tenants table and the tenant's page follow it.
  const progress = moves.data?.filter((m) => m.phase !== "done").map((m) => `${m.id}:${m.phase}`).join(",");
  const seen = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (progress === undefined) return;
    if (seen.current !== undefined && seen.current !== progress) {
      for (const filter of [trpc.ops.tenantPage.pathFilter(), trpc.ops.tenant.pathFilter()]) {
        void queryClient.invalidateQueries(filter);
      }
    }
    seen.current = progress;
  }, [progress, queryClient, trpc]);
  const running = moves.data?.filter((m) => m.phase !== "done").length ?? 0;

  let body;
  if (moves.error) body = <QueryError error={moves.error} />;
  else if (!moves.data) body = <div className="skeleton" aria-busy="true" aria-label="Loading tenant moves" />;
  else if (moves.data.length === 0) {
    body = (
      <p className="empty">
        {tenantId ? "No moves of this tenant yet: start one under “Placement” above." : "No moves yet. Start one from a tenant’s page, under “Placement”."}
      </p>
    );
  }
  else {
    body = (
      <div className="table-wrap">
        <table className="table" aria-label="Tenant moves">
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <th scope="col">From → to</th>
              <th scope="col">Phase</th>
              <th scope="col">Requested by</th>
              <th scope="col">Started</th>
              <th scope="col">Finished</th>
            </tr>
          </thead>
          <tbody>
            {moves.data.map((m) => (
              <tr key={m.id}>
                <td>{tenantId ? <code>{m.tenantId}</code> : <Link href={`/ops/tenants/${m.tenantId}`} prefetch={false}><code>{m.tenantId}</code></Link>}</td>
                <td><code>{m.fromBackend}</code> → <code>{m.toBackend}</code></td>
                <td><Phase phase={m.phase} failed={m.error !== null} /></td>
                <td className={styles.requester}>{m.requestedBy}</td>
                <td><LocalTime iso={m.startedAt} /></td>
                <td>
                  {m.finishedAt ? (
                    <LocalTime iso={m.finishedAt} />
                  ) : m.error ? (
                    <span className="move-error">
                      <span className="badge badge-danger">failed</span> {m.error} <span className="muted">(retried automatically)</span>
                    </span>
                  ) : (
                    <span className="muted">under way…</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <section className="card" aria-labelledby="moves-heading">
      <h2 id="moves-heading">{heading}</h2>
      {moves.data && moves.data.length > 0 && (
        <p className="muted" role="status">
          {running === 0 ? "None under way" : `${running} under way`} · the latest {moves.data.length} · refreshes every{" "}
          {running === 0 ? "10 s" : "second while one runs"}
        </p>
      )}
      {body}
    </section>
  );
}

function Phase({ phase, failed }: { phase: string; failed: boolean }) {
  if (phase === "done") return <span className="badge badge-ok">done</span>;
  const step = STEPS.indexOf(phase) + 1;
  return (
    <>
      <span className={failed ? "badge badge-danger" : "badge badge-accent"} title={`Phase ${step} of ${STEPS.length}`}>
        {step}/{STEPS.length} {phase}
      </span>{" "}
      <progress className={styles.progress} max={STEPS.length} value={step - 1} aria-label={`Phase ${step} of ${STEPS.length}: ${phase}`} />
    </>
  );
}
