-- The tenant overview reads finished instances by when they finished: completions and failures
-- per minute over the last hour, and the latest failures. Without this index both walk every
-- instance the tenant ever had in that state.
CREATE INDEX "task_instances_tenant_id_state_completed_at_id_idx"
  ON "task_instances" ("tenant_id", "state", "completed_at" DESC, "id" DESC);
