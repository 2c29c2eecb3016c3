import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { cache } from "react";
import { shortId } from "../../../../../../engine/short-id.ts";
import { Prefetched, query } from "../../../../../../server/web/prefetch.tsx";
import { signedInCaller } from "../../../../../../server/web/session.ts";
import { Editor } from "../editor/editor";
import { draftKeyOf } from "../editor/draft-store.ts";
import type { SequenceDoc } from "../editor/model.ts";
import { Versions } from "./versions";
import { SequenceSchedules } from "../../schedules/sequence-schedules";

type Params = Promise<{ tenant: string; id: string }>;

/** The version and its name's other versions, read once per request for the title and the page. */
const sequenceOrNotFound = cache(async (tenant: string, id: string) => {
  const caller = await signedInCaller();
  try {
    return { caller, found: await caller.sequences.get({ tenantId: tenant, sequenceId: id }) };
  } catch (error) {
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
});

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { tenant, id } = await params;
  // notFound() here, not only in the page, so a missing version gets the not-found page's title.
  await sequenceOrNotFound(tenant, id);
  return { title: `Sequence ${shortId(id)}` };
}

/** The version just saved, from `?saved=<version>` (set by the editor's Save). */
function savedVersionOf(saved: string | string[] | undefined): number | undefined {
  const value = typeof saved === "string" && /^\d{1,9}$/.test(saved) ? Number(saved) : NaN;
  return Number.isFinite(value) ? value : undefined;
}

export default async function SequencePage({ params, searchParams }: { params: Params; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { tenant, id } = await params;
  const savedVersion = savedVersionOf((await searchParams).saved);
  const { caller, found } = await sequenceOrNotFound(tenant, id);
  const { sequence, versions } = found;
  // Save compares with the name's latest version, which may be another one than the page's.
  const newest = versions.reduce((a, b) => (b.version > a.version ? b : a), versions[0]!);
  const latest = newest.id === sequence.id ? undefined : (await caller.sequences.get({ tenantId: tenant, sequenceId: newest.id })).sequence;
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
              {v.id === sequence.id ? <strong>v{v.version}</strong> : <Link prefetch={false} href={`/t/${tenant}/sequences/${v.id}`}>v{v.version}</Link>}
            </span>
          ))}
        </p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.sequences.handlers.queryOptions({ tenantId: tenant })),
          query(trpc.sequenceDrafts.get.queryOptions({ tenantId: tenant, key: draftKeyOf(sequence.id, sequence.id) })),
          query(trpc.sequences.versions.queryOptions({ tenantId: tenant, sequenceId: sequence.id })),
          query(trpc.schedules.list.queryOptions({ tenantId: tenant, sequenceId: sequence.id })),
          query(trpc.sequences.list.queryOptions({ tenantId: tenant })),
        ]}
      >
        <Editor
          key={sequence.id}
          tenantId={tenant}
          initial={sequence as unknown as SequenceDoc}
          stored={{ id: sequence.id, versions }}
          latest={latest as unknown as SequenceDoc | undefined}
          savedVersion={savedVersion}
        />
        <Versions tenantId={tenant} sequenceId={sequence.id} />
        <SequenceSchedules tenantId={tenant} sequenceId={sequence.id} />
      </Prefetched>
    </main>
  );
}
