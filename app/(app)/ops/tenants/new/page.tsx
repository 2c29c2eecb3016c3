import type { Metadata } from "next";
import Link from "next/link";
import { CreateTenantCard } from "./create-tenant-card";
import { Prefetched, query } from "../../../../../server/web/prefetch.tsx";

export const metadata: Metadata = { title: "Create a tenant · Operator console" };

/**
 * A new tenant and its first admin. (A static segment wins over /ops/tenants/[id], so no tenant
 * may be called "new": server/control/tenants.ts reserves the slug.)
 */
export default function NewTenantPage() {
  return (
    <main className="page">
      <div className="page-header">
        <p className="muted"><Link prefetch={false} href="/ops">← All tenants</Link></p>
        <h1>New tenant</h1>
        <p>A tenant is placed on a backend when it is created, and gets its first admin. It is in the audit log.</p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.ops.backends.queryOptions()),
        ]}
      >
        <CreateTenantCard />
      </Prefetched>
    </main>
  );
}
