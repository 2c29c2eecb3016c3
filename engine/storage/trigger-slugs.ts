// SQL for `trigger_slugs`, on the primary: which tenant owns each trigger slug. Slugs are unique
// across tenants because the public webhook route names a slug and nothing else; the tenant's
// trigger row itself lives on the tenant's backend (engine/storage/triggers.ts).
import type { Queryable } from "./transaction.ts";

/**
 * Takes `slug` for the tenant: true when it is free or already the tenant's (a claim left by a
 * create that failed half-way is the tenant's to take again), false when another tenant has it.
 */
export async function claimTriggerSlug(db: Queryable, tenantId: string, slug: string): Promise<boolean> {
  const { rows } = await db.query({
    name: "claim_trigger_slug",
    text: `INSERT INTO trigger_slugs AS s (slug, tenant_id) VALUES ($1, $2)
           ON CONFLICT (slug) DO UPDATE SET slug = EXCLUDED.slug WHERE s.tenant_id = EXCLUDED.tenant_id
           RETURNING 1`,
    values: [slug, tenantId],
  });
  return rows.length === 1;
}

/** Gives the tenant's slug back. */
export async function releaseTriggerSlug(db: Queryable, tenantId: string, slug: string): Promise<void> {
  await db.query({ name: "release_trigger_slug", text: "DELETE FROM trigger_slugs WHERE slug = $1 AND tenant_id = $2", values: [slug, tenantId] });
}

/** The tenant owning `slug`, or null. */
export async function triggerSlugOwner(db: Queryable, slug: string): Promise<string | null> {
  const { rows } = await db.query<{ tenant_id: string }>({
    name: "trigger_slug_owner", text: "SELECT tenant_id FROM trigger_slugs WHERE slug = $1", values: [slug],
  });
  return rows[0]?.tenant_id ?? null;
}
