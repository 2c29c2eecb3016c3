"use client";

import Link from "next/link";
import { LocalTime } from "../../../_components/local-time";

export interface AuditEntry {
  id: string;
  at: string;
  actor: string;
  tenantId: string | null;
  action: string;
  details: unknown;
}

const DETAILS_MAX = 160;

/** The details as one line of JSON, cut short in the cell (the whole of it in the tooltip). */
function Details({ details }: { details: unknown }) {
  if (details === null || details === undefined) return <span className="muted">–</span>;
  if (typeof details === "object" && Object.keys(details).length === 0) return <span className="muted">–</span>;
  const json = JSON.stringify(details);
  return (
    <code className="audit-details" title={json.length > DETAILS_MAX ? json : undefined}>
      {json.length > DETAILS_MAX ? `${json.slice(0, DETAILS_MAX - 1)}…` : json}
    </code>
  );
}

/** Audit entries, newest first: the audit log page's table and a tenant's recent activity. */
export function AuditEntries({ label, entries, showTenant = true, busy = false }: {
  label: string;
  entries: readonly AuditEntry[];
  showTenant?: boolean;
  busy?: boolean;
}) {
  return (
    <div className="table-wrap">
      <table className="table" aria-label={label} aria-busy={busy}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Actor</th>
            {showTenant && <th scope="col">Tenant</th>}
            <th scope="col">Action</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id}>
              <td><LocalTime iso={e.at} /></td>
              <td>{e.actor}</td>
              {showTenant && (
                <td>
                  {e.tenantId ? (
                    <Link prefetch={false} href={`/ops/tenants/${e.tenantId}`}><code>{e.tenantId}</code></Link>
                  ) : (
                    <span className="muted">platform</span>
                  )}
                </td>
              )}
              <td><code>{e.action}</code></td>
              <td><Details details={e.details} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
