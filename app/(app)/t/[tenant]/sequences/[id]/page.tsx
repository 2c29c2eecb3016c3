import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { shortId } from "../../../../../../engine/short-id.ts";
import { signedInCaller } from "../../../../../../server/web/session.ts";
import { Editor } from "../editor/editor";
import type { SequenceDoc } from "../editor/model.ts";

type Params = Promise<{ tenant: string; id: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  return { title: `Sequence ${shortId(id)}` };
}

export default async function SequencePage({ params }: { params: Params }) {
  const { tenant, id } = await params;
  const caller = await signedInCaller();
  let found;
  try {
    found = await caller.sequences.get({ tenantId: tenant, sequenceId: id });
  } catch (error) {
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
  const { sequence, versions } = found;
  return (
    <main className="page page-wide">
      <div className="page-header">
        <h1>
          {sequence.name} <span className="badge">v{sequence.version}</span> <span className="badge">{sequence.status}</span>
        </h1>
        <p>
          {sequence.namespace} · versions:{" "}
          {versions.map((v, index) => (
            <span key={v.id}>
              {index > 0 && ", "}
              {v.id === sequence.id ? <strong>v{v.version}</strong> : <Link href={`/t/${tenant}/sequences/${v.id}`}>v{v.version}</Link>}
            </span>
          ))}
        </p>
      </div>
      <Editor key={sequence.id} tenantId={tenant} initial={sequence as unknown as SequenceDoc} stored={{ id: sequence.id, versions }} />
    </main>
  );
}
