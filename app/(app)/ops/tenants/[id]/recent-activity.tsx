"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { AuditEntries } from "../../audit/audit-entries";

/** The tenant's `limit` latest audit entries, by operators and its admins alike. */
export function RecentActivity({ tenantId, limit }: { tenantId: string; limit: number }) {
  const trpc = useTRPC();
  const recent = useQuery({ ...trpc.ops.audit.list.queryOptions({ tenantId, limit }), refetchInterval: 10_000 });
  const all = `/ops/audit?tenant=${encodeURIComponent(tenantId)}`;
  if (recent.error) return <QueryError error={recent.error} />;
  if (!recent.data) return <div className="skeleton" aria-busy="true" aria-label="Loading recent activity" />;
  if (recent.data.items.length === 0) return <p className="empty">Nothing recorded for this tenant yet.</p>;
  return (
    <>
      <AuditEntries label="Recent activity" entries={recent.data.items} showTenant={false} />
      <div className="toolbar">
        <span className="muted">
          The latest {recent.data.items.length} {recent.data.items.length === 1 ? "entry" : "entries"}.
        </span>
        <Link prefetch={false} href={all}>{recent.data.next ? "Older entries in the audit log" : "Filter them in the audit log"}</Link>
      </div>
    </>
  );
}
