import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { Prefetched, query } from "../../../server/web/prefetch.tsx";
import { BackendsCard } from "./backends-card";
import { SignOutUserCard } from "./sign-out-user-card";
import { firstPageInput } from "./tenant-page-input";
import { TenantTable } from "./tenant-table";

export const metadata: Metadata = { title: "Operator console" };

type SearchParams = Promise<{ q?: string | string[]; sort?: string | string[] }>;

export default function OpsPage({ searchParams }: { searchParams: SearchParams }) {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Operator console</h1>
        <p>
          Every tenant on this platform and where its data lives. Open a tenant to move it, change its limits or see its
          breakers. Every change made here is in the audit log.
        </p>
        <nav className="toolbar" aria-label="Tenants">
          <Link prefetch={false} className="btn btn-primary" href="/ops/tenants/new">Create a tenant</Link>
          <Link prefetch={false} className="btn" href="/ops/moves">Tenant moves</Link>
        </nav>
      </div>
      <Prefetched
        queries={async (trpc) => {
          const { q, sort } = await searchParams;
          const first = firstPageInput(typeof q === "string" ? q : null, typeof sort === "string" ? sort : null);
          return [query(trpc.ops.tenantPage.queryOptions(first)), query(trpc.ops.backends.queryOptions())];
        }}
      >
        <section className="card" aria-labelledby="tenants-heading">
          <h2 id="tenants-heading">Tenants</h2>
          {/* The table reads its search from the address (useSearchParams), which needs a boundary. */}
          <Suspense fallback={<div className="skeleton" aria-busy="true" aria-label="Loading tenants" />}>
            <TenantTable />
          </Suspense>
        </section>
        <BackendsCard />
      </Prefetched>
      <SignOutUserCard />
    </main>
  );
}
