import type { Metadata } from "next";
import { Suspense } from "react";
import { FairnessView } from "./fairness-view";

export const metadata: Metadata = { title: "Fairness" };

export default function OpsFairnessPage() {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Fairness</h1>
        <p>
          Who is hurting whom: the tenants whose schedule lag is over their objective (and why, as the resource ledger counts it),
          who takes the claims, each tenant&apos;s share of the claims against its share of the demand, and Jain&apos;s index, per minute.
        </p>
      </div>
      {/* The view reads its range from the address (useSearchParams), which needs a boundary. */}
      <Suspense fallback={<div className="skeleton chart-skeleton" aria-busy="true" aria-label="Loading fairness" />}>
        <FairnessView />
      </Suspense>
    </main>
  );
}
