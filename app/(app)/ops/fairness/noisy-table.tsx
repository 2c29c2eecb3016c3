"use client";

import { lagLabel, percent, type TenantSummary } from "./fairness-data";

const SHOWN = 20;
const DEFERRALS = [
  { key: "breaker", label: "Breaker" },
  { key: "rate_limit", label: "Rate limit" },
  { key: "budget", label: "Budget" },
  { key: "send_window", label: "Send window" },
  { key: "cap", label: "Cap" },
] as const;

/** The tenants asking the most of the engines, noisiest first (the answer's order). */
export function NoisyTable({ tenants }: { tenants: readonly TenantSummary[] }) {
  const shown = tenants.slice(0, SHOWN);
  return (
    <>
      {tenants.length > shown.length && <p className="muted">The {SHOWN} noisiest of {tenants.length} tenants.</p>}
      <div className="table-wrap">
        <table className="table fairness-table" aria-label="Noisiest tenants">
          <thead>
            <tr>
              <th scope="col" rowSpan={2}>Tenant</th>
              <th scope="col" rowSpan={2}>Share of demand</th>
              <th scope="col" rowSpan={2}>Share of claims</th>
              <th scope="col" rowSpan={2}>Claimed</th>
              <th scope="col" rowSpan={2}>Failed</th>
              <th scope="colgroup" colSpan={DEFERRALS.length} className="th-group">Deferred</th>
              <th scope="col" rowSpan={2}>Lag p50</th>
              <th scope="col" rowSpan={2}>Lag p99</th>
              <th scope="col" rowSpan={2}>Mean backlog</th>
            </tr>
            <tr>
              {DEFERRALS.map((d) => <th key={d.key} scope="col">{d.label}</th>)}
            </tr>
          </thead>
          <tbody>
            {shown.map((t) => {
              const deferred = t.deferred as Partial<Record<(typeof DEFERRALS)[number]["key"], number>>;
              return (
                <tr key={t.tenantId}>
                  <th scope="row"><code>{t.tenantId}</code></th>
                  <td>{percent(t.demandShare)}</td>
                  <td>{percent(t.claimShare)}</td>
                  <td>{t.claimed.toLocaleString()}</td>
                  <td>{t.failed > 0 ? <span className="badge badge-danger">{t.failed.toLocaleString()}</span> : "0"}</td>
                  {DEFERRALS.map((d) => <td key={d.key}>{(deferred[d.key] ?? 0).toLocaleString()}</td>)}
                  <td>{lagLabel(t.lagP50)}</td>
                  <td>{lagLabel(t.lagP99)}</td>
                  <td>{t.backlog.toFixed(1)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}
