-- Listing and stats read one tenant at a time, newest first. Without this index every tenant
-- would scan the whole table, so a tenant with a long task history would slow the others down.
CREATE INDEX "worker_tasks_tenant_id_created_at_id_idx"
  ON "worker_tasks" ("tenant_id", "created_at" DESC, "id" DESC);

-- The reaper looks for claimed tasks whose last heartbeat is too old. Claimed tasks are few, so
-- the sweep stays cheap however many finished tasks the table keeps.
CREATE INDEX "worker_tasks_claimed_heartbeat_idx"
  ON "worker_tasks" ("heartbeat_at")
  WHERE "state" = 'claimed';

-- The reaper also fails open tasks whose timeout has passed since creation, oldest first.
CREATE INDEX "worker_tasks_open_timeout_idx"
  ON "worker_tasks" ("created_at")
  WHERE "state" IN ('pending', 'claimed') AND "timeout_ms" IS NOT NULL;
