import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { cache } from "react";
import { shortId } from "../../../../../../engine/short-id.ts";
import { myAccount, signedInCaller } from "../../../../../../server/web/session.ts";
import { InstanceDetail } from "./instance-detail";

type Params = Promise<{ tenant: string; id: string }>;

/** The instance's detail, read once per request for the title and the page. */
const instanceOrNotFound = cache(async (tenant: string, id: string) => {
  try {
    return await (await signedInCaller()).instances.get({ tenantId: tenant, instanceId: id });
  } catch (error) {
    // Another tenant's instance, a missing one and an id too long to be one all get the app's
    // one not-found page, as the API answers them all alike.
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
});

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { tenant, id } = await params;
  // notFound() here, not only in the page, so a missing instance gets the not-found page's title.
  await instanceOrNotFound(tenant, id);
  return { title: `Instance ${shortId(id)}` };
}

export default async function TenantInstancePage({ params }: { params: Params }) {
  const { tenant, id } = await params;
  const detail = await instanceOrNotFound(tenant, id);
  // Whether to offer the retry actions; their procedures check the role again.
  const isAdmin = (await myAccount()).tenants.find((t) => t.id === tenant)?.role === "admin";
  return (
    <main className="page">
      {/* The first render comes with the data; the client keeps it fresh from there. */}
      <InstanceDetail tenantId={tenant} instanceId={id} initial={detail} isAdmin={isAdmin} />
    </main>
  );
}
