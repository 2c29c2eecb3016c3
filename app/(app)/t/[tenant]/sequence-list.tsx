"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "../../../_components/trpc";
import { QueryError } from "../../../_components/query-error";
import { LocalTime } from "../../../_components/local-time";

export function SequenceList({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const sequences = useQuery(trpc.overview.sequences.queryOptions({ tenantId }));
  if (sequences.error) return <QueryError error={sequences.error} />;
  if (!sequences.data) return <div className="skeleton" aria-busy="true" aria-label="Loading sequences" />;
  if (sequences.data.length === 0) {
    return <p className="empty">No sequences yet. Create one through the REST API or the editor.</p>;
  }
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Namespace</th>
            <th scope="col">Version</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {sequences.data.map((s) => (
            <tr key={s.id}>
              <td>
                <Link prefetch={false} href={`/t/${tenantId}/sequences/${s.id}`}>{s.name}</Link>
              </td>
              <td>{s.namespace}</td>
              <td>v{s.version}</td>
              <td>
                <span className="badge">{s.status}</span> {s.deprecated && <span className="badge">deprecated</span>}
              </td>
              <td><LocalTime iso={s.createdAt} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
