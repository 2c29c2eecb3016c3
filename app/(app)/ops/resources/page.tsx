import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { signedInCaller } from "../../../../server/web/session.ts";
import { LedgerTable } from "./ledger-table";
import { RetentionCard } from "./retention-card";
import { StepSlotsCard } from "./step-slots-card";
import { ThrottledCard } from "./throttled-card";
import { WaitsCard } from "./waits-card";
import { Prefetched, query } from "../../../../server/web/prefetch.tsx";

export const metadata: Metadata = { title: "Resources · Operator console" };

/**
 * Every resource tenants share (the engine's ledger), and live: the step slots' use, the API
 * callers throttled lately and the tenants that waited for another bounded resource.
 */
export default async function OpsResourcesPage() {
  let ledger;
  try {
    ledger = await (await signedInCaller()).resources.ledger();
  } catch (error) {
    // Not an operator: the console's layout answers the same, this only keeps the page from failing first.
    if (error instanceof TRPCError && error.code === "NOT_FOUND") notFound();
    throw error;
  }
  return (
    <main className="page">
      <div className="page-header">
        <h1>Resources</h1>
        <p>
          Every resource the tenants share, where its boundary is enforced and what changes it; which tenants use the most of
          their step slots right now, which API callers were throttled lately, which tenants waited for another bounded
          resource, and which have finished instances waiting to be pruned.
        </p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.resources.usage.queryOptions()),
          query(trpc.resources.throttled.queryOptions()),
          query(trpc.resources.waits.queryOptions()),
          query(trpc.resources.retention.queryOptions()),
        ]}
      >
        <StepSlotsCard />
        <ThrottledCard />
        <WaitsCard />
        <RetentionCard />
      </Prefetched>
      <section className="card" aria-labelledby="ledger-heading">
        <h2 id="ledger-heading">Resource ledger</h2>
        <p className="muted">
          From the engine&apos;s ledger (<code>engine/resources/ledger.ts</code>), like the README&apos;s fairness table. A tiered
          resource has an engine-wide default and a value of a tenant&apos;s own.
        </p>
        <LedgerTable entries={ledger} />
      </section>
    </main>
  );
}
