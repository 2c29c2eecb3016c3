import type { Metadata } from "next";
import { Suspense } from "react";
import { Prefetched, query } from "../../../../server/web/prefetch.tsx";
import { readRange } from "./fairness-data";
import { FairnessView } from "./fairness-view";

export const metadata: Metadata = { title: "Fairness" };

type SearchParams = Promise<{ range?: string | string[] }>;

export default function OpsFairnessPage({ searchParams }: { searchParams: SearchParams }) {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Fairness</h1>
        <p>
          Who is hurting whom: the tenants whose schedule lag is over their objective (and why, as the resource ledger counts it),
          who takes the claims, each tenant&apos;s share of the claims against its share of the demand, and Jain&apos;s index, per minute.
        </p>
      </div>
      <Prefetched
        queries={async (trpc) => {
          const asked = (await searchParams).range;
          return [query(trpc.ops.fairness.queryOptions({ range: readRange(typeof asked === "string" ? asked : null) }))];
        }}
      >
        {/* The view reads its range from the address (useSearchParams), which needs a boundary. */}
        <Suspense fallback={<div className="skeleton chart-skeleton" aria-busy="true" aria-label="Loading fairness" />}>
          <FairnessView />
        </Suspense>
      </Prefetched>
    </main>
  );
}
