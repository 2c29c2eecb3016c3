-- Why a failed instance failed: the block, the error text and the fingerprint failures are
-- grouped by (the handler and the message with ids and numbers replaced), written by the commit
-- that fails the instance and cleared by any later one. The Failed view groups a tenant's failed
-- instances by fingerprint through the index below, which holds failed rows only.
ALTER TABLE "task_instances"
  ADD COLUMN "failed_block" TEXT,
  ADD COLUMN "error_message" TEXT,
  ADD COLUMN "error_fingerprint" TEXT;
CREATE INDEX "task_instances_failure_groups_idx" ON "task_instances" ("tenant_id", "error_fingerprint", "updated_at" DESC) WHERE "state" = 'failed';
