-- Step slots (BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT) get a per-tenant override like the claim
-- cap and the in-flight limit, and each tenant's minute of metrics records how its steps used
-- them: the most it held at once in one engine process, and how many of its steps had to wait.
ALTER TABLE "tenant_limits" ADD COLUMN "max_steps" INTEGER;
ALTER TABLE "tenant_limits" ADD CONSTRAINT "tenant_limits_max_steps_check" CHECK ("max_steps" IS NULL OR "max_steps" > 0);
ALTER TABLE "tenant_metrics" ADD COLUMN "steps_peak" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "tenant_metrics" ADD COLUMN "steps_waited" INTEGER NOT NULL DEFAULT 0;
