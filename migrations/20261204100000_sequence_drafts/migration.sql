-- The editor's autosaved work on a sequence: one draft per tenant and edited sequence (the
-- version's id, or "new" for a sequence not saved yet). Tenant data, so it moves with the tenant.
CREATE TABLE "sequence_drafts" (
    "tenant_id" TEXT NOT NULL,
    "draft_key" TEXT NOT NULL,
    "definition" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "sequence_drafts_pkey" PRIMARY KEY ("tenant_id", "draft_key")
);
