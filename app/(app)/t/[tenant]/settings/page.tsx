import type { Metadata } from "next";
import { Prefetched, query } from "../../../../../server/web/prefetch.tsx";
import { myAccount } from "../../../../../server/web/session.ts";
import { ApiKeysPanel } from "./api-keys-panel";
import { CredentialsPanel } from "./credentials-panel";
import { MembersPanel } from "./members-panel";
import { TriggersPanel } from "./triggers-panel";

export const metadata: Metadata = { title: "Settings" };

export default async function TenantSettingsPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const me = await myAccount();
  const current = me.tenants.find((t) => t.id === tenant);
  return (
    <main className="page">
      <div className="page-header">
        <h1>Settings</h1>
        <p>{current?.name ?? tenant} · who can use this tenant, the API keys that call its REST API, the credentials its steps use, and the triggers its workflows start each other by. Admins only.</p>
      </div>
      <Prefetched
        queries={(trpc) => [
          query(trpc.members.list.queryOptions({ tenantId: tenant })),
          query(trpc.members.invitations.queryOptions({ tenantId: tenant })),
          query(trpc.apiKeys.list.queryOptions({ tenantId: tenant })),
          query(trpc.credentials.list.queryOptions({ tenantId: tenant })),
          query(trpc.account.me.queryOptions()),
          query(trpc.triggers.list.queryOptions({ tenantId: tenant })),
          query(trpc.sequences.list.queryOptions({ tenantId: tenant })),
        ]}
      >
        <section className="card" aria-labelledby="members-heading">
          <h2 id="members-heading">Members</h2>
          <MembersPanel tenantId={tenant} />
        </section>
        <section className="card" aria-labelledby="api-keys-heading">
          <h2 id="api-keys-heading">API keys</h2>
          <ApiKeysPanel tenantId={tenant} />
        </section>
        <section className="card" aria-labelledby="credentials-heading">
          <h2 id="credentials-heading">Credentials</h2>
          <CredentialsPanel tenantId={tenant} />
        </section>
        <section className="card" aria-labelledby="triggers-heading">
          <h2 id="triggers-heading">Triggers</h2>
          <TriggersPanel tenantId={tenant} />
        </section>
      </Prefetched>
    </main>
  );
}
