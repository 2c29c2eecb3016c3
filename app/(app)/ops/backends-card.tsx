"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_components/trpc";
import { QueryError } from "../../_components/query-error";
import { useLocalTime } from "../../_components/local-time";

/** The registered storage backends (ids only: connection strings never leave the server) and their health. */
export function BackendsCard() {
  const trpc = useTRPC();
  const backends = useQuery({ ...trpc.ops.backends.queryOptions(), refetchInterval: 10_000 });
  const say = useLocalTime();

  let body;
  if (backends.error) body = <QueryError error={backends.error} />;
  else if (!backends.data) body = <div className="skeleton" aria-busy="true" aria-label="Loading storage backends" />;
  else if (backends.data.length === 0) body = <p className="empty">No storage backends registered.</p>;
  else {
    body = (
      <>
        <div className="table-wrap">
          <table className="table" aria-label="Storage backends">
            <thead>
              <tr>
                <th scope="col">Backend</th>
                <th scope="col">Health</th>
                <th scope="col">Latency</th>
              </tr>
            </thead>
            <tbody>
              {backends.data.map((b) => (
                <tr key={b.id}>
                  <td><code>{b.id}</code></td>
                  <td>
                    {b.reachable ? <span className="badge badge-ok">reachable</span> : <span className="badge badge-danger">unreachable</span>}
                  </td>
                  <td>{b.latencyMs !== null ? `${b.latencyMs} ms` : <span className="muted">–</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="form-hint muted">
          Checked every 10 s{backends.dataUpdatedAt ? `; last at ${say(backends.dataUpdatedAt, "time")}` : ""}.
        </p>
      </>
    );
  }

  return (
    <section className="card" aria-labelledby="backends-heading">
      <h2 id="backends-heading">Storage backends</h2>
      {body}
    </section>
  );
}
