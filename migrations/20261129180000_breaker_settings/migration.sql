-- A tenant admin's breaker settings for one of the tenant's handlers, within the bounds the
-- platform operator configures (BULKHEAD_BREAKER_*_MIN / _MAX).
CREATE TABLE "breaker_settings" (
    "tenant_id" TEXT NOT NULL,
    "handler" TEXT NOT NULL,
    "failure_threshold" INTEGER NOT NULL,
    "cooldown_secs" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "breaker_settings_pkey" PRIMARY KEY ("tenant_id", "handler"),
    CONSTRAINT "breaker_settings_positive_check" CHECK ("failure_threshold" > 0 AND "cooldown_secs" > 0)
);
