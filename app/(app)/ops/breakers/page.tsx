import type { Metadata } from "next";
import { Suspense } from "react";
import { AllBreakers } from "./all-breakers";
import { opsBreakersInput } from "./breakers-input";
import { addressParams, Prefetched, query, type SearchParams } from "../../../../server/web/prefetch.tsx";

export const metadata: Metadata = { title: "Circuit breakers · Operator console" };

export default function OpsBreakersPage({ searchParams }: { searchParams: SearchParams }) {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Circuit breakers</h1>
        <p>Every tenant&apos;s open breakers, on whichever backend the tenant is placed. A reset reaches the engines within seconds.</p>
      </div>
      <Prefetched
        queries={async (trpc) => {
          const tenant = (await addressParams(searchParams)).get("tenant")?.trim();
          return [query(trpc.breakers.ops.list.queryOptions(opsBreakersInput(tenant ?? "", "")))];
        }}
      >
        {/* The tenant filter starts from the address (useSearchParams), which needs a boundary. */}
        <Suspense fallback={<div className="skeleton" aria-busy="true" aria-label="Loading breakers" />}>
          <AllBreakers />
        </Suspense>
      </Prefetched>
    </main>
  );
}
