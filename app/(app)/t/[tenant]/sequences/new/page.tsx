import { randomUUID } from "node:crypto";
import type { Metadata } from "next";
import { Editor } from "../editor/editor";

export const metadata: Metadata = { title: "New sequence" };

export default async function NewSequencePage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  // Minted here, not in the browser, so the server render and the client agree on the JSON.
  const initial = {
    id: randomUUID(),
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
      <Editor tenantId={tenant} initial={initial} />
    </main>
  );
}
