import type { Metadata } from "next";
import Link from "next/link";
import { MovesCard } from "./moves-card";

export const metadata: Metadata = { title: "Tenant moves · Operator console" };

/** Every tenant's moves, the running ones phase by phase: moves start from a tenant's page. */
export default function MovesPage() {
  return (
    <main className="page">
      <div className="page-header">
        <p className="muted"><Link prefetch={false} href="/ops">← All tenants</Link></p>
        <h1>Tenant moves</h1>
        <p>
          A move copies a tenant&apos;s rows to another backend, checks the copy, then points the tenant there. Engines run
          the phases; a failed phase is retried. Start one from the tenant&apos;s page.
        </p>
      </div>
      <MovesCard heading="Moves, newest first" limit={50} />
    </main>
  );
}
