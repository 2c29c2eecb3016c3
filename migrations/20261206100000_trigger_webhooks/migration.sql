-- Triggers and webhooks (wire-format L). A trigger gets its namespace, type, config, a write-only
-- secret (sealed text, engine/secrets/sealed-text.ts) and enabled flag. Existing triggers are
-- webhook triggers without a secret, which the public route never fires.
ALTER TABLE "triggers"
    ADD COLUMN "namespace" TEXT NOT NULL DEFAULT 'default',
    ADD COLUMN "trigger_type" TEXT NOT NULL DEFAULT 'webhook',
    ADD COLUMN "config" JSONB,
    ADD COLUMN "secret" TEXT,
    ADD COLUMN "enabled" BOOLEAN NOT NULL DEFAULT true,
    ADD CONSTRAINT "triggers_type_check" CHECK ("trigger_type" IN ('webhook', 'event'));

-- The list is oldest first.
CREATE INDEX "triggers_tenant_created_idx" ON "triggers" ("tenant_id", "created_at", "slug");

-- Slugs are unique across tenants because the public webhook route resolves a slug alone. The
-- registry lives on the primary (control plane) beside the placements: slug -> tenant, then the
-- router finds the tenant's backend and its trigger row.
CREATE TABLE "trigger_slugs" (
    "slug" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "trigger_slugs_pkey" PRIMARY KEY ("slug")
);
CREATE INDEX "trigger_slugs_tenant_idx" ON "trigger_slugs" ("tenant_id");
INSERT INTO "trigger_slugs" ("slug", "tenant_id", "created_at")
    SELECT "slug", "tenant_id", "created_at" FROM "triggers" ON CONFLICT ("slug") DO NOTHING;

-- A signed webhook's nonce, single use per slug for 360 s (the replay window plus the future skew).
CREATE TABLE "webhook_nonces" (
    "tenant_id" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "webhook_nonces_pkey" PRIMARY KEY ("tenant_id", "slug", "nonce")
);
CREATE INDEX "webhook_nonces_expiry_idx" ON "webhook_nonces" ("tenant_id", "expires_at");

-- The latest deliveries of each trigger (webhook, fire, test event) with their outcome, for the
-- triggers page. Each trigger keeps its newest 50.
CREATE TABLE "trigger_deliveries" (
    "tenant_id" TEXT NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "slug" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "instance_id" UUID,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "trigger_deliveries_pkey" PRIMARY KEY ("tenant_id", "id")
);
CREATE INDEX "trigger_deliveries_slug_idx" ON "trigger_deliveries" ("tenant_id", "slug", "id" DESC);

-- An operator's per-tenant override of BULKHEAD_WEBHOOK_RATE_PER_SEC (NULL keeps the default).
ALTER TABLE "tenant_limits" ADD COLUMN "webhook_rate_per_sec" INTEGER;
