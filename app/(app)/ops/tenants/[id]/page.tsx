import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { cache } from "react";
import { signedInCaller } from "../../../../../server/web/session.ts";
import { LimitsCard } from "./limits-card";
import { RecentActivity } from "./recent-activity";

type Params = Promise<{ id: string }>;

/** The tenant, read once per request for the title and the page. */
const tenantOrNotFound = cache(async (id: string) => {
  let tenants;
  try {
    tenants = await (await signedInCaller()).ops.tenants();
  } catch (error) {
    // Not an operator: the console's layout answers the same, this only keeps the page from failing first.
    if (error instanceof TRPCError && error.code === "NOT_FOUND") notFound();
    throw error;
  }
  // A tenant that does not exist gets the app's one not-found page.
  const tenant = tenants.find((t) => t.id === id);
  if (!tenant) notFound();
  return tenant;
});

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  // notFound() here, not only in the page, so a missing tenant gets the not-found page's title.
  await tenantOrNotFound(id);
  return { title: `${id.slice(0, 64)} · Operator console` };
}

/** One tenant for operators: its placement, its limits and what was last done to it. */
export default async function OpsTenantPage({ params }: { params: Params }) {
  const { id } = await params;
  const tenant = await tenantOrNotFound(id);

  return (
    <main className="page">
      <div className="page-header">
        <p className="muted"><Link href="/ops">← All tenants</Link></p>
        <h1>{tenant.name}</h1>
        <p>
          <code>{tenant.id}</code> · backend{" "}
          {tenant.backendId ? <span className="badge badge-accent">{tenant.backendId}</span> : <span className="badge">unplaced</span>} ·
          epoch {tenant.epoch ?? "–"} · {tenant.memberCount} {tenant.memberCount === 1 ? "member" : "members"}
          {tenant.quiesced && <> · <span className="badge badge-warn">quiesced · moving</span></>}
        </p>
      </div>
      <section className="card" aria-labelledby="limits-heading">
        <h2 id="limits-heading">Limits</h2>
        <LimitsCard tenantId={tenant.id} />
      </section>
      <section className="card" aria-labelledby="activity-heading">
        <h2 id="activity-heading">Recent activity</h2>
        <RecentActivity tenantId={tenant.id} />
      </section>
    </main>
  );
}
