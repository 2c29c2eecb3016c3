-- An operator's per-tenant override of BULKHEAD_CRON_SCHEDULES_PER_TENANT (NULL keeps the default).
ALTER TABLE "tenant_limits" ADD COLUMN "cron_schedules" INTEGER;
