-- The capped claim walks the tenants that have scheduled work (a loose index scan over tenant_id)
-- and reads at most the cap of due rows of each, in claim order: this index serves both.
CREATE INDEX "task_instances_tenant_claim_idx"
  ON "task_instances" ("tenant_id", "priority" DESC, "next_fire_at")
  WHERE "state" = 'scheduled';

-- A scheduled instance always has a due time (creation sets it to now when none is given).
ALTER TABLE "task_instances"
  ADD CONSTRAINT "task_instances_scheduled_due_check" CHECK ("state" <> 'scheduled' OR "next_fire_at" IS NOT NULL);
