import type { Metadata } from "next";
import Link from "next/link";
import { MovesCard } from "./moves-card";
import { Prefetched, query } from "../../../../server/web/prefetch.tsx";

export const metadata: Metadata = { title: "Tenant moves · Operator console" };

const MOVES = 50;

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
      <Prefetched
        queries={(trpc) => [
          query(trpc.ops.moves.queryOptions({ limit: MOVES })),
        ]}
      >
        <MovesCard heading="Moves, newest first" limit={MOVES} />
      </Prefetched>
    </main>
  );
}
