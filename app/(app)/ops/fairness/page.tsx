import type { Metadata } from "next";
import { Suspense } from "react";
import { signedInCaller } from "../../../../server/web/session.ts";
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
      {/* The header goes out at once; the figures follow in the same response when read. */}
      <Suspense fallback={<div className="skeleton chart-skeleton" aria-busy="true" aria-label="Loading fairness" />}>
        <FairnessRead searchParams={searchParams} />
      </Suspense>
    </main>
  );
}

/**
 * The range's figures read while the page renders, so the browser does not wait for its scripts
 * before asking for them. A failed read leaves the view to ask, and to show the error.
 */
async function FairnessRead({ searchParams }: { searchParams: SearchParams }) {
  const asked = (await searchParams).range;
  const range = readRange(typeof asked === "string" ? asked : null);
  const caller = await signedInCaller();
  const data = await caller.ops.fairness({ range }).catch(() => null);
  return <FairnessView initial={data && { range, data }} />;
}
