-- The approvals inbox (GET /approvals, the Approvals page) reads a tenant's waiting instances, most
-- recently updated first, a page at a time. A partial index holds only the waiting rows, so a page
-- (and a keyset page deep in the list) is read in order without sorting all of them.
CREATE INDEX "task_instances_waiting_idx"
  ON "task_instances" ("tenant_id", "updated_at" DESC, "id" DESC)
  WHERE "state" = 'waiting';
