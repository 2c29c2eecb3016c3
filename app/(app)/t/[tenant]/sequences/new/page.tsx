import { randomUUID } from "node:crypto";
import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { UUID_PATTERN } from "../../../../../../engine/model.ts";
import { Prefetched, query } from "../../../../../../server/web/prefetch.tsx";
import { Editor } from "../editor/editor";
import { draftKeyOf } from "../editor/draft-store.ts";

export const metadata: Metadata = { title: "New sequence" };

export default async function NewSequencePage({ params, searchParams }: { params: Promise<{ tenant: string }>; searchParams: Promise<{ draft?: string | string[] }> }) {
  const { tenant } = await params;
  // Minted here, not in the browser, so the server render and the client agree on the JSON. The
  // id is in the address, so a reload (or Back) finds this sequence's draft, and a new visit starts afresh.
  const { draft } = await searchParams;
  if (typeof draft !== "string" || !UUID_PATTERN.test(draft)) redirect(`/t/${tenant}/sequences/new?draft=${randomUUID()}`);
  const initial = {
    id: draft.toLowerCase(),
    tenant_id: tenant,
    namespace: "default",
    name: "",
    version: 1,
    blocks: [],
    created_at: new Date().toISOString(),
  };
  return (
    <main className="page page-wide">
      <div className="page-header">
        <h1>New sequence</h1>
        <p>Build the block tree on the canvas; the engine&apos;s own validation runs as you go.</p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.sequences.handlers.queryOptions({ tenantId: tenant })),
          query(trpc.sequenceDrafts.get.queryOptions({ tenantId: tenant, key: draftKeyOf(undefined, initial.id) })),
        ]}
      >
        <Editor tenantId={tenant} initial={initial} />
      </Prefetched>
    </main>
  );
}
