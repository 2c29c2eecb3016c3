-- Every engine's cron tick asks each second whether any schedule is due (anyCronDue) before its
-- claim, whose loose scan visits every tenant that has a schedule: one probe of this index
-- answers it, however many tenants have schedules due later.
CREATE INDEX "cron_schedules_next_fire_idx" ON "cron_schedules" ("next_fire_at") WHERE "enabled" AND "next_fire_at" IS NOT NULL;
