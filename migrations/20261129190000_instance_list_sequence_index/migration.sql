-- The instances page filters by sequence, newest first, in keyset pages. Without this index a
-- filter on a rarely run sequence walks the tenant's whole history to fill one page.
CREATE INDEX "task_instances_tenant_id_sequence_id_created_at_id_idx"
  ON "task_instances" ("tenant_id", "sequence_id", "created_at" DESC, "id" DESC);
