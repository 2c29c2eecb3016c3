-- Sequence ids are chosen by clients. Unique across all tenants, a reused id answered 409 for an
-- id owned by another tenant, which told the caller that it exists. Keyed per tenant, an id names
-- a sequence only within its own tenant.
ALTER TABLE "sequences" DROP CONSTRAINT "sequences_pkey";
ALTER TABLE "sequences" ADD CONSTRAINT "sequences_pkey" PRIMARY KEY ("tenant_id", "id");
CREATE INDEX "sequences_id_idx" ON "sequences" ("id");
