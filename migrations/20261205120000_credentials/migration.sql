-- Credentials (wire-format N): a tenant's vendor secrets, referenced from step params as
-- credentials://<id>. value and refresh_token hold sealed text (engine/secrets/sealed-text.ts)
-- whenever an encryption key is configured, and are never returned by any route.
CREATE TABLE "credentials" (
    "tenant_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'api_key',
    "value" TEXT NOT NULL,
    "refresh_token" TEXT,
    "refresh_url" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "expires_at" TIMESTAMPTZ(3),
    "description" TEXT,
    "last_used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "credentials_pkey" PRIMARY KEY ("tenant_id", "id"),
    CONSTRAINT "credentials_kind_check" CHECK ("kind" IN ('api_key', 'oauth2', 'basic'))
);

-- The OAuth2 refresh sweep reads enabled oauth2 credentials that expire soon.
CREATE INDEX "credentials_refresh_idx" ON "credentials" ("expires_at") WHERE "kind" = 'oauth2' AND "enabled" AND "refresh_url" IS NOT NULL;
