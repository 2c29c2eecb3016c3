import type { Metadata } from "next";
import { Suspense } from "react";
import { AuditLog } from "./audit-log";

export const metadata: Metadata = { title: "Audit log · Operator console" };

export default function OpsAuditPage() {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Audit log</h1>
        <p>What operators and tenant admins changed, and who: tenants, members, placements, limits, breaker resets, keys and triggers.</p>
      </div>
      {/* The filters start from the address (useSearchParams), which needs a boundary. */}
      <Suspense fallback={<div className="skeleton" aria-busy="true" aria-label="Loading the audit log" />}>
        <AuditLog />
      </Suspense>
    </main>
  );
}
