"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_components/trpc";
import { QueryError } from "../../_components/query-error";

export function TenantTable() {
  const trpc = useTRPC();
  const tenants = useQuery(trpc.ops.tenants.queryOptions());
  if (tenants.error) return <QueryError error={tenants.error} />;
  if (!tenants.data) return <div className="skeleton" aria-busy="true" aria-label="Loading tenants" />;
  if (tenants.data.length === 0) {
    return <p className="empty">No tenants yet. Create one with <code>npm run bulkhead -- tenants create &lt;slug&gt;</code>.</p>;
  }
  return (
    <div className="table-wrap">
      <table className="table" aria-label="Tenants">
        <thead>
          <tr>
            <th scope="col">Tenant</th>
            <th scope="col">Name</th>
            <th scope="col">Backend</th>
            <th scope="col">Epoch</th>
            <th scope="col">Members</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {tenants.data.map((t) => (
            <tr key={t.id}>
              <td><code>{t.id}</code></td>
              <td>{t.name}</td>
              <td>{t.backendId ? <span className="badge badge-accent">{t.backendId}</span> : <span className="badge">unplaced</span>}</td>
              <td>{t.epoch ?? "–"}</td>
              <td>{t.memberCount}</td>
              <td>{new Date(t.createdAt).toLocaleDateString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
