"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";

/** One row per name (and namespace): its versions, newest first, each linking to the editor. */
export function SequenceTable({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const sequences = useQuery(trpc.sequences.list.queryOptions({ tenantId }));
  if (sequences.error) return <QueryError error={sequences.error} />;
  if (!sequences.data) return <div className="skeleton" aria-busy="true" aria-label="Loading sequences" />;
  if (sequences.data.length === 0) return <p className="empty">No sequences yet.</p>;
  const groups = new Map<string, typeof sequences.data>();
  for (const s of sequences.data) {
    const key = JSON.stringify([s.namespace, s.name]);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  const rows = [...groups.values()].map((versions) => [...versions].sort((a, b) => b.version - a.version));
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Namespace</th>
            <th scope="col">Versions</th>
            <th scope="col">Status (latest)</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((versions) => {
            const latest = versions[0]!;
            return (
              <tr key={latest.id}>
                <td>{latest.name}</td>
                <td>{latest.namespace}</td>
                <td>
                  {versions.map((v, index) => (
                    <span key={v.id}>
                      {index > 0 && ", "}
                      <Link href={`/t/${tenantId}/sequences/${v.id}`} aria-label={`${latest.name} version ${v.version}`}>
                        v{v.version}
                      </Link>
                    </span>
                  ))}
                </td>
                <td>
                  <span className="badge">{latest.status}</span> {latest.deprecated && <span className="badge">deprecated</span>}
                </td>
                <td className="cell-actions">
                  <Link className="btn btn-small" href={`/t/${tenantId}/sequences/${latest.id}`} aria-label={`Edit ${latest.name}`}>
                    Edit
                  </Link>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
