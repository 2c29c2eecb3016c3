import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { TenantFairnessView } from "./tenant-fairness-view";

type Params = Promise<{ tenantId: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { tenantId } = await params;
  return { title: `${decodeURIComponent(tenantId).slice(0, 64)} · Fairness` };
}

/** One tenant's fairness for operators (the proxy lets only operators open /ops pages). */
export default async function OpsTenantFairnessPage({ params }: { params: Params }) {
  const tenantId = decodeURIComponent((await params).tenantId);
  return (
    <main className="page">
      <div className="page-header">
        <h1>Fairness: <code>{tenantId}</code></h1>
        <p>
          This tenant&apos;s schedule lag against its objective, why it waited (as the resource ledger counts it), its share of the claims
          over time, its Open breakers and its limits. <Link href="/ops/fairness" prefetch={false}>Every tenant</Link> ·{" "}
          <Link href={`/ops/tenants/${encodeURIComponent(tenantId)}`} prefetch={false}>Its tenant page</Link>
        </p>
      </div>
      {/* The view reads its range from the address (useSearchParams), which needs a boundary. */}
      <Suspense fallback={<div className="skeleton chart-skeleton" aria-busy="true" aria-label="Loading the tenant's fairness" />}>
        <TenantFairnessView tenantId={tenantId} />
      </Suspense>
    </main>
  );
}
