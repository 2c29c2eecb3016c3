-- A tenant's own limits, set by operators, over the engine-wide defaults: its share of one claim
-- batch (BULKHEAD_MAX_INSTANCES_PER_TENANT) and its instances in flight per engine process
-- (BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT). NULL keeps the default. Control plane (primary).
CREATE TABLE "tenant_limits" (
    "tenant_id" TEXT NOT NULL,
    "claim_cap" INTEGER,
    "max_concurrency" INTEGER,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "tenant_limits_pkey" PRIMARY KEY ("tenant_id"),
    CONSTRAINT "tenant_limits_positive_check" CHECK (("claim_cap" IS NULL OR "claim_cap" > 0) AND ("max_concurrency" IS NULL OR "max_concurrency" > 0)),
    CONSTRAINT "tenant_limits_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
