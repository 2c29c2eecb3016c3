import type { Metadata } from "next";
import Link from "next/link";
import { Prefetched, query } from "../../../../../server/web/prefetch.tsx";
import { myAccount } from "../../../../../server/web/session.ts";
import { SequenceTable } from "./sequence-table";

export const metadata: Metadata = { title: "Sequences" };

export default async function SequencesPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <div className="header-row">
          <h1>Sequences</h1>
          <Link prefetch={false} className="btn btn-primary btn-small" href={`/t/${tenant}/sequences/new`}>
            New sequence
          </Link>
        </div>
        <p>{current?.name ?? tenant} · every sequence with its versions; open one to edit it as a new version or run it.</p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.sequences.list.queryOptions({ tenantId: tenant })),
        ]}
      >
        <SequenceTable tenantId={tenant} />
      </Prefetched>
    </main>
  );
}
