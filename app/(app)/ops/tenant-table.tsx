"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Fragment, useState } from "react";
import { useTRPC } from "../../_components/trpc";
import { QueryError } from "../../_components/query-error";
import { PlacementForm } from "./placement-form";

const COLUMNS = 8;

export function TenantTable() {
  const trpc = useTRPC();
  const tenants = useQuery(trpc.ops.tenants.queryOptions());
  // The tenant whose placement form is open, below its row.
  const [open, setOpen] = useState<string | null>(null);
  if (tenants.error) return <QueryError error={tenants.error} />;
  if (!tenants.data) return <div className="skeleton" aria-busy="true" aria-label="Loading tenants" />;
  if (tenants.data.length === 0) {
    return <p className="empty">No tenants yet. Create one below, or with <code>npm run bulkhead -- tenants create &lt;slug&gt;</code>.</p>;
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
            <th scope="col">State</th>
            <th scope="col">Members</th>
            <th scope="col">Created</th>
            <th scope="col"><span className="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          {tenants.data.map((t) => (
            <Fragment key={t.id}>
              <tr>
                <td>
                  <Link href={`/ops/tenants/${t.id}`} title={`Limits and activity of ${t.id}`}><code>{t.id}</code></Link>
                </td>
                <td>{t.name}</td>
                <td>{t.backendId ? <span className="badge badge-accent">{t.backendId}</span> : <span className="badge">unplaced</span>}</td>
                <td>{t.epoch ?? "–"}</td>
                <td>
                  {t.quiesced ? (
                    <span className="badge badge-warn" title="API writes pause and schedulers skip the tenant while a move runs">
                      quiesced · moving
                    </span>
                  ) : (
                    <span className="muted">serving</span>
                  )}
                </td>
                <td>{t.memberCount}</td>
                <td>{new Date(t.createdAt).toLocaleDateString()}</td>
                <td className="cell-actions">
                  <button
                    type="button"
                    className="btn btn-small"
                    aria-label={`Move ${t.id}…`}
                    aria-expanded={open === t.id}
                    aria-controls={`placement-${t.id}`}
                    onClick={() => setOpen(open === t.id ? null : t.id)}
                  >
                    Move…
                  </button>
                </td>
              </tr>
              {open === t.id && (
                <tr id={`placement-${t.id}`}>
                  <td className="cell-panel" colSpan={COLUMNS}>
                    <PlacementForm tenant={t} />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
}
