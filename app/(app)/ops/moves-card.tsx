"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { useTRPC } from "../../_components/trpc";
import { QueryError } from "../../_components/query-error";

// A move's phases, in order, before "done" (engine/moves/move-tenant.ts).
const STEPS = ["quiesce", "drain", "copy", "validate", "cutover", "resume", "cleanup"];

/** The latest tenant moves and their phases: polled every second while one is under way. */
export function MovesCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const moves = useQuery({
    ...trpc.ops.moves.queryOptions({ limit: 20 }),
    refetchInterval: (query) => (query.state.data?.some((m) => m.phase !== "done") ? 1_000 : 10_000),
  });

  // A phase change moves the tenant (quiesced, a new backend and epoch, writes again): the
  // tenants table follows it.
  const progress = moves.data?.filter((m) => m.phase !== "done").map((m) => `${m.id}:${m.phase}`).join(",");
  const seen = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (progress === undefined) return;
    if (seen.current !== undefined && seen.current !== progress) void queryClient.invalidateQueries(trpc.ops.tenants.pathFilter());
    seen.current = progress;
  }, [progress, queryClient, trpc]);

  let body;
  if (moves.error) body = <QueryError error={moves.error} />;
  else if (!moves.data) body = <div className="skeleton" aria-busy="true" aria-label="Loading tenant moves" />;
  else if (moves.data.length === 0) body = <p className="empty">No moves yet. Start one with “Move…” on a tenant&apos;s row.</p>;
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
                <td><code>{m.tenantId}</code></td>
                <td><code>{m.fromBackend}</code> → <code>{m.toBackend}</code></td>
                <td><Phase phase={m.phase} failed={m.error !== null} /></td>
                <td>{m.requestedBy}</td>
                <td>{new Date(m.startedAt).toLocaleString()}</td>
                <td>
                  {m.finishedAt ? (
                    new Date(m.finishedAt).toLocaleString()
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
      <h2 id="moves-heading">Tenant moves</h2>
      {body}
    </section>
  );
}

function Phase({ phase, failed }: { phase: string; failed: boolean }) {
  if (phase === "done") return <span className="badge badge-ok">done</span>;
  const step = STEPS.indexOf(phase) + 1;
  return (
    <span className={failed ? "badge badge-danger" : "badge badge-accent"} title={`Phase ${step} of ${STEPS.length}`}>
      {step}/{STEPS.length} {phase}
    </span>
  );
}
