import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { signedInCaller } from "../../../server/web/session.ts";
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
      <section className="card" aria-labelledby="tenants-heading">
        <h2 id="tenants-heading">Tenants</h2>
        {/* The header goes out at once; the first page follows in the same response when read. */}
        <Suspense fallback={<div className="skeleton" aria-busy="true" aria-label="Loading tenants" />}>
          <TenantTableRead searchParams={searchParams} />
        </Suspense>
      </section>
      <BackendsCard />
      <SignOutUserCard />
    </main>
  );
}

/**
 * The first page of the address's search and order, read while the page renders, so the browser
 * does not wait for its scripts before asking for it. A failed read leaves the table to ask, and
 * to show the error.
 */
async function TenantTableRead({ searchParams }: { searchParams: SearchParams }) {
  const { q, sort } = await searchParams;
  const input = firstPageInput(typeof q === "string" ? q : null, typeof sort === "string" ? sort : null);
  const caller = await signedInCaller();
  const data = await caller.ops.tenantPage(input).catch(() => null);
  return <TenantTable initial={data && { input, data }} />;
}
