import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { signedInCaller } from "../../../../server/web/session.ts";
import { LedgerTable } from "./ledger-table";
import { StepSlotsCard } from "./step-slots-card";

export const metadata: Metadata = { title: "Resources · Operator console" };

/** Every resource tenants share (the engine's ledger), and the step slots' live use. */
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
          Every resource the tenants share, where its boundary is enforced and what changes it; and which tenants use the most
          of their step slots right now.
        </p>
      </div>
      <StepSlotsCard />
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
