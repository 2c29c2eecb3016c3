import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { cache } from "react";
import { Prefetched, query } from "../../../../../server/web/prefetch.tsx";
import { signedInCaller } from "../../../../../server/web/session.ts";
import { MovesCard } from "../../moves/moves-card";
import { DeleteTenantCard } from "./delete-tenant-card";
import { ExportCard } from "./export-card";
import { LimitsCard } from "./limits-card";
import { RecentActivity } from "./recent-activity";
import { TenantBreakers } from "./tenant-breakers";
import { TenantHour, TenantPlacement } from "./tenant-overview";

type Params = Promise<{ id: string }>;

const MOVES = 5;
const RECENT_ACTIVITY = 20;

/** The tenant, read once per request for the title and the page. */
const tenantOrNotFound = cache(async (id: string) => {
  try {
    return await (await signedInCaller()).ops.tenant({ tenantId: id });
  } catch (error) {
    // No such tenant, an id no tenant can have (too long, not text the database takes), or not an
    // operator (the console's layout answers the same; this only keeps the page from failing first).
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
});

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  // notFound() here, not only in the page, so a missing tenant gets the not-found page's title.
  await tenantOrNotFound(id);
  return { title: `${id.slice(0, 64)} · Operator console` };
}

/** One tenant for operators: its placement and moves, its hour, its breakers, its limits and what was last done to it. */
export default async function OpsTenantPage({ params }: { params: Params }) {
  const { id } = await params;
  const tenant = await tenantOrNotFound(id);

  return (
    <main className="page">
      <div className="page-header">
        <p className="muted"><Link prefetch={false} href="/ops">← All tenants</Link></p>
        <h1>{tenant.name}</h1>
        {/* Its placement is under Placement, which follows a move as it runs. */}
        <p>
          <code>{tenant.id}</code> · {tenant.memberCount} {tenant.memberCount === 1 ? "member" : "members"} · created{" "}
          {new Date(tenant.createdAt).toLocaleDateString("en-US", { dateStyle: "medium" })}
        </p>
        <nav className="toolbar" aria-label="On this page">
          <a href="#placement-heading">Move</a>
          <a href="#breakers-heading">Breakers</a>
          <a href="#limits-heading">Limits</a>
          <a href="#export-heading">Export</a>
          <a href="#activity-heading">Recent activity</a>
          <a href="#delete-heading">Delete</a>
        </nav>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.ops.backends.queryOptions()),
          query(trpc.ops.moves.queryOptions({ tenantId: tenant.id, limit: MOVES })),
          query(trpc.breakers.ops.list.queryOptions({ tenantId: tenant.id })),
          query(trpc.ops.limits.get.queryOptions({ tenantId: tenant.id })),
          query(trpc.ops.exports.list.queryOptions({ tenantId: tenant.id })),
          query(trpc.ops.audit.list.queryOptions({ tenantId: tenant.id, limit: RECENT_ACTIVITY })),
        ]}
      >
        <TenantPlacement initial={tenant} />
        <MovesCard tenantId={tenant.id} heading="Moves" limit={MOVES} />
        <TenantHour initial={tenant} />
        <TenantBreakers tenantId={tenant.id} />
        <section className="card" aria-labelledby="limits-heading">
          <h2 id="limits-heading">Limits</h2>
          <LimitsCard tenantId={tenant.id} />
        </section>
        <ExportCard tenantId={tenant.id} />
        <section className="card" aria-labelledby="activity-heading">
          <h2 id="activity-heading">Recent activity</h2>
          <RecentActivity tenantId={tenant.id} limit={RECENT_ACTIVITY} />
        </section>
      </Prefetched>
      <DeleteTenantCard tenantId={tenant.id} />
    </main>
  );
}
