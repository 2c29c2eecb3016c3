-- Cron schedules (wire-format M): a tenant's sequence fired on a cron expression in a time zone.
-- Tenant data, so it moves with the tenant. next_fire_at is NULL when the expression has no
-- later occurrence (a year that has passed).
CREATE TABLE "cron_schedules" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "sequence_id" UUID NOT NULL,
    "cron_expr" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "metadata" JSONB,
    "overlap_policy" TEXT NOT NULL DEFAULT 'allow',
    "skipped_fires" INTEGER NOT NULL DEFAULT 0,
    "last_skipped_at" TIMESTAMPTZ(3),
    "last_triggered_at" TIMESTAMPTZ(3),
    "next_fire_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "cron_schedules_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "cron_schedules_overlap_policy_check" CHECK ("overlap_policy" IN ('allow', 'skip', 'buffer_one', 'cancel_previous'))
);

-- The tick's claim: per tenant, its enabled schedules in due order (a loose index scan visits
-- each tenant once, then takes a few of its due rows).
CREATE INDEX "cron_schedules_due_idx" ON "cron_schedules" ("tenant_id", "next_fire_at") WHERE "enabled" AND "next_fire_at" IS NOT NULL;

-- Lists, oldest first, and a sequence's schedules (shown on its page, deleted with it).
CREATE INDEX "cron_schedules_tenant_created_idx" ON "cron_schedules" ("tenant_id", "created_at", "id");
CREATE INDEX "cron_schedules_sequence_idx" ON "cron_schedules" ("tenant_id", "sequence_id");

-- The overlap policy looks up a schedule's still-active runs by metadata.cron_schedule_id. Only
-- rows that carry the key are in the index, so other instances pay nothing for it.
CREATE INDEX "task_instances_cron_schedule_idx" ON "task_instances" ("tenant_id", ("metadata" ->> 'cron_schedule_id')) WHERE "metadata" ? 'cron_schedule_id';
