// The editor's autosaved drafts (sequence_drafts): one per tenant and draft key (the edited
// sequence's id). The definition is whatever the editor holds, valid or not.
import { rejectUnstorableText } from "./instance-records.ts";
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

export interface SequenceDraft {
  definition: unknown;
  updatedAt: Date;
}

export async function getSequenceDraft(db: Queryable, tenantId: TenantId, key: string): Promise<SequenceDraft | null> {
  const { rows } = await db.query<{ definition: unknown; updated_at: Date }>({
    name: "get_sequence_draft",
    text: "SELECT definition, updated_at FROM sequence_drafts WHERE tenant_id = $1 AND draft_key = $2",
    values: [tenantId, key],
  });
  return rows[0] ? { definition: rows[0].definition, updatedAt: rows[0].updated_at } : null;
}

/** Writes the draft unless a newer one is stored (two tabs: the later edit wins); the stored time. */
export async function putSequenceDraft(db: Queryable, tenantId: TenantId, key: string, draft: SequenceDraft): Promise<Date> {
  try {
    const { rows } = await db.query<{ updated_at: Date }>({
      name: "put_sequence_draft",
      text: `INSERT INTO sequence_drafts AS d (tenant_id, draft_key, definition, updated_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (tenant_id, draft_key) DO UPDATE SET definition = EXCLUDED.definition, updated_at = EXCLUDED.updated_at
              WHERE d.updated_at <= EXCLUDED.updated_at
             RETURNING updated_at`,
      values: [tenantId, key, JSON.stringify(draft.definition), draft.updatedAt],
    });
    return rows[0]?.updated_at ?? draft.updatedAt;
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

export async function deleteSequenceDraft(db: Queryable, tenantId: TenantId, key: string): Promise<void> {
  await db.query({
    name: "delete_sequence_draft",
    text: "DELETE FROM sequence_drafts WHERE tenant_id = $1 AND draft_key = $2",
    values: [tenantId, key],
  });
}
